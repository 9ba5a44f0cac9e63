/// The three feeds the generator writes.
public enum FeedName: String, Sendable, CaseIterable, Codable {
    /// The catalogue: apps, artists, genres, storefronts, collections, songs, videos.
    case itunes
    /// Prices per storefront.
    case pricing
    /// Ranks per storefront and genre.
    case popularity
    /// UPCs, ISRCs and AMG ids (see `MatchIDs`); only with `GeneratorOptions.match`.
    case match
}

/// One table as the generator writes it: feed, columns in file order, declared types, primary key.
public struct TableSchema: Sendable, Equatable {
    /// Table (and file) name, e.g. "application".
    public let name: String
    /// The feed whose directory holds the file.
    public let feed: FeedName
    /// Column names in file order; the first is always `export_date`.
    public let columns: [String]
    /// `#dbTypes:` of each column, as written in a clean feed.
    public let types: [String]
    /// Primary key columns, as written in `#primaryKey:` of a clean feed.
    public let primaryKey: [String]

    init(_ name: String, _ feed: FeedName, key: [String], _ columns: [(String, String)]) {
        self.name = name
        self.feed = feed
        self.columns = ["export_date"] + columns.map(\.0)
        types = ["BIGINT"] + columns.map(\.1)
        primaryKey = key
    }

    /// Positions of the primary key columns in `columns`.
    public var keyIndices: [Int] { primaryKey.compactMap { columns.firstIndex(of: $0) } }

    /// The schema of a table by name; nil when the generator does not write it.
    public static func named(_ name: String) -> TableSchema? { all.first { $0.name == name } }

    private static let text = "VARCHAR(1000)"
    private static let long = "LONGTEXT"
    private static let screenshots: [(String, String)] =
        (1...4).map { ("screenshot_url_\($0)", text) }
        + (1...4).map { ("screenshot_width_height_\($0)", "VARCHAR(20)") }
        + (1...4).map { ("ipad_screenshot_url_\($0)", text) }
        + (1...4).map { ("ipad_screenshot_width_height_\($0)", "VARCHAR(20)") }

    /// Every table, in the order the generator writes them.
    public static let all: [TableSchema] = [
        TableSchema("application", .itunes, key: ["application_id"], [
            ("application_id", "INTEGER"), ("title", text), ("recommended_age", "VARCHAR(20)"),
            ("artist_name", text), ("seller_name", text), ("company_url", text), ("support_url", text),
            ("view_url", text), ("artwork_url_large", text), ("artwork_url_small", text),
            ("itunes_release_date", "DATETIME"), ("copyright", "VARCHAR(4000)"), ("description", long),
            ("version", "VARCHAR(100)"), ("itunes_version", "VARCHAR(100)"), ("download_size", "BIGINT"),
        ]),
        TableSchema("application_detail", .itunes, key: ["application_id", "language_code"], [
            ("application_id", "INTEGER"), ("language_code", "VARCHAR(20)"), ("title", text),
            ("description", long), ("release_notes", long), ("company_url", text), ("support_url", text),
        ] + screenshots),
        TableSchema("application_device_type", .itunes, key: ["application_id", "device_type_id"], [
            ("application_id", "INTEGER"), ("device_type_id", "INTEGER"),
        ]),
        TableSchema("artist", .itunes, key: ["artist_id"], [
            ("artist_id", "INTEGER"), ("name", text), ("is_actual_artist", "BOOLEAN"), ("view_url", text),
            ("artist_type_id", "INTEGER"),
        ]),
        TableSchema("artist_application", .itunes, key: ["artist_id", "application_id"], [
            ("artist_id", "INTEGER"), ("application_id", "INTEGER"),
        ]),
        TableSchema("artist_collection", .itunes, key: ["artist_id", "collection_id"], [
            ("artist_id", "INTEGER"), ("collection_id", "INTEGER"), ("is_primary_artist", "BOOLEAN"),
            ("role_id", "INTEGER"),
        ]),
        TableSchema("artist_song", .itunes, key: ["artist_id", "song_id"], [
            ("artist_id", "INTEGER"), ("song_id", "INTEGER"),
        ]),
        TableSchema("artist_type", .itunes, key: ["artist_type_id"], [
            ("artist_type_id", "INTEGER"), ("name", "VARCHAR(200)"), ("primary_media_type_id", "INTEGER"),
        ]),
        TableSchema("collection", .itunes, key: ["collection_id"], [
            ("collection_id", "INTEGER"), ("name", text), ("title_version", text), ("search_terms", text),
            ("parental_advisory_id", "INTEGER"), ("artist_display_name", text), ("view_url", text),
            ("artwork_url", text), ("original_release_date", "DATETIME"), ("itunes_release_date", "DATETIME"),
            ("label_studio", "VARCHAR(4000)"), ("content_provider_name", "VARCHAR(4000)"),
            ("copyright", "VARCHAR(4000)"), ("p_line", "VARCHAR(4000)"), ("media_type_id", "INTEGER"),
            ("is_compilation", "BOOLEAN"), ("collection_type_id", "INTEGER"),
        ]),
        TableSchema("collection_song", .itunes, key: ["collection_id", "song_id"], [
            ("collection_id", "INTEGER"), ("song_id", "INTEGER"), ("track_number", "INTEGER"),
            ("volume_number", "INTEGER"),
        ]),
        TableSchema("device_type", .itunes, key: ["device_type_id"], [
            ("device_type_id", "INTEGER"), ("name", "VARCHAR(200)"),
        ]),
        TableSchema("genre", .itunes, key: ["genre_id"], [
            ("genre_id", "INTEGER"), ("parent_id", "INTEGER"), ("name", "VARCHAR(200)"),
        ]),
        TableSchema("genre_application", .itunes, key: ["genre_id", "application_id"], [
            ("genre_id", "INTEGER"), ("application_id", "INTEGER"), ("is_primary", "BOOLEAN"),
        ]),
        TableSchema("media_type", .itunes, key: ["media_type_id"], [
            ("media_type_id", "INTEGER"), ("name", "VARCHAR(200)"),
        ]),
        TableSchema("song", .itunes, key: ["song_id"], [
            ("song_id", "INTEGER"), ("name", text), ("title_version", text), ("search_terms", text),
            ("parental_advisory_id", "INTEGER"), ("artist_display_name", text), ("collection_display_name", text),
            ("view_url", text), ("original_release_date", "DATETIME"), ("itunes_release_date", "DATETIME"),
            ("track_length", "INTEGER"), ("copyright", "VARCHAR(4000)"), ("p_line", "VARCHAR(4000)"),
            ("preview_url", text), ("preview_length", "INTEGER"),
        ]),
        TableSchema("storefront", .itunes, key: ["storefront_id"], [
            ("storefront_id", "INTEGER"), ("country_code", "VARCHAR(3)"), ("name", "VARCHAR(200)"),
        ]),
        TableSchema("video", .itunes, key: ["video_id"], [
            ("video_id", "INTEGER"), ("name", text), ("title_version", text), ("search_terms", text),
            ("parental_advisory_id", "INTEGER"), ("artist_display_name", text), ("collection_display_name", text),
            ("media_type_id", "INTEGER"), ("view_url", text), ("artwork_url", text),
            ("original_release_date", "DATETIME"), ("itunes_release_date", "DATETIME"), ("studio_name", text),
            ("network_name", text), ("content_provider_name", "VARCHAR(4000)"), ("track_length", "INTEGER"),
            ("copyright", "VARCHAR(4000)"), ("p_line", "VARCHAR(4000)"), ("short_description", text),
            ("long_description", long), ("episode_production_number", text),
        ]),
        TableSchema("application_price", .pricing, key: ["application_id", "storefront_id"], [
            ("application_id", "INTEGER"), ("retail_price", "DECIMAL(9,3)"), ("currency_code", "VARCHAR(20)"),
            ("storefront_id", "INTEGER"),
        ]),
        TableSchema("application_popularity_per_genre", .popularity,
                    key: ["storefront_id", "genre_id", "application_id"], [
            ("storefront_id", "INTEGER"), ("genre_id", "INTEGER"), ("application_id", "INTEGER"),
            ("application_rank", "INTEGER"),
        ]),
    ] + matchTables

    /// The music tables Apple removed from the EPF in March 2025 (left out of exports made with a scale).
    public static let musicTables: Set<String> = [
        "collection", "artist_collection", "song", "collection_song", "artist_song",
    ]

    /// Tables an incremental export holds: those that change when apps and prices change.
    public static let incrementalTables: Set<String> = [
        "application", "application_detail", "application_device_type", "artist_application", "genre_application",
        "application_price",
    ]
}
