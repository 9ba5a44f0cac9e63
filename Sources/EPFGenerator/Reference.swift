/// Reference tables of the generator: storefronts, genres, device and media types.
package enum Reference {
    /// Storefronts that get `application_popularity_per_genre` rows (indices into `storefronts`).
    static let popularityStorefronts = [0, 1, 2, 4, 7]

    /// One genre of the App Store tree (or the Music tree for collections and songs).
    package struct Genre: Sendable, Equatable {
        /// Apple's genre id.
        package let id: Int
        /// The parent genre id; nil for a root (36 App Store, 34 Music).
        package let parent: Int?
        /// English name.
        package let name: String
    }

    /// The genre tree: 36 App Store with its categories, 6014 Games with 7001... subgenres, 34 Music.
    package static let genres: [Genre] = {
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
    package static let deviceTypes: [(id: Int, name: String)] = [
        (1, "iPhone"), (2, "iPod touch"), (3, "iPad"), (4, "Apple TV"), (5, "Apple Watch"), (6, "Mac"),
        (7, "Apple Vision Pro"), (9, "iPhone 5"), (10, "iPad Pro"),
    ]

    /// `media_type` rows: id and name.
    package static let mediaTypes: [(id: Int, name: String)] = [
        (1, "Music"), (2, "Podcasts"), (3, "Audiobooks"), (4, "TV Shows"), (5, "Music Videos"), (6, "Movies"),
        (7, "iPod Games"), (8, "Mobile Software Applications"), (9, "Ringtones"), (10, "iTunes U"),
        (11, "Books"), (12, "Mac App Store"),
    ]

    /// `artist_type` rows: id, name, primary media type id.
    package static let artistTypes: [(id: Int, name: String, mediaType: Int)] = [
        (1, "Artist", 1), (2, "TV Show", 4), (3, "Studio", 6), (4, "Author", 11), (5, "Podcast Artist", 2),
        (6, "Movie Artist", 6), (7, "Software Artist", 8), (8, "iTunes U Provider", 10),
    ]

    /// US-dollar price tiers in cents; tier 0 is free.
    static let priceTiersCents: [Int] = [0, 99, 199, 299, 399, 499, 599, 699, 799, 999, 1499, 1999, 2999, 4999, 9999]
}
