import EPFFormat
import Foundation

/// One column of a table as it will be stored.
package struct ColumnSpec: Sendable, Equatable {
    /// Column name as in the feed.
    package var name: String
    /// How values are checked and stored.
    package var type: EPFColumnType
    /// The type text the header declared (or the built-in schema's, after a correction).
    package var declared: String
}

/// The storage schema of one EPF table: header columns with types corrected where the header is known to lie.
package struct TableSchema: Sendable, Equatable {
    /// Table name.
    package var name: String
    /// Columns in file order.
    package var columns: [ColumnSpec]
    /// Primary key columns (empty when none).
    package var primaryKey: [String]
    /// What was corrected, for warnings.
    package var corrections: [String] = []

    /// True when the key is one integer column, stored as SQLite's rowid alias.
    package var hasIntegerRowidKey: Bool {
        guard primaryKey.count == 1, let column = columns.first(where: { $0.name == primaryKey[0] }) else {
            return false
        }
        return column.type == .integer || column.type == .boolean
    }

    /// Index of a column.
    package func index(of name: String) -> Int? { columns.firstIndex { $0.name == name } }
}

/// Builds the storage schema of a table from its header, corrected from the catalogue (`EPFCatalogue`) where the
/// header is known to lie.
package enum KnownSchemas {
    /// Column types of known tables by column name.
    static func knownTypes(_ table: String) -> [String: EPFColumnType]? {
        guard let known = EPFCatalogue.table(named: table), known.correctsHeaders else { return nil }
        var map: [String: EPFColumnType] = [:]
        for (column, declared) in zip(known.columns, known.types) { map[column] = EPFColumnType(declared: declared) }
        return map
    }

    /// The primary key of a known table.
    static func knownKey(_ table: String) -> [String]? {
        guard let known = EPFCatalogue.table(named: table), known.correctsHeaders else { return nil }
        return known.primaryKey
    }

    /// The storage schema of a catalogue table as a clean file of it declares it.
    package static func clean(_ table: EPFTable) -> TableSchema {
        resolve(table: table.name, header: table.cleanHeader)
    }

    /// Builds the storage schema from a header, correcting what the built-in table knows to be wrong:
    /// text-declared columns the real schema types otherwise (the 2021+ collection header), primary keys naming
    /// missing columns (the 2025 genre header), missing or short `#dbTypes`.
    package static func resolve(table: String, header: EPFHeader) -> TableSchema {
        var corrections: [String] = []
        let known = knownTypes(table)
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
            let fallback = knownKey(table)?.filter { names.contains($0) } ?? []
            corrections.append("#primaryKey names missing column(s) \(missing.joined(separator: ", ")); using "
                               + (fallback.isEmpty ? "no key" : fallback.joined(separator: ", ")))
            primaryKey = fallback
        } else if primaryKey.isEmpty, let fallback = knownKey(table), fallback.allSatisfy(names.contains) {
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
    static let secondaryIndexes: [(table: String, columns: [String])] = [
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
        ("free_application_popularity_per_genre", ["genre_id", "application_rank"]),
        ("paid_application_popularity_per_genre", ["genre_id", "application_rank"]),
        ("free_ipad_application_popularity_per_genre", ["genre_id", "application_rank"]),
        ("paid_ipad_application_popularity_per_genre", ["genre_id", "application_rank"]),
        ("song_popularity_per_genre", ["genre_id", "song_rank"]),
        ("album_popularity_per_genre", ["genre_id", "album_rank"]),
        // The match feed, read by Apple's lookup keys (upc, isrc, amg*Id).
        ("collection_match", ["upc"]), ("collection_match", ["amg_album_id"]), ("song_match", ["isrc"]),
        ("artist_match", ["amg_artist_id"]), ("video_match", ["upc"]), ("video_match", ["isrc"]),
        ("video_match", ["amg_video_id"]),
    ]

    /// The secondary indexes for a schema, leaving out those the primary key already serves (same leading
    /// columns).
    package static func indexes(for schema: TableSchema) -> [[String]] {
        let names = Set(schema.columns.map(\.name))
        return secondaryIndexes.filter { $0.table == schema.name }.map(\.columns).filter { columns in
            guard columns.allSatisfy(names.contains) else { return false }
            return Array(schema.primaryKey.prefix(columns.count)) != columns
        }
    }
}
