/// Apple's App Store storefronts with their real ids, as EPF's `storefront` table names them: the one list of
/// storefront ids and codes in epf. The importer resolves `--storefronts us,gbr` with it; the generator writes its
/// feeds from it (and reads the approximate exchange rates and price steps, which only it uses).
package enum AppleStorefronts {
    /// One storefront.
    package struct Entry: Sendable, Equatable {
        /// Apple's storefront id, e.g. 143441 for the United States.
        package let id: Int
        /// ISO 3166-1 alpha-3 code, as `storefront.country_code` holds it (Kosovo is `XKS`).
        package let countryCode: String
        /// Lower-case ISO 3166-1 alpha-2 code, as store links use it.
        package let linkCode: String
        /// ISO 4217 currency of the storefront's prices.
        package let currency: String
        /// English name.
        package let name: String
    }

    /// Every storefront in the tables below, the primary ones first.
    package static let all: [Entry] = (primaryTable + "\n" + moreTable).split(separator: "\n").compactMap { line in
        let parts = line.split(separator: " ", maxSplits: 6).map(String.init)
        guard parts.count == 7, let id = Int(parts[0]) else { return nil }
        return Entry(id: id, countryCode: parts[1], linkCode: parts[2], currency: parts[3], name: parts[6])
    }

    private static let idsByCode: [String: Int] = {
        var map: [String: Int] = [:]
        for entry in all {
            map[entry.countryCode.lowercased()] = entry.id
            map[entry.linkCode] = entry.id
        }
        return map
    }()

    private static let entriesByID: [Int: Entry] = Dictionary(all.map { ($0.id, $0) }, uniquingKeysWith: { $1 })

    /// The storefront with that id, nil when it is not in the list.
    package static func entry(id: Int) -> Entry? { entriesByID[id] }

    /// The storefront id of an ISO 3166-1 alpha-2 or alpha-3 code, in any case; nil when no storefront has it.
    package static func id(forCountryCode code: String) -> Int? { idsByCode[code.lowercased()] }

    /// id, ISO-3, link code, ISO-4217 currency, units per USD, whole-number price step (0: x.99 prices), name.
    package static let primaryTable = """
        143441 USA us USD 1 0 United States
        143444 GBR gb GBP 0.79 0 United Kingdom
        143443 DEU de EUR 0.93 0 Germany
        143442 FRA fr EUR 0.93 0 France
        143462 JPN jp JPY 150 10 Japan
        143455 CAN ca CAD 1.37 0 Canada
        143460 AUS au AUD 1.52 0 Australia
        143465 CHN cn CNY 7.2 1 China
        143466 KOR kr KRW 1350 100 Korea, Republic of
        143450 ITA it EUR 0.93 0 Italy
        143454 ESP es EUR 0.93 0 Spain
        143469 RUS ru RUB 90 1 Russia
        143503 BRA br BRL 5 0 Brazil
        143468 MEX mx MXN 17 1 Mexico
        143467 IND in INR 83 1 India
        143452 NLD nl EUR 0.93 0 Netherlands
        143456 SWE se SEK 10.5 1 Sweden
        143457 NOR no NOK 10.6 1 Norway
        143458 DNK dk DKK 6.9 1 Denmark
        143459 CHE ch CHF 0.88 0 Switzerland
        143445 AUT at EUR 0.93 0 Austria
        143446 BEL be EUR 0.93 0 Belgium
        143447 FIN fi EUR 0.93 0 Finland
        143448 GRC gr EUR 0.93 0 Greece
        143449 IRL ie EUR 0.93 0 Ireland
        143451 LUX lu EUR 0.93 0 Luxembourg
        143453 PRT pt EUR 0.93 0 Portugal
        143461 NZL nz NZD 1.65 0 New Zealand
        143463 HKG hk HKD 7.8 1 Hong Kong
        143464 SGP sg SGD 1.34 0 Singapore
        143470 TWN tw TWD 32 10 Taiwan
        143471 VNM vn VND 24500 1000 Vietnam
        143472 ZAF za ZAR 18.5 1 South Africa
        143473 MYS my MYR 4.7 0 Malaysia
        143474 PHL ph PHP 56 1 Philippines
        143475 THA th THB 36 1 Thailand
        143476 IDN id IDR 15600 1000 Indonesia
        143477 PAK pk PKR 280 10 Pakistan
        143478 POL pl PLN 4 0 Poland
        143479 SAU sa SAR 3.75 0 Saudi Arabia
        143480 TUR tr TRY 32 1 Turkey
        143481 ARE ae AED 3.67 0 United Arab Emirates
        143482 HUN hu HUF 360 10 Hungary
        143483 CHL cl CLP 950 10 Chile
        143489 CZE cz CZK 23 1 Czech Republic
        143491 ISR il ILS 3.7 0 Israel
        143492 UKR ua UAH 41 1 Ukraine
        143487 ROU ro RON 4.6 0 Romania
        143501 COL co COP 3900 100 Colombia
        143505 ARG ar ARS 900 10 Argentina
        143507 PER pe PEN 3.7 0 Peru
        143516 EGY eg EGP 48 1 Egypt
        143517 KAZ kz KZT 470 10 Kazakhstan
        143561 NGA ng NGN 1500 10 Nigeria
        143498 QAT qa QAR 3.64 0 Qatar
        143493 KWT kw KWD 0.31 0 Kuwait
        143494 HRV hr EUR 0.93 0 Croatia
        143526 BGR bg BGN 1.8 0 Bulgaria
        143558 ISL is ISK 138 10 Iceland
        143518 EST ee EUR 0.93 0 Estonia
        """

    /// The other storefronts, same columns. Apple prices most of them in US dollars (euros in the euro area).
    /// Kosovo is `XKS`, the code feeds use (not ISO).
    package static let moreTable = """
        143484 NPL np USD 1 0 Nepal
        143485 PAN pa USD 1 0 Panama
        143486 LKA lk USD 1 0 Sri Lanka
        143488 MDV mv USD 1 0 Maldives
        143495 CRI cr USD 1 0 Costa Rica
        143496 SVK sk EUR 0.93 0 Slovakia
        143497 LBN lb USD 1 0 Lebanon
        143499 SVN si EUR 0.93 0 Slovenia
        143500 SRB rs USD 1 0 Serbia
        143502 VEN ve USD 1 0 Venezuela
        143504 GTM gt USD 1 0 Guatemala
        143506 SLV sv USD 1 0 El Salvador
        143508 DOM do USD 1 0 Dominican Republic
        143509 ECU ec USD 1 0 Ecuador
        143510 HND hn USD 1 0 Honduras
        143511 JAM jm USD 1 0 Jamaica
        143512 NIC ni USD 1 0 Nicaragua
        143513 PRY py USD 1 0 Paraguay
        143514 URY uy USD 1 0 Uruguay
        143515 MAC mo USD 1 0 Macao
        143519 LVA lv EUR 0.93 0 Latvia
        143520 LTU lt EUR 0.93 0 Lithuania
        143521 MLT mt EUR 0.93 0 Malta
        143523 MDA md USD 1 0 Moldova
        143524 ARM am USD 1 0 Armenia
        143525 BWA bw USD 1 0 Botswana
        143527 CIV ci USD 1 0 Côte d'Ivoire
        143528 JOR jo USD 1 0 Jordan
        143529 KEN ke USD 1 0 Kenya
        143530 MKD mk USD 1 0 North Macedonia
        143531 MDG mg USD 1 0 Madagascar
        143532 MLI ml USD 1 0 Mali
        143533 MUS mu USD 1 0 Mauritius
        143534 NER ne USD 1 0 Niger
        143535 SEN sn USD 1 0 Senegal
        143536 TUN tn USD 1 0 Tunisia
        143537 UGA ug USD 1 0 Uganda
        143538 AIA ai USD 1 0 Anguilla
        143539 BHS bs USD 1 0 Bahamas
        143540 ATG ag USD 1 0 Antigua and Barbuda
        143541 BRB bb USD 1 0 Barbados
        143542 BMU bm USD 1 0 Bermuda
        143543 VGB vg USD 1 0 British Virgin Islands
        143544 CYM ky USD 1 0 Cayman Islands
        143545 DMA dm USD 1 0 Dominica
        143546 GRD gd USD 1 0 Grenada
        143547 MSR ms USD 1 0 Montserrat
        143548 KNA kn USD 1 0 St. Kitts and Nevis
        143549 LCA lc USD 1 0 St. Lucia
        143550 VCT vc USD 1 0 St. Vincent and the Grenadines
        143551 TTO tt USD 1 0 Trinidad and Tobago
        143552 TCA tc USD 1 0 Turks and Caicos
        143553 GUY gy USD 1 0 Guyana
        143554 SUR sr USD 1 0 Suriname
        143555 BLZ bz USD 1 0 Belize
        143556 BOL bo USD 1 0 Bolivia
        143557 CYP cy EUR 0.93 0 Cyprus
        143559 BHR bh USD 1 0 Bahrain
        143560 BRN bn USD 1 0 Brunei
        143562 OMN om USD 1 0 Oman
        143563 DZA dz USD 1 0 Algeria
        143564 AGO ao USD 1 0 Angola
        143565 BLR by USD 1 0 Belarus
        143566 UZB uz USD 1 0 Uzbekistan
        143567 LBY ly USD 1 0 Libya
        143568 AZE az USD 1 0 Azerbaijan
        143570 MMR mm USD 1 0 Myanmar
        143571 YEM ye USD 1 0 Yemen
        143572 TZA tz TZS 2600 100 Tanzania
        143573 GHA gh USD 1 0 Ghana
        143574 CMR cm USD 1 0 Cameroon
        143575 ALB al USD 1 0 Albania
        143576 BEN bj USD 1 0 Benin
        143577 BTN bt USD 1 0 Bhutan
        143578 BFA bf USD 1 0 Burkina Faso
        143579 KHM kh USD 1 0 Cambodia
        143580 CPV cv USD 1 0 Cape Verde
        143581 TCD td USD 1 0 Chad
        143582 COG cg USD 1 0 Congo
        143583 FJI fj USD 1 0 Fiji
        143584 GMB gm USD 1 0 Gambia
        143585 GNB gw USD 1 0 Guinea-Bissau
        143586 KGZ kg USD 1 0 Kyrgyzstan
        143587 LAO la USD 1 0 Laos
        143588 LBR lr USD 1 0 Liberia
        143589 MWI mw USD 1 0 Malawi
        143590 MRT mr USD 1 0 Mauritania
        143591 FSM fm USD 1 0 Micronesia
        143592 MNG mn USD 1 0 Mongolia
        143593 MOZ mz USD 1 0 Mozambique
        143594 NAM na USD 1 0 Namibia
        143595 PLW pw USD 1 0 Palau
        143597 PNG pg USD 1 0 Papua New Guinea
        143598 STP st USD 1 0 São Tomé and Príncipe
        143599 SYC sc USD 1 0 Seychelles
        143600 SLE sl USD 1 0 Sierra Leone
        143601 SLB sb USD 1 0 Solomon Islands
        143602 SWZ sz USD 1 0 Eswatini
        143603 TJK tj USD 1 0 Tajikistan
        143604 TKM tm USD 1 0 Turkmenistan
        143605 ZWE zw USD 1 0 Zimbabwe
        143606 NRU nr USD 1 0 Nauru
        143608 TON to USD 1 0 Tonga
        143609 VUT vu USD 1 0 Vanuatu
        143610 AFG af USD 1 0 Afghanistan
        143612 BIH ba USD 1 0 Bosnia and Herzegovina
        143613 COD cd USD 1 0 Congo, Democratic Republic of the
        143614 GAB ga USD 1 0 Gabon
        143615 GEO ge USD 1 0 Georgia
        143617 IRQ iq USD 1 0 Iraq
        143619 MNE me EUR 0.93 0 Montenegro
        143620 MAR ma USD 1 0 Morocco
        143621 RWA rw USD 1 0 Rwanda
        143622 ZMB zm USD 1 0 Zambia
        143624 XKS xk EUR 0.93 0 Kosovo
        """
}
