import EPFFormat
import Foundation

/// One column of a table as it will be stored.
public struct ColumnSpec: Sendable, Equatable {
    /// Column name as in the feed.
    public var name: String
    /// How values are checked and stored.
    public var type: EPFColumnType
    /// The type text the header declared (or the built-in schema's, after a correction).
    public var declared: String

    /// The SQLite column type: INTEGER for ids, integers and booleans; TEXT for everything else (DECIMAL is kept
    /// as exact text, DATETIME as ISO-8601 text).
    public var sqliteType: String {
        switch type {
        case .integer, .boolean: return "INTEGER"
        case .decimal, .text, .datetime: return "TEXT"
        }
    }
}

/// The storage schema of one EPF table: header columns with types corrected where the header is known to lie.
public struct TableSchema: Sendable, Equatable {
    /// Table name.
    public var name: String
    /// Columns in file order.
    public var columns: [ColumnSpec]
    /// Primary key columns (empty when none).
    public var primaryKey: [String]
    /// What was corrected, for warnings.
    public var corrections: [String] = []

    /// True when the key is one integer column, stored as SQLite's rowid alias.
    public var hasIntegerRowidKey: Bool {
        guard primaryKey.count == 1, let column = columns.first(where: { $0.name == primaryKey[0] }) else {
            return false
        }
        return column.type == .integer || column.type == .boolean
    }

    /// Index of a column.
    public func index(of name: String) -> Int? { columns.firstIndex { $0.name == name } }
}

/// The real schemas of the EPF tables (EPF-FORMAT.md section 5), used to correct known bad headers.
public enum KnownSchemas {
    /// Column types of known tables by column name (columns not listed are text).
    static let types: [String: [String: EPFColumnType]] = {
        let ids: Set<String> = [
            "application_id", "artist_id", "collection_id", "song_id", "video_id", "genre_id", "parent_id",
            "storefront_id", "device_type_id", "media_type_id", "artist_type_id", "primary_media_type_id",
            "parental_advisory_id", "collection_type_id", "track_length", "preview_length", "download_size",
            "application_rank", "song_rank", "album_rank", "album_id", "export_date", "translation_type_id",
            "role_id", "volume_number", "track_number",
        ]
        let booleans: Set<String> = ["is_actual_artist", "is_primary", "is_compilation"]
        let dates: Set<String> = ["itunes_release_date", "original_release_date", "availability_date"]
        let decimals: Set<String> = [
            "retail_price", "hq_price", "preorder_price", "sd_price", "hd_price", "lc_rental_price",
            "sd_rental_price", "hd_rental_price",
        ]
        var result: [String: [String: EPFColumnType]] = [:]
        for (table, columns) in KnownSchemas.columns {
            var map: [String: EPFColumnType] = [:]
            for column in columns {
                if ids.contains(column) { map[column] = .integer
                } else if booleans.contains(column) { map[column] = .boolean
                } else if dates.contains(column) { map[column] = .datetime
                } else if decimals.contains(column) { map[column] = .decimal
                } else { map[column] = .text }
            }
            result[table] = map
        }
        return result
    }()

    /// Primary keys of known tables.
    public static let primaryKeys: [String: [String]] = [
        "application": ["application_id"], "application_detail": ["application_id", "language_code"],
        "application_device_type": ["application_id", "device_type_id"], "device_type": ["device_type_id"],
        "artist": ["artist_id"], "artist_application": ["artist_id", "application_id"],
        "artist_type": ["artist_type_id"], "media_type": ["media_type_id"], "genre": ["genre_id"],
        "genre_application": ["genre_id", "application_id"], "storefront": ["storefront_id"],
        "collection": ["collection_id"], "song": ["song_id"], "video": ["video_id"],
        "application_price": ["application_id", "storefront_id"],
        "collection_price": ["collection_id", "storefront_id"], "song_price": ["song_id", "storefront_id"],
        "video_price": ["video_id", "storefront_id"],
        "application_popularity_per_genre": ["storefront_id", "genre_id", "application_id"],
        "artist_collection": ["artist_id", "collection_id"], "artist_song": ["artist_id", "song_id"],
        "artist_video": ["artist_id", "video_id"], "collection_song": ["collection_id", "song_id"],
        "collection_video": ["collection_id", "video_id"], "genre_artist": ["genre_id", "artist_id"],
        "genre_collection": ["genre_id", "collection_id"], "genre_video": ["genre_id", "video_id"],
    ]

    /// Columns of known tables in file order.
    public static let columns: [String: [String]] = {
        var result: [String: [String]] = [
            "application": ["export_date", "application_id", "title", "recommended_age", "artist_name",
                            "seller_name", "company_url", "support_url", "view_url", "artwork_url_large",
                            "artwork_url_small", "itunes_release_date", "copyright", "description", "version",
                            "itunes_version", "download_size"],
            "application_device_type": ["export_date", "application_id", "device_type_id"],
            "device_type": ["export_date", "device_type_id", "name"],
            "artist": ["export_date", "artist_id", "name", "is_actual_artist", "view_url", "artist_type_id"],
            "artist_application": ["export_date", "artist_id", "application_id"],
            "artist_type": ["export_date", "artist_type_id", "name", "primary_media_type_id"],
            "media_type": ["export_date", "media_type_id", "name"],
            "genre": ["export_date", "genre_id", "parent_id", "name"],
            "genre_application": ["export_date", "genre_id", "application_id", "is_primary"],
            "storefront": ["export_date", "storefront_id", "country_code", "name"],
            "collection": ["export_date", "collection_id", "name", "title_version", "search_terms",
                           "parental_advisory_id", "artist_display_name", "view_url", "artwork_url",
                           "original_release_date", "itunes_release_date", "label_studio", "content_provider_name",
                           "copyright", "p_line", "media_type_id", "is_compilation", "collection_type_id"],
            "song": ["export_date", "song_id", "name", "title_version", "search_terms", "parental_advisory_id",
                     "artist_display_name", "collection_display_name", "view_url", "original_release_date",
                     "itunes_release_date", "track_length", "copyright", "p_line", "preview_url", "preview_length"],
            "video": ["export_date", "video_id", "name", "title_version", "search_terms", "parental_advisory_id",
                      "artist_display_name", "collection_display_name", "media_type_id", "view_url", "artwork_url",
                      "original_release_date", "itunes_release_date", "studio_name", "network_name",
                      "content_provider_name", "track_length", "copyright", "p_line", "short_description",
                      "long_description", "episode_production_number"],
            "application_price": ["export_date", "application_id", "retail_price", "currency_code",
                                  "storefront_id"],
            "collection_price": ["export_date", "collection_id", "retail_price", "currency_code", "storefront_id",
                                 "availability_date", "hq_price", "preorder_price"],
            "song_price": ["export_date", "song_id", "retail_price", "currency_code", "storefront_id",
                           "availability_date", "hq_price"],
            "video_price": ["export_date", "video_id", "retail_price", "currency_code", "storefront_id",
                            "availability_date", "sd_price", "hq_price", "lc_rental_price", "sd_rental_price",
                            "hd_rental_price", "hd_price"],
            "application_popularity_per_genre": ["export_date", "storefront_id", "genre_id", "application_id",
                                                 "application_rank"],
        ]
        var detail = ["export_date", "application_id", "language_code", "title", "description", "release_notes",
                      "company_url", "support_url"]
        detail += (1...4).map { "screenshot_url_\($0)" } + (1...4).map { "screenshot_width_height_\($0)" }
        detail += (1...4).map { "ipad_screenshot_url_\($0)" } + (1...4).map { "ipad_screenshot_width_height_\($0)" }
        result["application_detail"] = detail
        for (left, right) in [("artist", "collection"), ("artist", "song"), ("artist", "video"),
                              ("collection", "song"), ("collection", "video"), ("genre", "artist"),
                              ("genre", "collection"), ("genre", "video")] {
            result["\(left)_\(right)"] = ["export_date", "\(left)_id", "\(right)_id"]
        }
        return result
    }()

    /// Builds the storage schema from a header, correcting what the built-in table knows to be wrong:
    /// text-declared columns the real schema types otherwise (the 2021+ collection header), primary keys naming
    /// missing columns (the 2025 genre header), missing or short `#dbTypes`.
    public static func resolve(table: String, header: EPFHeader) -> TableSchema {
        var corrections: [String] = []
        let known = types[table]
        if !header.dbTypes.isEmpty && header.dbTypes.count != header.columns.count {
            corrections.append("#dbTypes lists \(header.dbTypes.count) types for \(header.columns.count) columns")
        }
        var columns: [ColumnSpec] = []
        var relabeled: [String] = []
        for (index, name) in header.columns.enumerated() {
            let declaredText = index < header.dbTypes.count ? header.dbTypes[index] : ""
            var type = declaredText.isEmpty ? (known?[name] ?? guessType(name)) : EPFColumnType(declared: declaredText)
            var declared = declaredText
            if let knownType = known?[name], knownType != type {
                let integers: [EPFColumnType] = [.integer, .boolean]
                let sameStorage = integers.contains(knownType) && integers.contains(type)
                if !sameStorage && type == .text {
                    relabeled.append("\(name) \(declaredText.isEmpty ? "(none)" : declaredText) -> \(knownType)")
                    type = knownType
                    declared = "\(knownType)".uppercased()
                }
            }
            if name == "export_date" { type = .integer }
            columns.append(ColumnSpec(name: name, type: type, declared: declared))
        }
        // Column names SQLite cannot take as they are: empty ones get a position name, repeated ones a suffix.
        var seen = Set<String>()
        var renamed: [String] = []
        for index in columns.indices {
            let original = columns[index].name
            var name = original.isEmpty ? "column_\(index + 1)" : original
            var counter = 2
            while seen.contains(name.lowercased()) {
                name = "\(original.isEmpty ? "column" : original)_\(counter)"
                counter += 1
            }
            seen.insert(name.lowercased())
            if name != original {
                renamed.append("'\(original)' -> \(name)")
                columns[index].name = name
            }
        }
        if !renamed.isEmpty {
            corrections.append("empty or repeated column names renamed: " + renamed.prefix(6).joined(separator: ", "))
        }
        if !relabeled.isEmpty {
            corrections.append("header types corrected from the built-in schema: "
                               + relabeled.prefix(6).joined(separator: ", ")
                               + (relabeled.count > 6 ? " and \(relabeled.count - 6) more" : ""))
        }
        var primaryKey = header.primaryKey
        let names = Set(header.columns)
        let missing = primaryKey.filter { !names.contains($0) }
        if !missing.isEmpty {
            let fallback = primaryKeys[table]?.filter { names.contains($0) } ?? []
            corrections.append("#primaryKey names missing column(s) \(missing.joined(separator: ", ")); using "
                               + (fallback.isEmpty ? "no key" : fallback.joined(separator: ", ")))
            primaryKey = fallback
        } else if primaryKey.isEmpty, let fallback = primaryKeys[table], fallback.allSatisfy(names.contains) {
            corrections.append("no #primaryKey; using the built-in key \(fallback.joined(separator: ", "))")
            primaryKey = fallback
        }
        return TableSchema(name: table, columns: columns, primaryKey: primaryKey, corrections: corrections)
    }

    static func guessType(_ column: String) -> EPFColumnType {
        if column == "export_date" || column.hasSuffix("_id") { return .integer }
        return .text
    }

    /// Secondary indexes lookups need, beyond the primary key: (table, columns).
    public static let secondaryIndexes: [(table: String, columns: [String])] = [
        // Covering: an app's genres, primary first, without visiting the table.
        // The join tables are searched by the item and read for the other id: both in the index (covering).
        ("genre_application", ["application_id", "is_primary", "genre_id"]),
        ("artist_application", ["application_id", "artist_id"]),
        ("application_price", ["application_id"]), ("application_device_type", ["application_id"]),
        ("application_detail", ["application_id"]), ("collection_song", ["song_id", "collection_id"]),
        ("artist_collection", ["collection_id", "artist_id"]), ("artist_song", ["song_id", "artist_id"]),
        ("artist_video", ["video_id", "artist_id"]), ("collection_video", ["video_id", "collection_id"]),
        ("genre_collection", ["collection_id", "genre_id"]), ("genre_video", ["video_id", "genre_id"]),
        ("genre_artist", ["artist_id", "genre_id"]), ("genre", ["parent_id"]),
        ("collection_price", ["collection_id"]), ("song_price", ["song_id"]), ("video_price", ["video_id"]),
        ("application_popularity_per_genre", ["genre_id", "application_rank"]),
        // The match feed, read by Apple's lookup keys (upc, isrc, amg*Id).
        ("collection_match", ["upc"]), ("collection_match", ["amg_album_id"]), ("song_match", ["isrc"]),
        ("artist_match", ["amg_artist_id"]), ("video_match", ["upc"]), ("video_match", ["isrc"]),
        ("video_match", ["amg_video_id"]),
    ]

    /// The secondary indexes for a schema, leaving out those the primary key already serves (same leading
    /// columns).
    public static func indexes(for schema: TableSchema) -> [[String]] {
        let names = Set(schema.columns.map(\.name))
        return secondaryIndexes.filter { $0.table == schema.name }.map(\.columns).filter { columns in
            guard columns.allSatisfy(names.contains) else { return false }
            return Array(schema.primaryKey.prefix(columns.count)) != columns
        }
    }
}
