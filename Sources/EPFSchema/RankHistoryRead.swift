import EPFSQLite

/// A chart the rank history records: one popularity table of the feed.
package enum RankChart: String, Sendable, CaseIterable, Comparable {
    /// v3's one chart of every app (`application_popularity_per_genre`).
    case apps
    /// v5's four app charts.
    case free
    case paid
    case freeIPad = "free-ipad"
    case paidIPad = "paid-ipad"
    /// Older archives' music charts.
    case songs
    case albums

    /// The number the history stores for the chart (`chart` columns).
    package var code: Int64 {
        switch self {
        case .apps: return 0
        case .free: return 1
        case .paid: return 2
        case .freeIPad: return 3
        case .paidIPad: return 4
        case .songs: return 5
        case .albums: return 6
        }
    }

    /// The chart of a stored `code`, nil for an unknown one.
    package init?(code: Int64) {
        guard let chart = Self.allCases.first(where: { $0.code == code }) else { return nil }
        self = chart
    }

    /// The popularity table the chart comes from.
    package var table: String {
        switch self {
        case .apps: return "application_popularity_per_genre"
        case .free: return "free_application_popularity_per_genre"
        case .paid: return "paid_application_popularity_per_genre"
        case .freeIPad: return "free_ipad_application_popularity_per_genre"
        case .paidIPad: return "paid_ipad_application_popularity_per_genre"
        case .songs: return "song_popularity_per_genre"
        case .albums: return "album_popularity_per_genre"
        }
    }

    /// The chart of a popularity table, nil for any other table.
    package init?(table: String) {
        guard let chart = Self.allCases.first(where: { $0.table == table }) else { return nil }
        self = chart
    }

    /// The table's item id column (`application_id`, `song_id`, `album_id`).
    package var idColumn: String {
        switch self {
        case .songs: return "song_id"
        case .albums: return "album_id"
        default: return "application_id"
        }
    }

    /// The table's rank column (`application_rank`, `song_rank`, `album_rank`).
    package var rankColumn: String {
        switch self {
        case .songs: return "song_rank"
        case .albums: return "album_rank"
        default: return "application_rank"
        }
    }

    /// Whether the chart ranks apps (v3's chart and v5's four).
    package var ranksApps: Bool { self != .songs && self != .albums }

    package static func < (lhs: Self, rhs: Self) -> Bool { lhs.code < rhs.code }
}

/// One chart of one day's popularity: a chart table's ranking in one storefront and genre.
package struct RankChartKey: Hashable, Sendable, Comparable {
    package let chart: RankChart
    package let storefrontID: Int64
    package let genreID: Int64

    package init(chart: RankChart, storefrontID: Int64, genreID: Int64) {
        self.chart = chart
        self.storefrontID = storefrontID
        self.genreID = genreID
    }

    package static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.chart.code, lhs.storefrontID, lhs.genreID) < (rhs.chart.code, rhs.storefrontID, rhs.genreID)
    }
}

/// One entry of a recorded chart: the rank as the table held it (1 is the top; duplicates and gaps kept) and the
/// item's id.
package struct RankedEntry: Hashable, Sendable {
    package let rank: Int
    package let id: Int64

    package init(rank: Int, id: Int64) {
        self.rank = rank
        self.id = id
    }
}

/// One day of an item's rank history: the day (export date, ms since 1970 UTC), the chart and the rank.
package struct RankHistoryPoint: Hashable, Sendable {
    package let day: Int64
    package let key: RankChartKey
    package let rank: Int

    package init(day: Int64, key: RankChartKey, rank: Int) {
        self.day = day
        self.key = key
        self.rank = rank
    }
}

/// The rank history of an SQLite database (`--history ranks`): what a reader needs of how it is stored, and the
/// reading, with nothing of how loads write it (SQLite's `RankHistoryLayout` and `RankDayRecorder` in EPFStore).
///
/// Days are export dates (ms since 1970 UTC) and count per chart table: a day is recorded for a chart when a load
/// of its popularity table was recorded for that day. A day not recorded is "no data" (nil here), never an empty
/// chart; a day recorded without a storefront and genre's chart holds it empty ([], depth 0).
///
/// Tables (SQLite):
/// - `daysTable` (`chart`, `export_date`, `keyframe`, `charts`, `entries`): the recorded days of each chart table,
///   whether the day's lists are keyframes the other days are coded against, how many charts and entries it holds;
/// - `listsTable` (`chart`, `storefront_id`, `genre_id`, `export_date`, `base_date`, `depth`, `list`): one row per
///   chart per day, `list` its ids in rank order coded by `RankListCodec`: a keyframe (`base_date` NULL) or a delta
///   against the same chart's list of `base_date` (the recorded day before, itself a keyframe or a delta: a list
///   decodes through its chain back to a keyframe, `RankListChain`, at most `keyframeSpan` before it); `depth` the
///   number of entries;
/// - `RankItemIndex.table`: the charts each recorded day's items were in (`RankItemIndex`), so an item's history
///   reads only the charts it was in;
/// - `spansTable` (`id`, `chart`, `storefront_id`, `genre_id`, `entered_day`, `left_day`), only in databases
///   recorded before the item index: the spans of days an item was in a chart, in whole UTC days since 1970
///   (`spanDay`; `left_day` exclusive, NULL while it still is), and `newSpansTable`, the same columns. A span may
///   be wider than the presence (never narrower): the lists decide. The first day such a database records with the
///   index ends every open span after the newest day recorded before, and the index lists the days from then on;
/// - `newListsTable`, the columns of `listsTable`: the lists of the days since each chart table's newest keyframe
///   day, moved into `listsTable` on its next (absent from databases recorded by earlier versions: then every
///   list is in `listsTable`). A list is in one of the two tables; readers read both (`overLists`).
package struct RankHistoryRead {
    /// The recorded days of each chart table.
    package static let daysTable = "epf_rank_days"
    /// One row per chart (chart table, storefront, genre) and day.
    package static let listsTable = "epf_rank_lists"
    /// When items entered and left charts.
    package static let spansTable = "epf_rank_spans"
    /// The spans opened since a chart table's last keyframe day.
    package static let newSpansTable = "epf_rank_spans_new"
    /// The lists of the days since a chart table's newest keyframe day.
    package static let newListsTable = "epf_rank_lists_new"
    /// The index of `listsTable` by (chart, day), and that of `newListsTable`.
    package static let listsDayIndex = "epf_rank_lists_day"
    package static let newListsDayIndex = "epf_rank_lists_new_day"
    /// The `epf_settings` word of `--history` that records ranks.
    package static let settingWord = "ranks"

    /// Milliseconds in a span's day.
    package static let dayLength: Int64 = 86_400_000

    /// A day's lists are deltas while a keyframe day lies at most this long before it (two weeks), so a list's
    /// chain holds at most the days since: a chart on a day is at most 14 rows side by side. Against a week, the
    /// first 42 generated days took 1.61 bytes of lists an entry instead of 1.87, as a keyframe costs about 5.
    package static let keyframeSpan: Int64 = 14 * dayLength

    /// The span day of a day an item entered (rounded down: spans are never narrower than the presence).
    package static func spanDay(entered milliseconds: Int64) -> Int64 {
        milliseconds >= 0 ? milliseconds / dayLength : -((-milliseconds + dayLength - 1) / dayLength)
    }

    /// The span day of a day an item had left by (rounded up).
    package static func spanDay(left milliseconds: Int64) -> Int64 { -spanDay(entered: -milliseconds) }

    private let connection: SQLiteConnection
    /// Whether the database has `spansTable`, `newSpansTable` and the item index.
    private let hasSpans: Bool
    private let hasNewSpans: Bool
    private let hasItemIndex: Bool
    /// Whether the database has `newListsTable`.
    private let hasNewLists: Bool

    /// `select` over the lists: the SELECT that `select` makes of a lists table and its day index (`FROM` and
    /// `INDEXED BY` those names), of `newListsTable` too when `newLists`, joined by `UNION ALL` (a list is in one
    /// table only). The new table comes first: the newest days, which most reads want, are there.
    package static func overLists(newLists: Bool, _ select: (_ table: String, _ dayIndex: String) -> String)
        -> String {
        let settled = select(listsTable, listsDayIndex)
        return newLists ? select(newListsTable, newListsDayIndex) + " UNION ALL " + settled : settled
    }

    private func overLists(_ select: (_ table: String, _ dayIndex: String) -> String) -> String {
        Self.overLists(newLists: hasNewLists, select)
    }

    /// The rank history of `connection`'s database, nil when it holds none (ranks never recorded).
    package init?(_ connection: SQLiteConnection) throws {
        var tables: Set<String> = []
        for name in [Self.listsTable, Self.daysTable, Self.spansTable, Self.newSpansTable, Self.newListsTable,
                     RankItemIndex.table] where try connection.tableExists(name) {
            tables.insert(name)
        }
        self.init(connection, tables: tables)
    }

    /// The rank history of a database with these tables, nil when it holds none.
    package init?(_ connection: SQLiteConnection, tables: Set<String>) {
        guard tables.contains(Self.listsTable), tables.contains(Self.daysTable),
              tables.contains(Self.spansTable) || tables.contains(RankItemIndex.table) else { return nil }
        self.connection = connection
        hasSpans = tables.contains(Self.spansTable)
        hasNewSpans = tables.contains(Self.newSpansTable)
        hasItemIndex = tables.contains(RankItemIndex.table)
        hasNewLists = tables.contains(Self.newListsTable)
    }

    // MARK: Days

    /// The days recorded for `chart` (any chart when nil) from `since` on (every day when nil), oldest first.
    package func recordedDays(chart: RankChart? = nil, since: Int64? = nil) throws -> [Int64] {
        let statement = try connection.prepare("""
            SELECT DISTINCT export_date FROM \(Self.daysTable)
            WHERE (?1 IS NULL OR chart = ?1) AND export_date >= ?2 ORDER BY export_date
            """)
        try statement.bind([chart.map { .integer($0.code) } ?? .null, .integer(since ?? Int64.min)])
        var days: [Int64] = []
        while try statement.step() {
            if let day = statement.int64(at: 0) { days.append(day) }
        }
        return days
    }

    /// The charts recorded on `day` (the chart tables whose popularity that day is recorded), in code order.
    package func recordedCharts(on day: Int64) throws -> [RankChart] {
        try connection.query("SELECT chart FROM \(Self.daysTable) WHERE export_date = ?1 ORDER BY chart",
                             [.integer(day)]).compactMap { row in
            if case .integer(let code) = row.first { return RankChart(code: code) }
            return nil
        }
    }

    /// The newest day recorded for `chart` before `day`, nil when there is none (for an entry's move since the
    /// day before: a chart's previous day may be several days back when days are missing).
    package func recordedDay(before day: Int64, chart: RankChart) throws -> Int64? {
        let value = try connection.scalar("""
            SELECT max(export_date) FROM \(Self.daysTable) WHERE chart = ?1 AND export_date < ?2
            """, [.integer(chart.code), .integer(day)])
        if case .integer(let found)? = value { return found }
        return nil
    }

    /// Whether `day` is recorded for `chart`.
    package func isRecorded(_ day: Int64, chart: RankChart) throws -> Bool {
        try connection.scalar("SELECT 1 FROM \(Self.daysTable) WHERE chart = ?1 AND export_date = ?2",
                              [.integer(chart.code), .integer(day)]) != nil
    }

    // MARK: Charts

    /// The chart `key` as it stood on `day`, best first: nil when the day is not recorded for the chart table (no
    /// data), [] when it is but the table held no entry for the storefront and genre that day.
    /// Throws `RankListCodec.Malformed` for a damaged list.
    package func chart(_ key: RankChartKey, on day: Int64) throws -> [RankedEntry]? {
        guard try isRecorded(day, chart: key.chart) else { return nil }
        let statement = try listStatement()
        var lists = RankListChain(name: name(key)) { date in try listRow(statement, key, on: date) }
        return try lists.entries(on: day) ?? []
    }

    /// The number of entries of chart `key` on `day`: nil when the day is not recorded for the chart table, 0
    /// when the chart was absent.
    package func depth(_ key: RankChartKey, on day: Int64) throws -> Int? {
        guard try isRecorded(day, chart: key.chart) else { return nil }
        let value = try connection.scalar(overLists { table, _ in
            "SELECT depth FROM \(table) WHERE chart = ?1 AND storefront_id = ?2 AND genre_id = ?3 AND export_date = ?4"
        }, bindings(key) + [.integer(day)])
        if case .integer(let depth)? = value { return Int(depth) }
        return 0
    }

    /// Every chart of `chart`'s table recorded on `day` (in `storefront` only when given) with its depth; empty
    /// when the day is not recorded.
    package func depths(chart: RankChart, on day: Int64, storefront: Int64? = nil) throws -> [RankChartKey: Int] {
        let statement = try connection.prepare(overLists { table, dayIndex in
            """
            SELECT storefront_id, genre_id, depth FROM \(table) INDEXED BY \(dayIndex)
            WHERE chart = ?1 AND export_date = ?2 AND (?3 IS NULL OR storefront_id = ?3)
            """
        })
        try statement.bind([.integer(chart.code), .integer(day), storefront.map { .integer($0) } ?? .null])
        var depths: [RankChartKey: Int] = [:]
        while try statement.step() {
            guard let storefrontID = statement.int64(at: 0), let genreID = statement.int64(at: 1) else { continue }
            depths[RankChartKey(chart: chart, storefrontID: storefrontID, genreID: genreID)] =
                Int(statement.int64(at: 2) ?? 0)
        }
        return depths
    }

    // MARK: An item's history

    /// The charts item `id` may have been in from `since` on (every day when nil), narrowed as `history` narrows,
    /// each with the days to read (`from` inclusive, `to` exclusive, export dates): what the item index (and the
    /// spans of a database recorded before it) name, never fewer than the item was in; the lists decide.
    package func charts(of id: Int64, since: Int64? = nil, chart: RankChart? = nil, storefront: Int64? = nil,
                        genre: Int64? = nil) throws -> [(key: RankChartKey, from: Int64, to: Int64)] {
        // Clamped so day arithmetic cannot overflow (about 142,000 years before 1970).
        let from = max(since ?? Int64.min, -(1 << 52))
        let filter = ChartFilter(chart: chart, storefront: storefront, genre: genre)
        var found: [RankChartKey: (from: Int64, to: Int64)] = [:]
        func add(_ key: RankChartKey, from start: Int64, to end: Int64) {
            guard filter.admits(key), end > from else { return }
            let known = found[key]
            found[key] = (min(known?.from ?? Int64.max, max(from, start)), max(known?.to ?? Int64.min, end))
        }
        if hasItemIndex { try indexedCharts(of: id, from: from, chart: chart, add) }
        if hasSpans { try spannedCharts(of: id, from: from, add) }
        return found.map { (key: $0.key, from: $0.value.from, to: $0.value.to) }
    }

    /// Every recorded rank of item `id` from `since` on (every day when nil), in every chart it was in, narrowed
    /// to `chart`, `storefront` and `genre` where given; ordered by day, then chart key. A day the item is absent
    /// from a recorded chart has no point (compare `recordedDays`); apps and songs share no chart, but an app and
    /// a song of the same number would both be found unless `chart` says which.
    /// Throws `RankListCodec.Malformed` for a damaged list.
    package func history(of id: Int64, since: Int64? = nil, chart: RankChart? = nil, storefront: Int64? = nil,
                         genre: Int64? = nil) throws -> [RankHistoryPoint] {
        let ranges = try charts(of: id, since: since, chart: chart, storefront: storefront, genre: genre)
        let rows = try connection.prepare(overLists { table, _ in
            """
            SELECT export_date, base_date, list FROM \(table)
            WHERE chart = ?1 AND storefront_id = ?2 AND genre_id = ?3 AND export_date >= ?4 AND export_date < ?5
            """
        } + " ORDER BY export_date")
        var points: [RankHistoryPoint] = []
        for range in ranges {
            // From a keyframe span before the first day asked, where the chains of the days asked begin: each
            // day's place of the item is then its base day's, read one row before.
            let start = range.from >= Int64.min + Self.keyframeSpan ? range.from - Self.keyframeSpan : Int64.min
            try rows.bind(bindings(range.key) + [.integer(start), .integer(range.to)])
            defer { rows.reset() }
            var places: [Int64: Place] = [:]
            while try rows.step() {
                guard let day = rows.int64(at: 0) else { continue }
                var base = Place(index: nil, count: 0)
                if let baseDate = rows.int64(at: 1) {
                    if let known = places[baseDate] {
                        base = known
                    } else if day < range.from {
                        continue
                    } else {
                        base = try place(of: id, key: range.key, on: baseDate, known: &places)
                    }
                }
                let found = try rows.withBlob(at: 2) { bytes in
                    (count: try RankListCodec.count(bytes),
                     at: try RankListCodec.locate(id, in: bytes, basePosition: base.index, baseCount: base.count))
                }
                guard let found else { continue }
                places[day] = Place(index: found.at?.index, count: found.count)
                if day >= range.from, let rank = found.at?.rank {
                    points.append(RankHistoryPoint(day: day, key: range.key, rank: rank))
                }
            }
        }
        points.sort { ($0.day, $0.key) < ($1.day, $1.key) }
        return points
    }

    /// The narrowing `history` applies to the charts it reads.
    private struct ChartFilter {
        let chart: RankChart?
        let storefront: Int64?
        let genre: Int64?

        func admits(_ key: RankChartKey) -> Bool {
            (chart.map { $0 == key.chart } ?? true) && (storefront.map { $0 == key.storefrontID } ?? true)
                && (genre.map { $0 == key.genreID } ?? true)
        }
    }

    /// The charts the item index names for item `id` on the recorded days from `from` on, each with the days its
    /// listing covers (a day's rows name charts for the `keyframeSpan` from it, `RankItemIndex`), given to `add`.
    private func indexedCharts(of id: Int64, from: Int64, chart: RankChart?,
                               _ add: (RankChartKey, Int64, Int64) -> Void) throws {
        // One statement: each recorded day's list that would hold the item (the last starting at or before it).
        let lists = try connection.prepare("""
            SELECT d.chart, d.export_date, i.first_id, i.list
            FROM \(Self.daysTable) AS d JOIN \(RankItemIndex.table) AS i
                ON i.chart = d.chart AND i.export_date = d.export_date AND i.first_id = (
                    SELECT max(first_id) FROM \(RankItemIndex.table)
                    WHERE chart = d.chart AND export_date = d.export_date AND first_id <= ?3)
            WHERE d.export_date > ?1 AND (?2 IS NULL OR d.chart = ?2)
            """)
        try lists.bind([.integer(from - Self.keyframeSpan), chart.map { .integer($0.code) } ?? .null, .integer(id)])
        while try lists.step() {
            guard let code = lists.int64(at: 0), let kind = RankChart(code: code), let day = lists.int64(at: 1),
                  let firstID = lists.int64(at: 2) else { continue }
            let charts = try lists.withBlob(at: 3) { bytes throws(RankListCodec.Malformed) in
                try RankItemIndex.charts(of: id, in: bytes, firstID: firstID)
            } ?? []
            let end = day <= Int64.max - Self.keyframeSpan ? day + Self.keyframeSpan : Int64.max
            for found in charts {
                add(RankChartKey(chart: kind, storefrontID: found.storefrontID, genreID: found.genreID), day, end)
            }
        }
    }

    /// The charts the spans of a database recorded before the item index name for item `id` from `from` on, with
    /// the days they cover, given to `add`.
    private func spannedCharts(of id: Int64, from: Int64, _ add: (RankChartKey, Int64, Int64) -> Void) throws {
        let columns = "chart, storefront_id, genre_id, entered_day, left_day"
        let newSpans = hasNewSpans ? " UNION ALL SELECT \(columns) FROM \(Self.newSpansTable) WHERE id = ?1" : ""
        let spans = try connection.prepare("""
            SELECT chart, storefront_id, genre_id, min(entered_day), max(coalesce(left_day, 106751991167))
            FROM (SELECT \(columns) FROM \(Self.spansTable) WHERE id = ?1\(newSpans))
            WHERE left_day IS NULL OR left_day > ?2
            GROUP BY chart, storefront_id, genre_id
            """)
        try spans.bind([.integer(id), .integer(Self.spanDay(entered: from))])
        while try spans.step() {
            guard let code = spans.int64(at: 0), let kind = RankChart(code: code),
                  let storefrontID = spans.int64(at: 1), let genreID = spans.int64(at: 2) else { continue }
            let entered = (spans.int64(at: 3) ?? Int64.min / Self.dayLength) * Self.dayLength
            let left = spans.int64(at: 4) ?? 106_751_991_167
            add(RankChartKey(chart: kind, storefrontID: storefrontID, genreID: genreID), entered,
                left >= 106_751_991_167 ? Int64.max : left * Self.dayLength)
        }
    }

    // MARK: Rows

    private func bindings(_ key: RankChartKey) -> [SQLValue] {
        [.integer(key.chart.code), .integer(key.storefrontID), .integer(key.genreID)]
    }

    /// The statement `listRow` reads with.
    private func listStatement() throws -> SQLiteStatement {
        try connection.prepare(overLists { table, _ in
            """
            SELECT base_date, list FROM \(table)
            WHERE chart = ?1 AND storefront_id = ?2 AND genre_id = ?3 AND export_date = ?4
            """
        } + " LIMIT 1")
    }

    private func listRow(_ statement: SQLiteStatement, _ key: RankChartKey,
                         on day: Int64) throws -> RankListChain.Row? {
        try statement.bind(bindings(key) + [.integer(day)])
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        guard case .blob(let list) = statement.value(at: 1) else {
            throw RankListCodec.Malformed(description: "the \(key.chart.rawValue) chart of storefront "
                                          + "\(key.storefrontID), genre \(key.genreID) on \(day) holds no list")
        }
        return (statement.int64(at: 0), list)
    }

    /// Where an item stands in a chart's list of a day: its index (nil: not there) and the list's size, what a
    /// delta coded against that list needs to find the item's slot.
    private struct Place {
        let index: Int?
        let count: Int
    }

    /// The item's place in `key`'s list of `day`, read through the day's chain back to a place known or a keyframe
    /// (for a chain that begins before the rows read); each place found is added to `known`.
    private func place(of id: Int64, key: RankChartKey, on day: Int64, known: inout [Int64: Place]) throws -> Place {
        var chain: [(day: Int64, list: [UInt8])] = []
        var base = Place(index: nil, count: 0)
        var current = day
        let statement = try listStatement()
        while true {
            guard let row = try listRow(statement, key, on: current) else {
                throw RankListCodec.Malformed(description: "\(name(key)) names a base on \(current) that is not "
                                              + "recorded")
            }
            chain.append((current, row.list))
            guard let baseDate = row.baseDate else { break }
            if let place = known[baseDate] {
                base = place
                break
            }
            guard baseDate < current, chain.count < 10_000 else {
                throw RankListCodec.Malformed(description: "\(name(key)) on \(current) names a base on \(baseDate) "
                                              + "that is not an earlier day of a chain")
            }
            current = baseDate
        }
        for link in chain.reversed() {
            let at = base
            base = try link.list.withUnsafeBytes { bytes in
                let found = try RankListCodec.locate(id, in: bytes, basePosition: at.index, baseCount: at.count)
                return Place(index: found?.index, count: try RankListCodec.count(bytes))
            }
            known[link.day] = base
        }
        return base
    }

    private func name(_ key: RankChartKey) -> String {
        "the \(key.chart.rawValue) chart of storefront \(key.storefrontID), genre \(key.genreID)"
    }
}
