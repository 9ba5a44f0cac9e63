/// The feeds of an EPF export, each a directory (or archive) of its own.
package enum FeedName: String, Sendable, CaseIterable, Codable {
    /// The catalogue: apps, artists, genres, storefronts, collections, songs, videos.
    case itunes
    /// Prices per storefront.
    case pricing
    /// Ranks per storefront and genre.
    case popularity
    /// UPCs, ISRCs and AMG ids.
    case match
}

/// One known EPF table as Apple writes it: feed, columns in file order with their `#dbTypes:`, primary key
/// (`../shared/EPF-FORMAT.md` section 5). The store corrects lying headers from it, the generator writes it, the
/// test fixtures build their schema from it.
package struct EPFTable: Sendable, Equatable {
    /// Table (and file) name, e.g. "application".
    package let name: String
    /// The feed whose directory holds the file.
    package let feed: FeedName
    /// Column names in file order; the first is always `export_date`.
    package let columns: [String]
    /// `#dbTypes:` of each column, as written in a clean feed.
    package let types: [String]
    /// Primary key columns, as written in `#primaryKey:` of a clean feed.
    package let primaryKey: [String]
    /// Whether the store corrects a header of this table from this definition (a type declared as text, a key
    /// naming a missing column or none). False for the match feed, whose headers are taken as they come: its
    /// definitions are what the generator writes, not checked against Apple's files.
    package let correctsHeaders: Bool

    /// One of v5's four app charts (`free_`, `paid_`, `free_ipad_`, `paid_ipad_application_popularity_per_genre`).
    static func chart(_ name: String) -> EPFTable {
        EPFTable(name, .popularity, key: ["storefront_id", "genre_id", "application_id"], [
            ("storefront_id", "INTEGER"), ("genre_id", "INTEGER"), ("application_id", "BIGINT"),
            ("application_rank", "INTEGER"),
        ])
    }

    /// The app chart tables, v3's one table first, then v5's four (iPhone free and paid, iPad free and paid): the
    /// order in which a reader picks one when it needs a single ranking.
    package static let appCharts = [
        "application_popularity_per_genre", "free_application_popularity_per_genre",
        "paid_application_popularity_per_genre", "free_ipad_application_popularity_per_genre",
        "paid_ipad_application_popularity_per_genre",
    ]

    /// The tables a later layout of the feed ships instead of `table`: v3's one app chart gave way to v5's four.
    /// A database that followed the feed across the change keeps the old table as it last was.
    package static func successors(of table: String) -> [String] {
        table == appCharts[0] ? Array(appCharts.dropFirst()) : []
    }

    init(_ name: String, _ feed: FeedName, key: [String], _ columns: [(String, String)]) {
        self.name = name
        self.feed = feed
        self.columns = ["export_date"] + columns.map(\.0)
        types = ["BIGINT"] + columns.map(\.1)
        primaryKey = key
        correctsHeaders = feed != .match
    }

    /// Positions of the primary key columns in `columns`.
    package var keyIndices: [Int] { primaryKey.compactMap { columns.firstIndex(of: $0) } }

    /// The header a clean full-export file of this table carries.
    package var cleanHeader: EPFHeader {
        EPFHeader(columns: columns, primaryKey: primaryKey, dbTypes: types, exportMode: .full)
    }
}

/// Every EPF table epf knows, one definition each.
package enum EPFCatalogue {
    /// The definition of a known table; nil for a table epf does not know (it is still imported, typed from its
    /// header).
    package static func table(named name: String) -> EPFTable? { byName[name] }

    private static let byName: [String: EPFTable] = Dictionary(tables.map { ($0.name, $0) }) { first, _ in first }

    private static let text = "VARCHAR(1000)"
    private static let long = "LONGTEXT"
    private static let price = "DECIMAL(9,3)"
    private static let screenshots: [(String, String)] =
        (1...4).map { ("screenshot_url_\($0)", text) }
        + (1...4).map { ("screenshot_width_height_\($0)", "VARCHAR(20)") }
        + (1...4).map { ("ipad_screenshot_url_\($0)", text) }
        + (1...4).map { ("ipad_screenshot_width_height_\($0)", "VARCHAR(20)") }

    /// Every known table.
    package static let tables: [EPFTable] = [
        EPFTable("application", .itunes, key: ["application_id"], [
            ("application_id", "INTEGER"), ("title", text), ("recommended_age", "VARCHAR(20)"),
            ("artist_name", text), ("seller_name", text), ("company_url", text), ("support_url", text),
            ("view_url", text), ("artwork_url_large", text), ("artwork_url_small", text),
            ("itunes_release_date", "DATETIME"), ("copyright", "VARCHAR(4000)"), ("description", long),
            ("version", "VARCHAR(100)"), ("itunes_version", "VARCHAR(100)"), ("download_size", "BIGINT"),
        ]),
        EPFTable("application_detail", .itunes, key: ["application_id", "language_code"], [
            ("application_id", "INTEGER"), ("language_code", "VARCHAR(20)"), ("title", text),
            ("description", long), ("release_notes", long), ("company_url", text), ("support_url", text),
        ] + screenshots),
        EPFTable("application_device_type", .itunes, key: ["application_id", "device_type_id"], [
            ("application_id", "INTEGER"), ("device_type_id", "INTEGER"),
        ]),
        EPFTable("artist", .itunes, key: ["artist_id"], [
            ("artist_id", "INTEGER"), ("name", text), ("is_actual_artist", "BOOLEAN"), ("view_url", text),
            ("artist_type_id", "INTEGER"),
        ]),
        EPFTable("artist_application", .itunes, key: ["artist_id", "application_id"], [
            ("artist_id", "INTEGER"), ("application_id", "INTEGER"),
        ]),
        EPFTable("artist_collection", .itunes, key: ["artist_id", "collection_id"], [
            ("artist_id", "INTEGER"), ("collection_id", "INTEGER"), ("is_primary_artist", "BOOLEAN"),
            ("role_id", "INTEGER"),
        ]),
        EPFTable("artist_song", .itunes, key: ["artist_id", "song_id"], [
            ("artist_id", "INTEGER"), ("song_id", "INTEGER"),
        ]),
        EPFTable("artist_type", .itunes, key: ["artist_type_id"], [
            ("artist_type_id", "INTEGER"), ("name", "VARCHAR(200)"), ("primary_media_type_id", "INTEGER"),
        ]),
        EPFTable("collection", .itunes, key: ["collection_id"], [
            ("collection_id", "INTEGER"), ("name", text), ("title_version", text), ("search_terms", text),
            ("parental_advisory_id", "INTEGER"), ("artist_display_name", text), ("view_url", text),
            ("artwork_url", text), ("original_release_date", "DATETIME"), ("itunes_release_date", "DATETIME"),
            ("label_studio", "VARCHAR(4000)"), ("content_provider_name", "VARCHAR(4000)"),
            ("copyright", "VARCHAR(4000)"), ("p_line", "VARCHAR(4000)"), ("media_type_id", "INTEGER"),
            ("is_compilation", "BOOLEAN"), ("collection_type_id", "INTEGER"),
        ]),
        EPFTable("collection_song", .itunes, key: ["collection_id", "song_id"], [
            ("collection_id", "INTEGER"), ("song_id", "INTEGER"), ("track_number", "INTEGER"),
            ("volume_number", "INTEGER"),
        ]),
        EPFTable("device_type", .itunes, key: ["device_type_id"], [
            ("device_type_id", "INTEGER"), ("name", "VARCHAR(200)"),
        ]),
        EPFTable("genre", .itunes, key: ["genre_id"], [
            ("genre_id", "INTEGER"), ("parent_id", "INTEGER"), ("name", "VARCHAR(200)"),
        ]),
        EPFTable("genre_application", .itunes, key: ["genre_id", "application_id"], [
            ("genre_id", "INTEGER"), ("application_id", "INTEGER"), ("is_primary", "BOOLEAN"),
        ]),
        EPFTable("media_type", .itunes, key: ["media_type_id"], [
            ("media_type_id", "INTEGER"), ("name", "VARCHAR(200)"),
        ]),
        EPFTable("song", .itunes, key: ["song_id"], [
            ("song_id", "INTEGER"), ("name", text), ("title_version", text), ("search_terms", text),
            ("parental_advisory_id", "INTEGER"), ("artist_display_name", text), ("collection_display_name", text),
            ("view_url", text), ("original_release_date", "DATETIME"), ("itunes_release_date", "DATETIME"),
            ("track_length", "INTEGER"), ("copyright", "VARCHAR(4000)"), ("p_line", "VARCHAR(4000)"),
            ("preview_url", text), ("preview_length", "INTEGER"),
        ]),
        EPFTable("storefront", .itunes, key: ["storefront_id"], [
            ("storefront_id", "INTEGER"), ("country_code", "VARCHAR(3)"), ("name", "VARCHAR(200)"),
        ]),
        EPFTable("video", .itunes, key: ["video_id"], [
            ("video_id", "INTEGER"), ("name", text), ("title_version", text), ("search_terms", text),
            ("parental_advisory_id", "INTEGER"), ("artist_display_name", text), ("collection_display_name", text),
            ("media_type_id", "INTEGER"), ("view_url", text), ("artwork_url", text),
            ("original_release_date", "DATETIME"), ("itunes_release_date", "DATETIME"), ("studio_name", text),
            ("network_name", text), ("content_provider_name", "VARCHAR(4000)"), ("track_length", "INTEGER"),
            ("copyright", "VARCHAR(4000)"), ("p_line", "VARCHAR(4000)"), ("short_description", text),
            ("long_description", long), ("episode_production_number", text),
        ]),
        EPFTable("application_price", .pricing, key: ["application_id", "storefront_id"], [
            ("application_id", "INTEGER"), ("retail_price", price), ("currency_code", "VARCHAR(20)"),
            ("storefront_id", "INTEGER"),
        ]),
        EPFTable("application_popularity_per_genre", .popularity,
                    key: ["storefront_id", "genre_id", "application_id"], [
            ("storefront_id", "INTEGER"), ("genre_id", "INTEGER"), ("application_id", "INTEGER"),
            ("application_rank", "INTEGER"),
        ]),
        // v5 (since 2023) splits the apps' chart into four, with the real 2025 headers: BIGINT application ids.
        EPFTable.chart("free_application_popularity_per_genre"),
        EPFTable.chart("paid_application_popularity_per_genre"),
        EPFTable.chart("free_ipad_application_popularity_per_genre"),
        EPFTable.chart("paid_ipad_application_popularity_per_genre"),
        // Music charts of older archives (music left the EPF on 2025-03-17).
        EPFTable("song_popularity_per_genre", .popularity, key: ["storefront_id", "genre_id", "song_id"], [
            ("storefront_id", "INTEGER"), ("genre_id", "INTEGER"), ("song_id", "INTEGER"), ("song_rank", "INTEGER"),
        ]),
        EPFTable("album_popularity_per_genre", .popularity, key: ["storefront_id", "genre_id", "album_id"], [
            ("storefront_id", "INTEGER"), ("genre_id", "INTEGER"), ("album_id", "INTEGER"), ("album_rank", "INTEGER"),
        ]),
        // v5's itunes feed: facts about the export as key/value text.
        EPFTable("key_value", .itunes, key: ["key_"], [("key_", "VARCHAR(100)"), ("value_", "VARCHAR(100)")]),
        EPFTable("artist_match", .match, key: ["artist_id"], [
            ("artist_id", "INTEGER"), ("amg_artist_id", "INTEGER"),
        ]),
        EPFTable("collection_match", .match, key: ["collection_id"], [
            ("collection_id", "INTEGER"), ("upc", "VARCHAR(30)"), ("grid", "VARCHAR(30)"), ("amg_album_id", "INTEGER"),
        ]),
        EPFTable("song_match", .match, key: ["song_id"], [
            ("song_id", "INTEGER"), ("isrc", "VARCHAR(20)"), ("amg_track_id", "INTEGER"),
        ]),
        EPFTable("video_match", .match, key: ["video_id"], [
            ("video_id", "INTEGER"), ("upc", "VARCHAR(30)"), ("isrc", "VARCHAR(20)"), ("amg_video_id", "INTEGER"),
        ]),
        EPFTable("collection_price", .pricing, key: ["collection_id", "storefront_id"], [
            ("collection_id", "INTEGER"), ("retail_price", price), ("currency_code", "VARCHAR(20)"),
            ("storefront_id", "INTEGER"), ("availability_date", "DATETIME"), ("hq_price", price),
            ("preorder_price", price),
        ]),
        EPFTable("song_price", .pricing, key: ["song_id", "storefront_id"], [
            ("song_id", "INTEGER"), ("retail_price", price), ("currency_code", "VARCHAR(20)"),
            ("storefront_id", "INTEGER"), ("availability_date", "DATETIME"), ("hq_price", price),
        ]),
        EPFTable("video_price", .pricing, key: ["video_id", "storefront_id"], [
            ("video_id", "INTEGER"), ("retail_price", price), ("currency_code", "VARCHAR(20)"),
            ("storefront_id", "INTEGER"), ("availability_date", "DATETIME"), ("sd_price", price),
            ("hq_price", price), ("lc_rental_price", price), ("sd_rental_price", price),
            ("hd_rental_price", price), ("hd_price", price),
        ]),
    ] + [("artist", "video"), ("collection", "video"), ("genre", "artist"), ("genre", "collection"),
         ("genre", "video")].map { left, right in
        EPFTable("\(left)_\(right)", .itunes, key: ["\(left)_id", "\(right)_id"], [
            ("\(left)_id", "INTEGER"), ("\(right)_id", "INTEGER"),
        ])
    }
}
