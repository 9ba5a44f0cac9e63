import JSONText

/// What one request to Apple's `/lookup` asks for (see `AppleQueries.lookup`). Values are checked by the
/// caller: ids are digits, the country an alpha-2 code, the language normalized, the limit 1 ... 200.
package struct AppleLookupRequest: Sendable {
    /// The kinds of key Apple's lookup takes, by parameter name.
    package enum Key: String, Sendable, CaseIterable {
        case id, upc, isrc, amgArtistId, amgAlbumId, amgVideoId

        /// The key a query parameter names, nil for the other parameters. `id`, by far the most common, is one
        /// comparison; names that cannot be keys (`country`, `entity`, `limit`, ...) are passed over on their first
        /// byte, without the string switch of `init(rawValue:)`.
        package init?(parameter name: String) {
            if name == "id" {
                self = .id
                return
            }
            guard let first = name.utf8.first,
                  first == UInt8(ascii: "u") || first == UInt8(ascii: "i") || first == UInt8(ascii: "a") else {
                return nil
            }
            self.init(rawValue: name)
        }
    }

    /// The keys in request order, each with one value (a comma-separated parameter gives several).
    package var keys: [(key: Key, value: String)] = []
    /// Related items to list after each item found (an artist's apps, a collection's songs, ...).
    package var entity: AppleEntity?
    /// Related items per item found.
    package var limit = 50
    /// `sort=recent`: related items newest first.
    package var recent = false
    /// Storefront (lowercase alpha-2); nil is Apple's default, the United States.
    package var country: String?
    /// Language of titles and descriptions (`ja`, `ja_jp`); nil is English.
    package var language: String?

    /// An empty request.
    package init() {}
}

/// What one request to Apple's `/search` asks for (see `AppleQueries.search`).
package struct AppleSearchRequest: Sendable {
    /// The search term as sent.
    package var term: String
    /// The kinds `media` allows; nil for every kind.
    package var kinds: Set<EntityKind>?
    /// The entity asked for, narrowing `kinds` further (and video kinds).
    package var entity: AppleEntity?
    /// `title` or `names`: the index column `attribute` names; nil searches both.
    package var column: String?
    /// Storefront (lowercase alpha-2); nil is the United States.
    package var country: String?
    /// Language of titles and descriptions; nil is English.
    package var language: String?
    /// `explicit=No` sets this to false: items rated explicit are left out.
    package var explicit = true
    /// Results skipped before the first one returned.
    package var offset = 0
    /// Results returned at most.
    package var limit = 50

    /// A search for `term` with Apple's defaults.
    package init(term: String) {
        self.term = term
    }
}

/// Why an Apple-style request cannot be answered from this database.
package enum AppleLookupError: Error, CustomStringConvertible, Sendable {
    /// A `upc`, `isrc` or `amg*Id` lookup on a database without the match feed's table for it.
    case matchFeedMissing(key: String, tables: [String])

    package var description: String {
        switch self {
        case .matchFeedMissing(let key, let tables):
            return "the match feed is not loaded: \(key) lookups read its " + tables.joined(separator: " or ")
                + " table; import the match feed first (epf import <match feed directory>)"
        }
    }
}

/// Apple's Lookup and Search API over the catalogue: items in Apple's shape, related items, match feed keys.
package final class AppleQueries: SessionReading {
    let session: ReadSession
    let lookups: LookupQueries
    let textSearch: SearchQueries

    init(session: ReadSession, lookups: LookupQueries, search: SearchQueries) {
        self.session = session
        self.lookups = lookups
        textSearch = search
    }
}

/// Apple's Lookup and Search API over the catalogue: items in Apple's shape, related items, match feed keys.
extension AppleQueries {
    /// The items `request` names, each followed by its related items of `request.entity`, as objects of Apple's
    /// `results`. Unknown ids and keys are left out. Throws `QueryError.badArgument` (`country`) for a country
    /// with no storefront in the data, and `AppleLookupError.matchFeedMissing` for a match key without its table.
    package func lookup(_ request: AppleLookupRequest) throws -> [JSONValue] {
        return try reading {
            try checkStorefront(request.country)
            var results: [JSONValue] = []
            // An item named twice (`id=1,1`, or an id and the UPC of the same album) is listed once.
            var listed = ListedIDs()
            for (key, value) in request.keys {
                for found in try resolve(key, value) where !listed.contains(found.id) {
                    guard let item = try lookups.soldOrNil(appleItem(found.table, id: found.id, request),
                                                   country: request.country) else { continue }
                    listed.insert(found.id)
                    results.append(Self.appleValue(item.value))
                    if let entity = request.entity {
                        results += try related(item, entity: entity, request).map { Self.appleValue($0.value) }
                    }
                }
            }
            return results
        }
    }

    /// The results of `request`: ranked matches of the kinds and entity asked for, explicit ones left out when
    /// asked, after `offset`, at most `limit`. Throws `QueryError.badArgument` (`country`) for a country with
    /// no storefront in the data.
    package func search(_ request: AppleSearchRequest) throws -> [JSONValue] {
        var kinds = request.kinds
        if let entity = request.entity { kinds = kinds.map { $0.intersection(entity.kinds) } ?? entity.kinds }
        return try reading {
            try checkStorefront(request.country)
            var results: [JSONValue] = []
            var skipped = 0
            for rowid in try textSearch.rankedMatches(term: request.term, kinds: kinds, column: request.column) {
                guard results.count < request.limit else { break }
                // An item the storefront does not sell is not ranked at all (Apple leaves it out).
                guard let (kind, id) = try textSearch.searchHit(rowid),
                      let item = try lookups.soldOrNil(lookups.item(kind: kind, id: id, country: request.country,
                                                    language: request.language, allPrices: false,
                                                    storedDocuments: true),
                                               country: request.country) else { continue }
                if let entity = request.entity, !entity.admits(kind, value: item.value) { continue }
                if !request.explicit, Self.isExplicit(item.value) { continue }
                if skipped < request.offset {
                    skipped += 1
                    continue
                }
                results.append(Self.appleValue(item.value))
            }
            return results
        }
    }

    /// Throws `badArgument` (`country`) when the storefront table is loaded and has no storefront for `country`.
    func checkStorefront(_ country: String?) throws {
        guard let country, tables.contains("storefront") else { return }
        guard try storefrontID(country: country) != nil else {
            throw QueryError.badArgument(name: "country", message: "no storefront for '\(country)' in the data")
        }
    }

    /// Apple's result object: ours without the fields Apple does not send (`languageCode`).
    static func appleValue(_ value: JSONValue) -> JSONValue {
        guard case .object(let pairs) = value, pairs.contains(where: { $0.0 == "languageCode" }) else { return value }
        return .object(pairs.filter { $0.0 != "languageCode" })
    }

    static func isExplicit(_ value: JSONValue) -> Bool {
        value["trackExplicitness"] == .string("explicit") || value["collectionExplicitness"] == .string("explicit")
    }

    // MARK: Keys

    /// Where a match key is looked up: the match table, its key column, the item column and the item's table.
    struct MatchSource {
        let table: String
        let column: String
        let idColumn: String
        let catalogue: CatalogueTable
    }

    static func matchSources(_ key: AppleLookupRequest.Key) -> [MatchSource] {
        switch key {
        case .id: return []
        case .upc:
            return [MatchSource(table: "collection_match", column: "upc", idColumn: "collection_id",
                                catalogue: .collection),
                    MatchSource(table: "video_match", column: "upc", idColumn: "video_id", catalogue: .video)]
        case .isrc:
            return [MatchSource(table: "song_match", column: "isrc", idColumn: "song_id", catalogue: .song),
                    MatchSource(table: "video_match", column: "isrc", idColumn: "video_id", catalogue: .video)]
        case .amgArtistId:
            return [MatchSource(table: "artist_match", column: "amg_artist_id", idColumn: "artist_id",
                                catalogue: .artist)]
        case .amgAlbumId:
            return [MatchSource(table: "collection_match", column: "amg_album_id", idColumn: "collection_id",
                                catalogue: .collection)]
        case .amgVideoId:
            return [MatchSource(table: "video_match", column: "amg_video_id", idColumn: "video_id",
                                catalogue: .video)]
        }
    }

    /// The items a key names: an id (its table unknown), or the items whose match rows hold the value.
    func resolve(_ key: AppleLookupRequest.Key, _ value: String) throws -> [(table: CatalogueTable?, id: Int64)] {
        if key == .id {
            guard let id = Int64(value), id > 0 else { return [] }
            return [(nil, id)]
        }
        let sources = Self.matchSources(key)
        var loaded: [MatchSource] = []
        for source in sources where tables.contains(source.table) {
            let columns = try lookups.columnNames(source.table)
            if columns.contains(source.column) && columns.contains(source.idColumn) { loaded.append(source) }
        }
        guard !loaded.isEmpty else {
            throw AppleLookupError.matchFeedMissing(key: key.rawValue, tables: sources.map(\.table))
        }
        var found: [(table: CatalogueTable?, id: Int64)] = []
        for source in loaded {
            let sql = """
                SELECT \(source.idColumn) FROM \(source.table) WHERE \(source.column) = ?1
                ORDER BY \(source.idColumn) LIMIT 200
                """
            try forEachRow(sql, [.text(value)]) { row in
                if let id = row.statement.int64(at: 0) { found.append((source.catalogue, id)) }
                return true
            }
        }
        return found
    }

    /// The item with that id in `table`, or (table nil) in the first table holding it, apps first: Apple IDs are
    /// unique across kinds, so one read answers an app id.
    func appleItem(_ table: CatalogueTable?, id: Int64, _ request: AppleLookupRequest) throws -> LookupItem? {
        if table == nil || table == .application,
           let app = try lookups.application(id, country: request.country, language: request.language, allPrices: false,
                                     storedDocuments: true) {
            return app
        }
        let candidates = table.map { [$0] } ?? CatalogueTable.allCases.filter { $0 != .application }
        for candidate in candidates where candidate != .application {
            guard let kind = try lookups.exists(candidate, id: id) else { continue }
            return try lookups.item(kind: kind, id: id, country: request.country, language: request.language,
                            allPrices: false, storedDocuments: true)
        }
        return nil
    }

    // MARK: Related items

    /// How items of one kind relate to another: the join table, its columns for each, the related item's table.
    struct Relation {
        let join: String
        let parent: String
        let child: String
        let table: CatalogueTable
    }

    static func relation(from parent: EntityKind, to child: EntityKind) -> Relation? {
        switch (parent, child) {
        case (.artist, .software):
            return Relation(join: "artist_application", parent: "artist_id", child: "application_id",
                            table: .application)
        case (.artist, .album), (.artist, .ebook):
            return Relation(join: "artist_collection", parent: "artist_id", child: "collection_id", table: .collection)
        case (.artist, .song): return Relation(join: "artist_song", parent: "artist_id", child: "song_id", table: .song)
        case (.artist, .video):
            return Relation(join: "artist_video", parent: "artist_id", child: "video_id", table: .video)
        case (.album, .song):
            return Relation(join: "collection_song", parent: "collection_id", child: "song_id", table: .song)
        case (.album, .video):
            return Relation(join: "collection_video", parent: "collection_id", child: "video_id", table: .video)
        case (.song, .album):
            return Relation(join: "collection_song", parent: "song_id", child: "collection_id", table: .collection)
        case (.video, .album):
            return Relation(join: "collection_video", parent: "video_id", child: "collection_id", table: .collection)
        default: return nil
        }
    }

    /// The items of `entity` related to `item` (an artist's apps or collections, a collection's songs, a song's
    /// collection), at most `request.limit`: by track number for a collection's songs, else by id; newest
    /// first with `request.recent`. Nothing when the kinds are not related or the tables are missing.
    func related(_ item: LookupItem, entity: AppleEntity, _ request: AppleLookupRequest) throws -> [LookupItem] {
        var items: [LookupItem] = []
        for kind in EntityKind.allCases where entity.kinds.contains(kind) {
            guard items.count < request.limit, let relation = Self.relation(from: item.kind, to: kind),
                  tables.contains(relation.join), tables.contains(relation.table.name) else { continue }
            // A collection is an album or a book: both relations read the same rows, so read them once.
            if kind == .ebook, entity.kinds.contains(.album) { continue }
            let joinColumns = try lookups.columnNames(relation.join)
            let childColumns = try lookups.columnNames(relation.table.name)
            let order: String
            if request.recent, childColumns.contains("itunes_release_date") {
                order = "c.itunes_release_date DESC, r.\(relation.child) DESC"
            } else if relation.join == "collection_song", relation.parent == "collection_id",
                      joinColumns.contains("track_number"), joinColumns.contains("volume_number") {
                order = "r.volume_number, r.track_number, r.song_id"
            } else {
                order = "r.\(relation.child)"
            }
            let sql = """
                SELECT r.\(relation.child) FROM \(relation.join) r
                JOIN \(relation.table.name) c ON c.\(relation.table.idColumn) = r.\(relation.child)
                WHERE r.\(relation.parent) = ?1 ORDER BY \(order) LIMIT ?2 OFFSET ?3
                """
            // Read in pages until `limit` items are admitted: rows the entity does not admit (an artist's ebooks
            // when albums are asked for) must not use up the limit.
            var offset = 0
            while items.count < request.limit {
                let page = max(request.limit - items.count, Self.relatedPageRows)
                var ids: [Int64] = []
                try forEachRow(sql, [.integer(item.id), .integer(Int64(page)), .integer(Int64(offset))]) { row in
                    if let id = row.statement.int64(at: 0) { ids.append(id) }
                    return true
                }
                for id in ids where items.count < request.limit {
                    let childKind = relation.table == .collection
                        ? lookups.collectionKind(mediaType: try collectionMediaType(id)) : relation.table.defaultKind
                    guard let child = try lookups.soldOrNil(lookups.item(kind: childKind, id: id, country: request.country,
                                                              language: request.language, allPrices: false,
                                                              storedDocuments: true),
                                                    country: request.country),
                          entity.admits(childKind, value: child.value) else { continue }
                    items.append(child)
                }
                if ids.count < page { break }
                offset += ids.count
            }
        }
        return items
    }

    /// Related rows read at least per page while items are still wanted.
    static let relatedPageRows = 50

    func collectionMediaType(_ id: Int64) throws -> Int64? {
        try firstRow("SELECT media_type_id FROM collection WHERE collection_id = ?1", id: id) {
            $0.statement.int64(at: 0)
        }
    }
}

/// The ids a lookup has listed. Most lookups name one item: the first id is kept without allocating a set.
struct ListedIDs {
    private var first: Int64?
    private var others: Set<Int64> = []

    func contains(_ id: Int64) -> Bool { first == id || (!others.isEmpty && others.contains(id)) }

    mutating func insert(_ id: Int64) {
        if first == nil { first = id } else { others.insert(id) }
    }
}
