import EPFFormat
import EPFSQLite
import JSONText

/// One of the App Store's app charts, as `--chart` and the HTTP routes name it.
package enum ChartKind: String, Sendable, CaseIterable {
    case free
    case paid
    case freeIPad = "free-ipad"
    case paidIPad = "paid-ipad"

    /// v5's table of this chart (since 2023 Apple ships the four apart).
    package var v5Table: String {
        switch self {
        case .free: return "free_application_popularity_per_genre"
        case .paid: return "paid_application_popularity_per_genre"
        case .freeIPad: return "free_ipad_application_popularity_per_genre"
        case .paidIPad: return "paid_ipad_application_popularity_per_genre"
        }
    }

    /// Whether the chart ranks free apps.
    package var isFree: Bool { self == .free || self == .freeIPad }
}

/// A chart the database cannot answer: it holds no chart table, or only v3's, which has no iPad charts.
package struct ChartUnavailable: Error, CustomStringConvertible, Sendable {
    package let description: String
}

/// One entry of a chart: its rank and the app as the lookups show it (nil when the catalogue lacks the app).
package struct ChartEntry {
    /// 1 is the top.
    package let rank: Int
    /// The app's Apple ID.
    package let id: Int64
    /// The app's lookup object (Apple's Lookup API fields, priced in the chart's storefront), nil when the
    /// `application` table does not hold it.
    package let app: JSONValue?

    /// A field of the lookup object, nil when absent.
    package func field(_ name: String) -> JSONValue? {
        guard case .object(let pairs)? = app else { return nil }
        return pairs.first { $0.0 == name }?.1
    }

    /// The app's artwork at `size` x `size` pixels, when the feed's artwork URL names a size the image service
    /// can be asked to change (see `LookupQueries.artworkURL`); nil otherwise, rather than an image of another size.
    package func artwork(size: Int) -> String? {
        guard let url = field("artworkUrl512")?.stringValue else { return nil }
        let sized = LookupQueries.artworkURL(url, size: size)
        return sized == url && size != 512 ? nil : sized
    }
}

/// A chart as it stands in the database (the last day imported): a storefront's top apps in one genre.
package struct Chart {
    /// ISO alpha-2 code of the storefront, lowercase.
    package let country: String
    package let storefrontId: Int64
    package let kind: ChartKind
    package let genreId: Int64
    /// The genre's name, nil when the genre table does not know it.
    package let genreName: String?
    /// The table the ranks come from.
    package let source: String
    /// Whether `source` is v3's one chart of every app, split into free and paid by the app's price there.
    package let splitByPrice: Bool
    /// The export date of the ranks (ms since 1970), nil when the chart is empty.
    package let exportDate: Int64?
    /// How many apps the chart ranks in all (Apple ships up to 200 per chart).
    package let depth: Int
    /// The top `limit` entries, best first.
    package let entries: [ChartEntry]

    /// The fields of an entry shown by `epf charts --json` and `/v1/charts`, in order.
    static let entryFields = ["trackName", "artistName", "artistId", "price", "formattedPrice", "currency",
                              "primaryGenreName", "primaryGenreId", "releaseDate", "artworkUrl100", "trackViewUrl"]

    /// `{"country", "storefrontId", "chart", "genreId", "genreName", "source", "exportDate", "depth",
    /// "resultCount", "results": [{"rank", "trackId", ...the app's fields the feed has}]}`.
    package var json: JSONValue {
        var pairs: [(String, JSONValue)] = [
            ("country", .string(country)), ("storefrontId", .int(storefrontId)), ("chart", .string(kind.rawValue)),
            ("genreId", .int(genreId)), ("genreName", genreName.map { .string($0) } ?? .null),
            ("source", .string(source)),
        ]
        if splitByPrice { pairs.append(("splitByPrice", .bool(true))) }
        pairs += [
            ("exportDate", exportDate.map { .string(EPFValues.isoTimestamp(milliseconds: $0)) } ?? .null),
            ("depth", .int(Int64(depth))), ("resultCount", .int(Int64(entries.count))),
            ("results", .array(entries.map { entry in
                var fields: [(String, JSONValue)] = [("rank", .int(Int64(entry.rank))), ("trackId", .int(entry.id))]
                for name in Self.entryFields {
                    if let value = entry.field(name) { fields.append((name, value)) }
                }
                return .object(fields)
            })),
        ]
        return .object(pairs)
    }
}

/// The app charts of the popularity feed as they stand: v5's four tables, or v3's one table split by price.
package final class ChartQueries: SessionReading {
    let session: ReadSession
    let lookups: LookupQueries

    /// The root genre: Apple's overall charts.
    package static let allApps: Int64 = 36
    /// Most entries one call returns: Apple ranks up to 200 apps per chart.
    package static let maximumLimit = 200

    init(session: ReadSession, lookups: LookupQueries) {
        self.session = session
        self.lookups = lookups
    }

    /// The top `limit` apps of a chart in `country`'s storefront and `genre`, from v5's table of the chart, else
    /// from v3's `application_popularity_per_genre` with the apps priced 0 (free) or above 0 (paid) in that
    /// storefront, in v3's order and numbered again from 1; an app without a price there is in neither.
    ///
    /// Throws `QueryError.badArgument` for an unknown country or a limit outside 1...200, and `ChartUnavailable`
    /// when the database holds no chart table for it (v3 has no iPad charts).
    package func chart(country: String, kind: ChartKind, genre: Int64 = ChartQueries.allApps,
                      limit: Int) throws -> Chart {
        guard (1...Self.maximumLimit).contains(limit) else {
            throw QueryError.badArgument(name: "limit", message: "must be from 1 to \(Self.maximumLimit), got \(limit)")
        }
        return try reading {
            guard let code = try normalizedCountry(country), let storefront = try storefrontID(country: code) else {
                throw QueryError.badArgument(name: "country", message: "unknown storefront '\(country.prefix(40))'")
            }
            let v3 = "application_popularity_per_genre"
            var source = kind.v5Table
            var split = false
            if !tables.contains(source) {
                guard tables.contains(v3) else {
                    throw ChartUnavailable(description: "the database holds no \(kind.rawValue) chart: import a "
                                           + "popularity feed (v5's \(kind.v5Table) or v3's \(v3))")
                }
                guard kind == .free || kind == .paid else {
                    throw ChartUnavailable(description: "the database holds v3's one chart (\(v3)), which does not "
                                           + "tell iPad charts apart: use --chart free or paid")
                }
                guard tables.contains("application_price") else {
                    throw ChartUnavailable(description: "v3's chart (\(v3)) is split into free and paid by the "
                                           + "apps' prices, and the database holds no application_price")
                }
                source = v3
                split = true
            }
            // v3's chart keeps the apps priced 0 (free) or above (paid) in the storefront.
            let filter = split ? """
                JOIN application_price r ON r.application_id = p.application_id AND r.storefront_id = p.storefront_id
                    AND (CAST(r.retail_price AS REAL) = 0) = ?3
                """ : ""
            let bindings: [SQLValue] = [.integer(storefront), .integer(genre), .integer(kind.isFree ? 1 : 0)]
            var depth = 0
            var exportDate: Int64?
            try forEachRow("""
                SELECT count(*), max(p.export_date) FROM \(source) p \(filter)
                WHERE p.storefront_id = ?1 AND p.genre_id = ?2\(split ? "" : " AND ?3 = ?3")
                """, bindings) { row in
                depth = Int(row.statement.int64(at: 0) ?? 0)
                exportDate = row.statement.int64(at: 1)
                return false
            }
            var ranked: [(id: Int64, rank: Int)] = []
            try forEachRow("""
                SELECT p.application_id, p.application_rank FROM \(source) p \(filter)
                WHERE p.storefront_id = ?1 AND p.genre_id = ?2\(split ? "" : " AND ?3 = ?3")
                ORDER BY p.application_rank, p.application_id LIMIT ?4
                """, bindings + [.integer(Int64(limit))]) { row in
                guard let id = row.statement.int64(at: 0) else { return true }
                // v5's ranks as shipped; v3's split chart numbered again from 1.
                let rank = split ? ranked.count + 1 : Int(row.statement.int64(at: 1) ?? Int64(ranked.count + 1))
                ranked.append((id, rank))
                return true
            }
            var entries: [ChartEntry] = []
            for (id, rank) in ranked {
                let app = try lookups.application(id, country: code, language: nil, allPrices: false)
                entries.append(ChartEntry(rank: rank, id: id, app: app?.value))
            }
            return Chart(country: code, storefrontId: storefront, kind: kind, genreId: genre,
                         genreName: try smallTables().genres[genre]?.name, source: source, splitByPrice: split,
                         exportDate: exportDate, depth: depth, entries: entries)
        }
    }
}
