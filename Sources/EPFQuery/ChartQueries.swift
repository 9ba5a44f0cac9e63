import EPFFormat
import EPFSQLite
import EPFSchema
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

/// How an entry moved since the chart's recorded day before.
package enum ChartMove: Equatable, Sendable {
    /// Not in the chart that day.
    case new
    /// Up (to a better rank) or down by this many places.
    case up(Int)
    case down(Int)
    case same

    /// The move from `previous` (nil: not in the chart) to `rank`.
    package init(from previous: Int?, to rank: Int) {
        guard let previous else {
            self = .new
            return
        }
        self = rank < previous ? .up(previous - rank) : rank > previous ? .down(rank - previous) : .same
    }

    /// "new", "up 3", "down 2", "same".
    package var text: String {
        switch self {
        case .new: return "new"
        case .up(let places): return "up \(places)"
        case .down(let places): return "down \(places)"
        case .same: return "same"
        }
    }

    /// The word alone: new, up, down, same.
    package var word: String {
        switch self {
        case .new: return "new"
        case .up: return "up"
        case .down: return "down"
        case .same: return "same"
        }
    }
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
    /// The rank on the chart's recorded day before (nil: not in the chart then, or no day before is known).
    package var previousRank: Int?
    /// The move since the recorded day before, nil when no day before is recorded.
    package var move: ChartMove?

    package init(rank: Int, id: Int64, app: JSONValue?, previousRank: Int? = nil, move: ChartMove? = nil) {
        self.rank = rank
        self.id = id
        self.app = app
        self.previousRank = previousRank
        self.move = move
    }

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

/// A chart as it stands in the database (the last day imported) or stood on a recorded day: a storefront's top
/// apps in one genre.
package struct Chart {
    /// ISO alpha-2 code of the storefront, lowercase.
    package let country: String
    package let storefrontId: Int64
    package let kind: ChartKind
    package let genreId: Int64
    /// The genre's name, nil when the genre table does not know it.
    package let genreName: String?
    /// The table the ranks come from (of the day, or recorded in the rank history).
    package let source: String
    /// Whether `source` is v3's one chart of every app, split into free and paid by the app's price there.
    package let splitByPrice: Bool
    /// The export date of the ranks (ms since 1970), nil when the chart is empty.
    package let exportDate: Int64?
    /// How many apps the chart ranks in all (Apple ships up to 200 per chart).
    package let depth: Int
    /// The top `limit` entries, best first.
    package let entries: [ChartEntry]
    /// The chart's recorded day before (ms), which the entries' moves are since; nil without one.
    package let movesSince: Int64?

    /// The fields of an entry shown by `epf charts --json` and `/v1/charts`, in order.
    static let entryFields = ["trackName", "artistName", "artistId", "price", "formattedPrice", "currency",
                              "primaryGenreName", "primaryGenreId", "releaseDate", "artworkUrl100", "trackViewUrl"]

    /// `{"country", "storefrontId", "chart", "genreId", "genreName", "source", "exportDate", "depth",
    /// "movesSince", "resultCount", "results": [{"rank", "move", "places", "previousRank", "trackId", ...the app's
    /// fields the feed has}]}`; `move` (new, up, down, same) and `previousRank` only with `movesSince`, `places`
    /// only for up and down.
    package var json: JSONValue {
        var pairs: [(String, JSONValue)] = [
            ("country", .string(country)), ("storefrontId", .int(storefrontId)), ("chart", .string(kind.rawValue)),
            ("genreId", .int(genreId)), ("genreName", genreName.map { .string($0) } ?? .null),
            ("source", .string(source)),
        ]
        if splitByPrice { pairs.append(("splitByPrice", .bool(true))) }
        pairs += [
            ("exportDate", exportDate.map { .string(EPFValues.isoTimestamp(milliseconds: $0)) } ?? .null),
            ("depth", .int(Int64(depth))),
            ("movesSince", movesSince.map { .string(EPFValues.isoTimestamp(milliseconds: $0)) } ?? .null),
            ("resultCount", .int(Int64(entries.count))),
            ("results", .array(entries.map { entry in
                var fields: [(String, JSONValue)] = [("rank", .int(Int64(entry.rank)))]
                if let move = entry.move {
                    fields.append(("move", .string(move.word)))
                    if case .up(let places) = move { fields.append(("places", .int(Int64(places)))) }
                    if case .down(let places) = move { fields.append(("places", .int(Int64(places)))) }
                    fields.append(("previousRank", entry.previousRank.map { .int(Int64($0)) } ?? .null))
                }
                fields.append(("trackId", .int(entry.id)))
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
    /// Without `date`, the chart of the last popularity feed imported; with `date` (`YYYY-MM-DD`), the chart as the
    /// rank history recorded it that day (v3's split by today's prices). When the rank history holds the chart's
    /// day before, each entry says how it moved since (`movesSince`).
    ///
    /// Throws `QueryError.badArgument` for an unknown country, a limit outside 1...200 or a date not `YYYY-MM-DD`,
    /// and `ChartUnavailable` when the database holds no chart table for it (v3 has no iPad charts), or no data for
    /// the date.
    package func chart(country: String, kind: ChartKind, genre: Int64 = ChartQueries.allApps,
                      limit: Int, date: String? = nil) throws -> Chart {
        guard (1...Self.maximumLimit).contains(limit) else {
            throw QueryError.badArgument(name: "limit", message: "must be from 1 to \(Self.maximumLimit), got \(limit)")
        }
        let day = try date.map { text in
            guard let milliseconds = EPFValues.milliseconds(isoDate: text) else {
                throw QueryError.badArgument(name: "date", message: "'\(text.prefix(40))' is not a date as YYYY-MM-DD")
            }
            return milliseconds
        }
        return try reading {
            let (code, storefront) = try chartStorefront(country)
            let history = RankHistoryRead(connection, tables: tables)
            let source = try self.source(kind, history: history)
            let key = RankChartKey(chart: source.recorded, storefrontID: storefront, genreID: genre)
            var ranked: [RankedEntry]
            var exportDate: Int64?
            if let day {
                ranked = try recordedChart(key, on: day, source: source, history: history, date: date ?? "")
                exportDate = day
            } else {
                (ranked, exportDate) = try currentChart(source, storefront: storefront, genre: genre)
            }
            let depth = ranked.count
            var movesSince: Int64?
            var before: [Int64: Int] = [:]
            if let history, let exportDate, try history.isRecorded(exportDate, chart: source.recorded),
               let previous = try history.recordedDay(before: exportDate, chart: source.recorded),
               let entries = try history.chart(key, on: previous) {
                movesSince = previous
                for entry in try split(entries, source: source, storefront: storefront) where before[entry.id] == nil {
                    before[entry.id] = entry.rank
                }
            }
            var entries: [ChartEntry] = []
            for entry in ranked.prefix(limit) {
                let app = try lookups.application(entry.id, country: code, language: nil, allPrices: false)
                entries.append(ChartEntry(rank: entry.rank, id: entry.id, app: app?.value,
                                          previousRank: before[entry.id],
                                          move: movesSince == nil ? nil : ChartMove(from: before[entry.id],
                                                                                    to: entry.rank)))
            }
            return Chart(country: code, storefrontId: storefront, kind: kind, genreId: genre,
                         genreName: try smallTables().genres[genre]?.name, source: source.table,
                         splitByPrice: source.split, exportDate: exportDate, depth: depth, entries: entries,
                         movesSince: movesSince)
        }
    }

    /// The chart of the last popularity feed imported, every entry, and its export date. Call inside `reading`.
    private func currentChart(_ source: ChartSource, storefront: Int64, genre: Int64) throws
        -> (entries: [RankedEntry], exportDate: Int64?) {
        guard tables.contains(source.table) else { return ([], nil) }
        try requireExportDate(in: source.table)
        var exportDate: Int64?
        var entries: [RankedEntry] = []
        try forEachRow("""
            SELECT application_id, application_rank, export_date FROM \(source.table)
            WHERE storefront_id = ?1 AND genre_id = ?2 ORDER BY application_rank, application_id
            """, [.integer(storefront), .integer(genre)]) { row in
            guard let id = row.statement.int64(at: 0) else { return true }
            entries.append(RankedEntry(rank: Int(row.statement.int64(at: 1) ?? Int64(entries.count + 1)), id: id))
            exportDate = max(exportDate ?? Int64.min, row.statement.int64(at: 2) ?? Int64.min)
            return true
        }
        return (try split(entries, source: source, storefront: storefront), exportDate)
    }

    /// The chart `key` as the rank history recorded it on `day`, split as `source` says. Throws `ChartUnavailable`
    /// when the database records no rank history, or no data for that day. Call inside `reading`.
    func recordedChart(_ key: RankChartKey, on day: Int64, source: ChartSource, history: RankHistoryRead?,
                       date: String) throws -> [RankedEntry] {
        guard let history else {
            throw ChartUnavailable(description: "a past day's chart needs rank history, which this database does not "
                                   + "record: imports record it with --history ranks")
        }
        guard let entries = try history.chart(key, on: day) else {
            let earlier = try history.recordedDay(before: day, chart: key.chart)
            let later = try history.recordedDays(chart: key.chart, since: day + 1).first
            let near = [earlier, later].compactMap { $0 }.map { EPFValues.isoDate(milliseconds: $0) }
            throw ChartUnavailable(description: "no data for the \(source.table) chart on \(date): its popularity "
                                   + "was not recorded that day"
                                   + (near.isEmpty ? "" : " (nearest recorded: \(near.joined(separator: ", ")))"))
        }
        return try split(entries, source: source, storefront: key.storefrontID)
    }

    /// v5's entries as they are; v3's split by price (`source.split`): the apps priced 0 (free) or above (paid)
    /// in the storefront today, in v3's order, numbered again from 1. Call inside `reading`.
    func split(_ entries: [RankedEntry], source: ChartSource, storefront: Int64) throws -> [RankedEntry] {
        guard source.split else { return entries }
        var kept: [RankedEntry] = []
        for entry in entries {
            let free = try firstRow("""
                SELECT CAST(retail_price AS REAL) = 0 FROM application_price
                WHERE application_id = ?1 AND storefront_id = ?2
                """, [.integer(entry.id), .integer(storefront)]) { $0.statement.int64(at: 0) }
            if let free, (free != 0) == source.free { kept.append(RankedEntry(rank: kept.count + 1, id: entry.id)) }
        }
        return kept
    }

    /// Where `kind`'s chart comes from: v5's table of the chart when the database has it (today's or recorded),
    /// else v3's one chart split by price. Throws `ChartUnavailable` when neither answers. Call inside `reading`.
    func source(_ kind: ChartKind, history: RankHistoryRead?) throws -> ChartSource {
        let v5 = RankChart(table: kind.v5Table) ?? .free
        let recorded = { (chart: RankChart) throws -> Bool in
            try !(history?.recordedDays(chart: chart).isEmpty ?? true)
        }
        let hasV5 = try tables.contains(kind.v5Table) || recorded(v5)
        if hasV5 {
            return ChartSource(table: kind.v5Table, recorded: v5, split: false, free: kind.isFree)
        }
        let v3 = RankChart.apps.table
        let hasV3 = try tables.contains(v3) || recorded(.apps)
        guard hasV3 else {
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
        return ChartSource(table: v3, recorded: .apps, split: true, free: kind.isFree)
    }
}

/// Where a chart's ranks come from: a popularity table (today's, and the rank history's chart of it), and whether
/// it is v3's one chart split by price.
struct ChartSource {
    /// The popularity table.
    let table: String
    /// The rank history's chart of the table.
    let recorded: RankChart
    /// Whether the table is v3's one chart, split by the apps' prices in the storefront.
    let split: Bool
    /// Which half of a split chart: the free apps, or the paid ones.
    let free: Bool
}
