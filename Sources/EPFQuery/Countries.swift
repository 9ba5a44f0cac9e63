/// ISO 3166-1 country codes: alpha-2 (store links, `--country`) and alpha-3 (EPF `storefront.country_code`).
package enum CountryCodes {
    /// Every officially assigned ISO 3166-1 code as "alpha-2 alpha-3", plus Kosovo (XK, user-assigned).
    private static let table = """
    AD AND AE ARE AF AFG AG ATG AI AIA AL ALB AM ARM AO AGO AQ ATA AR ARG AS ASM AT AUT AU AUS AW ABW AX ALA \
    AZ AZE BA BIH BB BRB BD BGD BE BEL BF BFA BG BGR BH BHR BI BDI BJ BEN BL BLM BM BMU BN BRN BO BOL BQ BES \
    BR BRA BS BHS BT BTN BV BVT BW BWA BY BLR BZ BLZ CA CAN CC CCK CD COD CF CAF CG COG CH CHE CI CIV CK COK \
    CL CHL CM CMR CN CHN CO COL CR CRI CU CUB CV CPV CW CUW CX CXR CY CYP CZ CZE DE DEU DJ DJI DK DNK DM DMA \
    DO DOM DZ DZA EC ECU EE EST EG EGY EH ESH ER ERI ES ESP ET ETH FI FIN FJ FJI FK FLK FM FSM FO FRO FR FRA \
    GA GAB GB GBR GD GRD GE GEO GF GUF GG GGY GH GHA GI GIB GL GRL GM GMB GN GIN GP GLP GQ GNQ GR GRC GS SGS \
    GT GTM GU GUM GW GNB GY GUY HK HKG HM HMD HN HND HR HRV HT HTI HU HUN ID IDN IE IRL IL ISR IM IMN IN IND \
    IO IOT IQ IRQ IR IRN IS ISL IT ITA JE JEY JM JAM JO JOR JP JPN KE KEN KG KGZ KH KHM KI KIR KM COM KN KNA \
    KP PRK KR KOR KW KWT KY CYM KZ KAZ LA LAO LB LBN LC LCA LI LIE LK LKA LR LBR LS LSO LT LTU LU LUX LV LVA \
    LY LBY MA MAR MC MCO MD MDA ME MNE MF MAF MG MDG MH MHL MK MKD ML MLI MM MMR MN MNG MO MAC MP MNP MQ MTQ \
    MR MRT MS MSR MT MLT MU MUS MV MDV MW MWI MX MEX MY MYS MZ MOZ NA NAM NC NCL NE NER NF NFK NG NGA NI NIC \
    NL NLD NO NOR NP NPL NR NRU NU NIU NZ NZL OM OMN PA PAN PE PER PF PYF PG PNG PH PHL PK PAK PL POL PM SPM \
    PN PCN PR PRI PS PSE PT PRT PW PLW PY PRY QA QAT RE REU RO ROU RS SRB RU RUS RW RWA SA SAU SB SLB SC SYC \
    SD SDN SE SWE SG SGP SH SHN SI SVN SJ SJM SK SVK SL SLE SM SMR SN SEN SO SOM SR SUR SS SSD ST STP SV SLV \
    SX SXM SY SYR SZ SWZ TC TCA TD TCD TF ATF TG TGO TH THA TJ TJK TK TKL TL TLS TM TKM TN TUN TO TON TR TUR \
    TT TTO TV TUV TW TWN TZ TZA UA UKR UG UGA UM UMI US USA UY URY UZ UZB VA VAT VC VCT VE VEN VG VGB VI VIR \
    VN VNM VU VUT WF WLF WS WSM YE YEM YT MYT ZA ZAF ZM ZMB ZW ZWE XK XKX
    """

    /// Alpha-3 codes seen in feeds that are not the ISO ones, mapped to alpha-2.
    private static let aliases: [String: String] = ["XKS": "xk", "ANT": "an", "ROM": "ro", "TMP": "tl", "ZAR": "cd"]

    private static let pairs: [(String, String)] = {
        let words = table.split(separator: " ")
        return stride(from: 0, to: words.count - 1, by: 2).map { (String(words[$0]), String(words[$0 + 1])) }
    }()

    private static let alpha3ByAlpha2: [String: String] = Dictionary(
        pairs.map { ($0.0.lowercased(), $0.1) }, uniquingKeysWith: { first, _ in first })
    private static let alpha2ByAlpha3: [String: String] = {
        var map = Dictionary(pairs.map { ($0.1, $0.0.lowercased()) }, uniquingKeysWith: { first, _ in first })
        for (code, alpha2) in aliases where map[code] == nil { map[code] = alpha2 }
        return map
    }()

    /// Number of ISO alpha-2 codes known (for tests).
    package static var count: Int { alpha3ByAlpha2.count }

    /// "us" or "US" -> "USA"; nil when the code is not an ISO 3166-1 alpha-2 code.
    package static func alpha3(fromAlpha2 code: String) -> String? {
        alpha3ByAlpha2[code.lowercased()]
    }

    /// "USA" or "usa" -> "us" (lowercase, as in store links); nil when unknown.
    package static func alpha2(fromAlpha3 code: String) -> String? {
        alpha2ByAlpha3[code.uppercased()]
    }

    /// Whether text is a known alpha-2 code, in any case.
    package static func isAlpha2(_ code: String) -> Bool {
        var bytes = code.utf8.makeIterator()
        guard let first = bytes.next(), let second = bytes.next(), bytes.next() == nil else { return false }
        return isAlpha2(first, second)
    }

    /// `isAlpha2` of two bytes, any case, without making a string (request parameters, stored documents).
    package static func isAlpha2(_ first: UInt8, _ second: UInt8) -> Bool {
        guard let row = letterIndex(first), let column = letterIndex(second) else { return false }
        return alpha2Table[row * 26 + column]
    }

    private static func letterIndex(_ byte: UInt8) -> Int? {
        let lower = byte | 0x20
        guard lower >= UInt8(ascii: "a"), lower <= UInt8(ascii: "z") else { return nil }
        return Int(lower - UInt8(ascii: "a"))
    }

    /// Every alpha-2 code as a 26 x 26 table of letter pairs.
    private static let alpha2Table: [Bool] = {
        var table = [Bool](repeating: false, count: 26 * 26)
        for code in alpha3ByAlpha2.keys {
            let bytes = Array(code.utf8)
            guard bytes.count == 2, let row = letterIndex(bytes[0]), let column = letterIndex(bytes[1]) else {
                continue
            }
            table[row * 26 + column] = true
        }
        return table
    }()
}
