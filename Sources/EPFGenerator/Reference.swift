/// One App Store storefront with its real Apple storefront id, ISO codes and currency.
public struct StorefrontInfo: Sendable, Equatable {
    /// Apple's storefront id, e.g. 143441 for the United States.
    public let id: Int
    /// ISO 3166-1 alpha-3 country code, as EPF's `storefront.country_code` holds it.
    public let countryCode: String
    /// Lower-case ISO 3166-1 alpha-2 code, as store links use it (`/us/app/...`).
    public let linkCode: String
    /// English country name.
    public let name: String
    /// ISO 4217 currency code of the prices in this storefront.
    public let currency: String
    /// Approximate units of `currency` per US dollar, used to derive price tiers.
    let rate: Double
    /// Prices are whole numbers rounded to this step (JPY 10, KRW 100 ...); 0 for cents-style x.99 prices.
    let wholeStep: Int
}

/// Reference tables of the generator: storefronts, genres, device and media types.
public enum Reference {
    /// Real storefronts, United States first. `application_price` uses the first entries most.
    public static let storefronts: [StorefrontInfo] = storefrontTable.split(separator: "\n").compactMap { line in
        let parts = line.split(separator: " ", maxSplits: 6).map(String.init)
        guard parts.count == 7, let id = Int(parts[0]), let rate = Double(parts[4]), let step = Int(parts[5]) else {
            return nil
        }
        return StorefrontInfo(id: id, countryCode: parts[1], linkCode: parts[2], name: parts[6], currency: parts[3],
                              rate: rate, wholeStep: step)
    }

    /// id, ISO-3, link code, ISO-4217 currency, units per USD, whole-number price step (0: x.99 prices), name.
    private static let storefrontTable = """
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

    /// Storefronts that get `application_popularity_per_genre` rows (indices into `storefronts`).
    static let popularityStorefronts = [0, 1, 2, 4, 7]

    /// One genre of the App Store tree (or the Music tree for collections and songs).
    public struct Genre: Sendable, Equatable {
        /// Apple's genre id.
        public let id: Int
        /// The parent genre id; nil for a root (36 App Store, 34 Music).
        public let parent: Int?
        /// English name.
        public let name: String
    }

    /// The genre tree: 36 App Store with its categories, 6014 Games with 7001... subgenres, 34 Music.
    public static let genres: [Genre] = {
        var list: [Genre] = [Genre(id: 36, parent: nil, name: "App Store")]
        let apps: [(Int, String)] = [
            (6000, "Business"), (6001, "Weather"), (6002, "Utilities"), (6003, "Travel"), (6004, "Sports"),
            (6005, "Social Networking"), (6006, "Reference"), (6007, "Productivity"), (6008, "Photo & Video"),
            (6009, "News"), (6010, "Navigation"), (6011, "Music"), (6012, "Lifestyle"),
            (6013, "Health & Fitness"), (6014, "Games"), (6015, "Finance"), (6016, "Entertainment"),
            (6017, "Education"), (6018, "Books"), (6020, "Medical"), (6021, "Magazines & Newspapers"),
            (6022, "Catalogs"), (6023, "Food & Drink"), (6024, "Shopping"), (6025, "Stickers"),
            (6026, "Developer Tools"), (6027, "Graphics & Design"),
        ]
        list += apps.map { Genre(id: $0.0, parent: 36, name: $0.1) }
        let games: [(Int, String)] = [
            (7001, "Action"), (7002, "Adventure"), (7003, "Casual"), (7004, "Board"), (7005, "Card"),
            (7006, "Casino"), (7007, "Dice"), (7008, "Educational"), (7009, "Family"), (7011, "Music"),
            (7012, "Puzzle"), (7013, "Racing"), (7014, "Role Playing"), (7015, "Simulation"), (7016, "Sports"),
            (7017, "Strategy"), (7018, "Trivia"), (7019, "Word"),
        ]
        list += games.map { Genre(id: $0.0, parent: 6014, name: $0.1) }
        list.append(Genre(id: 34, parent: nil, name: "Music"))
        let music: [(Int, String)] = [
            (2, "Blues"), (5, "Classical"), (6, "Country"), (7, "Electronic"), (11, "Jazz"), (12, "Latino"),
            (14, "Pop"), (15, "R&B/Soul"), (18, "Hip-Hop/Rap"), (20, "Alternative"), (21, "Rock"),
            (27, "J-Pop"), (51, "K-Pop"),
        ]
        list += music.map { Genre(id: $0.0, parent: 34, name: $0.1) }
        return list
    }()

    /// App categories an app can have as primary genre (children of 36).
    static let appCategories: [Int] = genres.filter { $0.parent == 36 }.map(\.id)
    /// Games subgenres (children of 6014).
    static let gameSubgenres: [Int] = genres.filter { $0.parent == 6014 }.map(\.id)

    /// `device_type` rows: id and name.
    public static let deviceTypes: [(id: Int, name: String)] = [
        (1, "iPhone"), (2, "iPod touch"), (3, "iPad"), (4, "Apple TV"), (5, "Apple Watch"), (6, "Mac"),
        (7, "Apple Vision Pro"), (9, "iPhone 5"), (10, "iPad Pro"),
    ]

    /// `media_type` rows: id and name.
    public static let mediaTypes: [(id: Int, name: String)] = [
        (1, "Music"), (2, "Podcasts"), (3, "Audiobooks"), (4, "TV Shows"), (5, "Music Videos"), (6, "Movies"),
        (7, "iPod Games"), (8, "Mobile Software Applications"), (9, "Ringtones"), (10, "iTunes U"),
        (11, "Books"), (12, "Mac App Store"),
    ]

    /// `artist_type` rows: id, name, primary media type id.
    public static let artistTypes: [(id: Int, name: String, mediaType: Int)] = [
        (1, "Artist", 1), (2, "TV Show", 4), (3, "Studio", 6), (4, "Author", 11), (5, "Podcast Artist", 2),
        (6, "Movie Artist", 6), (7, "Software Artist", 8), (8, "iTunes U Provider", 10),
    ]

    /// US-dollar price tiers in cents; tier 0 is free.
    static let priceTiersCents: [Int] = [0, 99, 199, 299, 399, 499, 599, 699, 799, 999, 1499, 1999, 2999, 4999, 9999]
}
