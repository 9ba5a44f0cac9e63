import EPFFormat
import EPFSQLite
import EPFSchema
import JSONText

/// Prices in every storefront, the storefronts, the genre tree and a genre's top apps, the data's export date.
package final class CatalogueQueries: SessionReading {
    let session: ReadSession
    let lookups: LookupQueries

    init(session: ReadSession, lookups: LookupQueries) {
        self.session = session
        self.lookups = lookups
    }
}

/// Catalogue listings: an item's prices, storefronts, the genre tree, a genre's apps, the export date.
extension CatalogueQueries {
    /// The price of an item in every storefront, nil when the ID is in no table and has no prices.
    ///
    /// Tries apps, then collections, songs and videos. Rows are sorted by country code.
    package func prices(id: Int64) throws -> PriceList? {
        try reading {
            var fallback: (EntityKind, String?)?
            for table in CatalogueTable.allCases where table.priceTable != nil {
                let kind = try lookups.exists(table, id: id)
                let rows = try lookups.priceRows(of: table, id: id)
                if kind != nil || !rows.isEmpty {
                    let resolved = kind ?? table.defaultKind
                    let title = try self.title(table, id: id)
                    if !rows.isEmpty { return PriceList(id: id, kind: resolved, title: title, rows: rows) }
                    if fallback == nil { fallback = (resolved, title) }
                }
            }
            if let fallback { return PriceList(id: id, kind: fallback.0, title: fallback.1, rows: []) }
            if let kind = try lookups.exists(.artist, id: id) {
                return PriceList(id: id, kind: kind, title: try title(.artist, id: id), rows: [])
            }
            return nil
        }
    }

    /// The title or name of the item with that ID in `table`, nil when absent.
    func title(_ table: CatalogueTable, id: Int64) throws -> String? {
        guard tables.contains(table.name) else { return nil }
        let sql = "SELECT \(table.titleColumn) FROM \(table.name) WHERE \(table.idColumn) = ?1"
        return try firstRow(sql, id: id) { $0.statement.text(at: 0) }
    }

    /// Every storefront, sorted by country code. Empty when the storefront table is absent.
    package func storefronts() throws -> [StorefrontRow] {
        try reading {
            try smallTables().storefronts.values.sorted {
                ($0.country ?? "~" + $0.countryCode, $0.storefrontId) < ($1.country ?? "~" + $1.countryCode,
                                                                          $1.storefrontId)
            }
        }
    }

    /// The genre tree in depth-first order, children sorted by name. Empty when the genre table is absent.
    package func genres() throws -> [GenreRow] {
        try reading { try genreTree() }
    }

    /// The apps of a genre (from `genre_application`, plus any app ranked in it), ranked by the export's app chart
    /// (v5's `free_application_popularity_per_genre`, then its other charts; else v3's
    /// `application_popularity_per_genre`, which a database that followed the feed from v3 to v5 keeps as it last
    /// was) in the storefront of `country` (default "us") when one is present, then the unranked ones by ID; nil
    /// when the genre does not exist.
    ///
    /// Throws `QueryError.badArgument` for an unknown country or a limit outside 1...100000.
    package func genreApps(id: Int64, country: String?, limit: Int) throws -> GenreApps? {
        guard (1...100_000).contains(limit) else {
            throw QueryError.badArgument(name: "limit", message: "must be from 1 to 100000, got \(limit)")
        }
        let country = try normalizedCountry(country) ?? QueryEngine.defaultCountry
        return try reading {
            guard let genre = try genreTree().first(where: { $0.id == id }) else { return nil }
            let storefront = try smallTables().storefrontByCountry[country]
            // v5's free iPhone chart (then paid, then the iPad ones), else v3's one chart: whichever the export has.
            let chart = (EPFTable.appCharts.dropFirst() + EPFTable.appCharts.prefix(1)).first { tables.contains($0) }
                ?? "application_popularity_per_genre"
            let ranked = tables.contains(chart) && storefront != nil
            let member = tables.contains("genre_application")
            guard ranked || member else { return GenreApps(genre: genre, country: nil, total: 0, apps: []) }
            // Members: the genre's apps, plus apps ranked in it (the root genre 36 ranks apps overall).
            var sources: [String] = []
            if member {
                sources.append("SELECT application_id, is_primary FROM genre_application WHERE genre_id = ?1")
            }
            if ranked {
                sources.append("""
                    SELECT application_id, 0 FROM \(chart)
                    WHERE storefront_id = ?2 AND genre_id = ?1
                    """)
            }
            let titled = tables.contains("application")
            let sql = """
                WITH members AS (
                    SELECT application_id, max(is_primary) AS is_primary
                    FROM (\(sources.joined(separator: " UNION ALL "))) GROUP BY application_id
                )
                SELECT m.application_id, \(titled ? "a.title" : "NULL"),
                       \(ranked ? "p.application_rank" : "NULL") AS rank, m.is_primary,
                       (SELECT count(*) FROM members) AS total
                FROM members m
                \(titled ? "LEFT JOIN application a ON a.application_id = m.application_id" : "")
                \(ranked ? """
                    LEFT JOIN \(chart) p ON p.storefront_id = ?2
                        AND p.genre_id = ?1 AND p.application_id = m.application_id
                    """ : "")
                ORDER BY rank IS NULL, rank, m.application_id LIMIT ?3
                """
            var apps: [GenreApp] = []
            var total: Int64 = 0
            let bindings: [SQLValue] = [.integer(id), ranked ? storefront.map { .integer($0) } ?? .null : .null,
                                        .integer(Int64(limit))]
            try forEachRow(sql, bindings) { row in
                guard let appId = row.statement.int64(at: 0) else { return true }
                apps.append(GenreApp(id: appId, title: row.statement.text(at: 1), rank: row.statement.int64(at: 2),
                                     isPrimary: row.statement.int64(at: 3) == 1))
                total = row.statement.int64(at: 4) ?? 0
                return true
            }
            return GenreApps(genre: genre, country: ranked ? country : nil, total: total, apps: apps)
        }
    }

    func genreTree() throws -> [GenreRow] {
        let genres = try smallTables().genres
        var children: [Int64: [Int64]] = [:]
        var roots: [Int64] = []
        for (id, genre) in genres {
            if let parent = genre.parent, parent != id, genres[parent] != nil {
                children[parent, default: []].append(id)
            } else {
                roots.append(id)
            }
        }
        func byName(_ a: Int64, _ b: Int64) -> Bool {
            let left = genres[a]?.name ?? "", right = genres[b]?.name ?? ""
            return left == right ? a < b : left < right
        }
        var result: [GenreRow] = []
        var visited = Set<Int64>()
        func visit(_ id: Int64, depth: Int) {
            guard visited.insert(id).inserted, let genre = genres[id] else { return }
            result.append(GenreRow(id: id, parentId: genre.parent, name: genre.name, depth: depth))
            for child in (children[id] ?? []).sorted(by: byName) { visit(child, depth: depth + 1) }
        }
        for root in roots.sorted(by: byName) { visit(root, depth: 0) }
        // Genres caught in a parent cycle are not reachable from a root: list them at the top level.
        for id in genres.keys.sorted() where !visited.contains(id) { visit(id, depth: 0) }
        return result
    }

    /// The newest `export_date` (ms since 1970 UTC) over the catalogue tables, for HTTP `Last-Modified`.
    ///
    /// Reads the importer's summary (`StoreBookkeeping`) when present; otherwise scans the catalogue tables (not
    /// prices or details) once. Cached until another connection commits. Nil when no table has rows.
    package func dataExportDate() throws -> Int64? {
        try reading {
            if let cached = session.exportDateCache { return cached }
            var newest: Int64?
            if StoreBookkeeping.isImported(tableNames: tables),
               let number = try StoreBookkeeping.newestExportDate(connection) {
                // The importer's per-table summary: no need to scan the tables themselves.
                session.exportDateCache = .some(number)
                return number
            }
            for table in ["application", "collection", "song", "video", "artist", "storefront", "genre"]
            where tables.contains(table) {
                guard let value = try connection.scalar("SELECT max(export_date) FROM \(table)"),
                      case .integer(let number) = value else { continue }
                newest = max(newest ?? number, number)
            }
            session.exportDateCache = .some(newest)
            return newest
        }
    }
}
