import EPFFormat

/// The tables the generator writes, in the order it writes them. Their columns, types and keys are the
/// catalogue's (`EPFCatalogue`).
package enum GeneratedTables {
    /// Every table the generator writes, in order.
    package static let all: [EPFTable] = [
        "application", "application_detail", "application_device_type", "artist", "artist_application",
        "artist_collection", "artist_song", "artist_type", "collection", "collection_song", "device_type", "genre",
        "genre_application", "media_type", "song", "storefront", "video", "application_price",
        "application_popularity_per_genre", "free_application_popularity_per_genre",
        "paid_application_popularity_per_genre", "free_ipad_application_popularity_per_genre",
        "paid_ipad_application_popularity_per_genre", "key_value", "artist_match", "collection_match", "song_match",
        "video_match",
    ].compactMap(EPFCatalogue.table(named:))

    /// The tables only a v5 export has: its four app charts and `key_value`; v3 has one chart table instead.
    package static let v5Only: Set<String> = [
        "free_application_popularity_per_genre", "paid_application_popularity_per_genre",
        "free_ipad_application_popularity_per_genre", "paid_ipad_application_popularity_per_genre", "key_value",
    ]

    /// A table the generator writes, by name; nil for any other.
    package static func named(_ name: String) -> EPFTable? { all.first { $0.name == name } }

    /// The music tables Apple removed from the EPF in March 2025 (left out of exports made with a scale).
    package static let musicTables: Set<String> = [
        "collection", "artist_collection", "song", "collection_song", "artist_song",
    ]

    /// Tables every export holds, incrementals included, each a FULL snapshot of its day: the app charts (Apple
    /// ships popularity daily; v3 in each incremental folder's `popularity<date>`, v5 as FULL tables).
    package static let dailyTables: Set<String> = Set(EPFTable.appCharts)

    /// Tables an incremental export holds besides the daily ones: those that change when apps and prices change.
    package static let incrementalTables: Set<String> = [
        "application", "application_detail", "application_device_type", "artist_application", "genre_application",
        "application_price",
    ]
}
