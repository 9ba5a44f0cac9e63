import EPFSchema
import EPFSQLite
import Foundation

/// Records one day of one chart table into SQLite's rank history (`RankHistoryLayout`), in the caller's
/// transaction, from a table with the popularity table's columns (the load's new table, before it is renamed into
/// place): every storefront and genre's chart as the table holds it, ranks as they are (duplicates, gaps), rows
/// without a rank, storefront, genre or id left out.
///
/// - A day's lists are keyframes when no keyframe day of the chart lies in the `keyframeSpan` before it (or it was
///   one and is recorded again), else deltas against the same chart's list on the recorded day before it (a
///   keyframe or a delta, so a list decodes through a chain of at most the days since its keyframe day), or
///   keyframes where the delta is not smaller (or that chart has no list that day).
/// - A day recorded again replaces itself: its old lists go, and the lists coded against it are decoded first and
///   coded again against the new ones.
/// - A day older than days already recorded lands in its place: no other day's list changes.
/// - Lists of days after the chart table's newest keyframe day go to `RankHistoryLayout.newLists`, the others to
///   `lists`; a keyframe day recorded as the newest first moves the chart table's new lists into `lists`.
/// - The item index (`RankItemIndex`): the day's items with their charts, or only those that entered a chart since
///   the recorded day before and were not in it on the keyframe day (which listed them) when the day is the
///   newest, not a keyframe day, not recorded before, and follows a day the index holds (its rows are what
///   `RankItemIndex` says a reader may rely on). A day recorded again adds
///   its items to those it listed before (days after it may have listed only what entered since its old charts).
///   Written once the day's charts are coded, in id order, a few rows a day: the spans this replaced (an UPDATE or
///   INSERT per item that entered or left, all over an index keyed by item, and every leaving item closed on a
///   keyframe day) were most of the recording's time. A database recorded with spans keeps them for its earlier
///   days: the chart table's first indexed day closes its open spans after its newest recorded day.
final class RankDayRecorder {
    private typealias Layout = RankHistoryLayout

    private let connection: SQLiteConnection
    private let chart: RankChart
    private let day: Int64
    /// Whether the day was recorded before (it replaces itself).
    private var replacing = false
    /// The day's keyframe day: the day itself, or an earlier keyframe day of the `keyframeSpan` before.
    private var keyframeDay: Int64 = 0
    /// The first day of the chains the recording decodes: the keyframe day of the day before (or of the day).
    private var chainStart: Int64 = 0
    /// The chart table's newest keyframe day, the day's own included: the lists of later days are new lists.
    private var newestKeyframe: Int64 = 0
    /// The day's new lists by chart, kept when the day replaces itself (lists coded against it are coded again).
    private var newLists: [RankChartKey: [Int64]] = [:]
    /// The recorded days just before and after the day.
    private var previousDay: Int64?
    private var nextDay: Int64?

    /// Whether the day is a keyframe day recorded as the newest (it moves the chart table's new lists).
    private var settlesNewLists = false
    /// Whether the index gets only the items that entered a chart since the day before (`RankItemIndex`), and
    /// whether those in the chart on the day's keyframe day are left out too (the keyframe day listed them all).
    private var indexesEntrants = false
    private var keyframeIndexed = false
    /// The index entries of the day, gathered chart by chart.
    private var indexEntries: [RankItemIndex.Entry] = []

    private var listRow: SQLiteStatement
    private let chainRows: SQLiteStatement
    /// The statements that write a list into `Layout.lists` and into `Layout.newLists`.
    private let settledListRows: ListStatements
    private let newListRows: ListStatements

    /// What the day holds once recorded.
    private(set) var charts = 0
    private(set) var entries = 0

    init(_ connection: SQLiteConnection, chart: RankChart, day: Int64) throws {
        self.connection = connection
        self.chart = chart
        self.day = day
        try Layout.prepare(connection)
        listRow = try connection.prepare(Self.overLists { table, _ in
            """
            SELECT base_date, list FROM \(table)
            WHERE chart = ?1 AND storefront_id = ?2 AND genre_id = ?3 AND export_date = ?4
            """
        } + " LIMIT 1")
        chainRows = try connection.prepare(Self.overLists { table, _ in
            """
            SELECT export_date, base_date, list FROM \(table)
            WHERE chart = ?1 AND storefront_id = ?2 AND genre_id = ?3 AND export_date >= ?4 AND export_date <= ?5
            """
        })
        settledListRows = try ListStatements(connection, table: Layout.lists)
        newListRows = try ListStatements(connection, table: Layout.newLists)
    }

    /// Records the day from `source`, a table with the chart table's columns.
    func record(from source: String) throws {
        try record(try Self.read(source, chart: chart, connection: connection))
    }

    /// Every storefront and genre's entries of `source` (a table with `chart`'s columns), in the table's order.
    static func read(_ source: String, chart: RankChart,
                     connection: SQLiteConnection) throws -> [RankChartKey: [RankedEntry]] {
        // The table in its own order (a scan: sorting it in SQL cost more than the rest of the recording), each
        // storefront and genre's rows gathered.
        let select = try connection.prepare("""
            SELECT storefront_id, genre_id, \(chart.rankColumn), \(chart.idColumn)
            FROM \(SQLiteConnection.quote(source))
            WHERE storefront_id IS NOT NULL AND genre_id IS NOT NULL AND \(chart.rankColumn) IS NOT NULL
                AND \(chart.idColumn) IS NOT NULL
            """)
        var groups: [RankChartKey: [RankedEntry]] = [:]
        var key: RankChartKey?
        var group: [RankedEntry] = []
        while try select.step() {
            let next = RankChartKey(chart: chart, storefrontID: select.columnInt64(0), genreID: select.columnInt64(1))
            if next != key {
                if let key { groups[key, default: []].append(contentsOf: group) }
                key = next
                group.removeAll(keepingCapacity: true)
            }
            group.append(RankedEntry(rank: Int(clamping: select.columnInt64(2)), id: select.columnInt64(3)))
        }
        if let key { groups[key, default: []].append(contentsOf: group) }
        return groups
    }

    /// Records the day from every storefront and genre's entries (`groups`, each in any order: sorted here by rank
    /// and id), all of the day's chart table.
    func record(_ groups: consuming [RankChartKey: [RankedEntry]]) throws {
        try settleDays()
        if settlesNewLists { try newListRows.move(into: settledListRows, chart: chart.code) }
        let dependents = replacing ? try decodeDependents() : []
        let keys = groups.keys.sorted()
        for key in keys {
            guard var entries = groups.removeValue(forKey: key) else { continue }
            entries.sort { ($0.rank, $0.id) < ($1.rank, $1.id) }
            try recordChart(key, entries)
        }
        if replacing { try forgetCharts(notIn: Set(keys)) }
        try writeIndex()
        for dependent in dependents { try recode(dependent) }
        let days = try connection.prepare("""
            INSERT OR REPLACE INTO \(Layout.days) (chart, export_date, keyframe, charts, entries, recorded)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6)
            """)
        try days.bind([.integer(chart.code), .integer(day), .integer(keyframeDay == day ? 1 : 0),
                       .integer(Int64(charts)), .integer(Int64(entries)), .text(StoreDatabase.now())])
        try days.runOnce()
    }

    // MARK: The day's place

    /// Finds whether the day replaces itself, its neighbours and its keyframe day.
    private func settleDays() throws {
        let code = SQLValue.integer(chart.code)
        let at = SQLValue.integer(day)
        let known = try connection.query("SELECT keyframe FROM \(Layout.days) WHERE chart = ?1 AND export_date = ?2",
                                         [code, at])
        replacing = !known.isEmpty
        previousDay = try integer("SELECT max(export_date) FROM \(Layout.days) WHERE chart = ?1 AND export_date < ?2",
                                  [code, at])
        nextDay = try integer("SELECT min(export_date) FROM \(Layout.days) WHERE chart = ?1 AND export_date > ?2",
                              [code, at])
        if known.first?.first == .integer(1) {
            keyframeDay = day
        } else {
            keyframeDay = try integer("""
                SELECT max(export_date) FROM \(Layout.days)
                WHERE chart = ?1 AND keyframe = 1 AND export_date < ?2 AND export_date > ?2 - ?3
                """, [code, at, .integer(Layout.keyframeSpan)]) ?? day
        }
        newestKeyframe = max(keyframeDay == day ? day : Int64.min, try integer(
            "SELECT max(export_date) FROM \(Layout.days) WHERE chart = ?1 AND keyframe = 1", [code]) ?? Int64.min)
        let last = previousDay ?? day
        chainStart = try integer("""
            SELECT max(export_date) FROM \(Layout.days) WHERE chart = ?1 AND keyframe = 1 AND export_date <= ?2
            """, [code, .integer(last)]) ?? last
        settlesNewLists = nextDay == nil && keyframeDay == day
        if nextDay == nil, !replacing, keyframeDay != day, let previousDay {
            let indexed = "SELECT 1 FROM \(RankItemIndex.table) WHERE chart = ?1 AND export_date = ?2 LIMIT 1"
            indexesEntrants = try connection.scalar(indexed, [code, .integer(previousDay)]) != nil
            keyframeIndexed = try indexesEntrants && connection.scalar(indexed, [code, .integer(keyframeDay)]) != nil
        }
    }

    private func run(_ sql: String, _ bindings: [SQLValue]) throws {
        let statement = try connection.prepare(sql)
        try statement.bind(bindings)
        try statement.runOnce()
    }

    private func integer(_ sql: String, _ bindings: [SQLValue]) throws -> Int64? {
        if case .integer(let value)? = try connection.scalar(sql, bindings) { return value }
        return nil
    }

    /// `select` over both lists tables (`RankHistoryRead.overLists`).
    private static func overLists(_ select: (_ table: String, _ dayIndex: String) -> String) -> String {
        RankHistoryRead.overLists(newLists: true, select)
    }

    // MARK: One chart

    private func recordChart(_ key: RankChartKey, _ group: [RankedEntry]) throws {
        var lists = try chain(key)
        let base = try keyframeDay == day ? nil : previousDay.flatMap { previous in
            try lists.ids(on: previous).map { (day: previous, ids: $0, index: RankListCodec.BaseIndex($0)) }
        }
        try write(key, on: day, group, base: base)
        if replacing { newLists[key] = group.map(\.id) }
        charts += 1
        entries += group.count
        // An item back in the chart since the keyframe day is listed there (an item going in and out near the
        // chart's depth would otherwise be listed again each time it comes back).
        let keyframe = keyframeIndexed ? try lists.ids(on: keyframeDay) ?? [] : []
        for entry in group where !indexesEntrants
            || !(base?.index.contains(entry.id) ?? false) && !keyframe.contains(entry.id) {
            indexEntries.append(RankItemIndex.Entry(id: entry.id, storefrontID: key.storefrontID,
                                                    genreID: key.genreID))
        }
    }

    /// The chart's lists from `chainStart` to the day, read in one scan (the rest are read as needed).
    private func chain(_ key: RankChartKey) throws -> RankListChain {
        var lists = RankListChain(name: name(key)) { [self] date in try row(key, on: date) }
        try chainRows.bind([.integer(key.chart.code), .integer(key.storefrontID), .integer(key.genreID),
                            .integer(min(chainStart, day)), .integer(day)])
        defer { chainRows.reset() }
        while try chainRows.step() {
            guard let date = chainRows.int64(at: 0), case .blob(let list) = chainRows.value(at: 2) else { continue }
            lists.add((chainRows.int64(at: 1), list), on: date)
        }
        return lists
    }

    private func name(_ key: RankChartKey) -> String {
        "the \(key.chart.rawValue) chart of storefront \(key.storefrontID), genre \(key.genreID)"
    }

    /// Writes the list of `key` on `date`: a delta against `base` (a day's ids, indexed) when there is one and it
    /// is smaller.
    private func write(_ key: RankChartKey, on date: Int64, _ group: [RankedEntry],
                       base: (day: Int64, ids: [Int64], index: RankListCodec.BaseIndex)?) throws {
        var list: [UInt8] = []
        var baseDate: Int64?
        if let base {
            let delta = RankListCodec.delta(group, base: base.index)
            if delta.count < RankListCodec.keyframeSize(group) {
                list = delta
                baseDate = base.day
            }
        }
        if baseDate == nil { list = RankListCodec.keyframe(group) }
        let (table, other) = date > newestKeyframe ? (newListRows, settledListRows) : (settledListRows, newListRows)
        // A list written before (the day recorded again, or a list coded against it) may be in the other table.
        if replacing { try other.delete(key, on: date) }
        try table.insert(key, on: date, baseDate: baseDate, depth: group.count, list: list)
    }

    /// Writes the day's index rows (`RankItemIndex`): the gathered entries in id order, with those the day listed
    /// before when it is recorded again; at least one row, so a later day knows this one is indexed.
    private func writeIndex() throws {
        let code = SQLValue.integer(chart.code)
        let at = SQLValue.integer(day)
        try closeLegacySpans()
        if replacing {
            let old = try connection.prepare(
                "SELECT first_id, list FROM \(RankItemIndex.table) WHERE chart = ?1 AND export_date = ?2")
            try old.bind([code, at])
            while try old.step() {
                let firstID = old.columnInt64(0)
                let listed: [RankItemIndex.Entry]? = try old.withBlob(at: 1) { bytes in
                    var entries: [RankItemIndex.Entry] = []
                    try RankItemIndex.appendEntries(of: bytes, firstID: firstID, to: &entries)
                    return entries
                }
                indexEntries += listed ?? []
            }
            try run("DELETE FROM \(RankItemIndex.table) WHERE chart = ?1 AND export_date = ?2", [code, at])
        }
        indexEntries.sort()
        let pageSize = try integer("PRAGMA page_size", []) ?? 4096
        let lists = RankItemIndex.lists(indexEntries, listBytes: RankItemIndex.listBytes(pageSize: Int(pageSize)))
        indexEntries = []
        let columns = "\(RankItemIndex.table) (chart, export_date, first_id, list)"
        guard !lists.isEmpty else {
            return try run("INSERT INTO \(columns) VALUES (?1, ?2, 0, zeroblob(0))", [code, at])
        }
        let insert = try connection.prepare("INSERT INTO \(columns) VALUES (?1, ?2, ?3, ?4)")
        for list in lists {
            try insert.bind([code, at, .integer(list.firstID), .blob(list.bytes)])
            try insert.runOnce()
        }
    }

    /// A database recorded with spans (`RankHistoryRead.spansTable`) before the index: the chart table's first
    /// indexed day ends its open spans after the chart table's newest recorded day (the index lists the items of
    /// the days from this one on, and of any day recorded again).
    private func closeLegacySpans() throws {
        let code = SQLValue.integer(chart.code)
        guard try connection.tableExists(RankHistoryRead.spansTable),
              try connection.scalar("SELECT 1 FROM \(RankItemIndex.table) WHERE chart = ?1 LIMIT 1", [code]) == nil
        else { return }
        let newest = max(day, try integer("SELECT max(export_date) FROM \(Layout.days) WHERE chart = ?1", [code])
                         ?? day)
        let left = SQLValue.integer(RankHistoryRead.spanDay(left: newest) + 1)
        for table in [RankHistoryRead.spansTable, RankHistoryRead.newSpansTable]
        where try connection.tableExists(table) {
            try run("UPDATE \(table) SET left_day = ?2 WHERE chart = ?1 AND left_day IS NULL", [code, left])
        }
    }

    /// The charts the day recorded again lacks lose their old lists of it.
    private func forgetCharts(notIn recorded: Set<RankChartKey>) throws {
        var gone: [RankChartKey] = []
        let keys = try connection.prepare(Self.overLists { table, dayIndex in
            """
            SELECT storefront_id, genre_id FROM \(table) INDEXED BY \(dayIndex)
            WHERE chart = ?1 AND export_date = ?2
            """
        })
        try keys.bind([.integer(chart.code), .integer(day)])
        while try keys.step() {
            let key = RankChartKey(chart: chart, storefrontID: keys.columnInt64(0), genreID: keys.columnInt64(1))
            if !recorded.contains(key) { gone.append(key) }
        }
        for key in gone {
            try settledListRows.delete(key, on: day)
            try newListRows.delete(key, on: day)
        }
    }

    // MARK: Lists coded against a day recorded again

    /// A list of a later day coded against the day's old list, decoded.
    private struct Dependent {
        let key: RankChartKey
        let day: Int64
        let entries: [RankedEntry]
    }

    /// The lists coded against the day (a delta's base is at most `keyframeSpan` before it), decoded through the
    /// day's old lists.
    private func decodeDependents() throws -> [Dependent] {
        let rows = try connection.prepare(Self.overLists { table, dayIndex in
            """
            SELECT storefront_id, genre_id, export_date FROM \(table) INDEXED BY \(dayIndex)
            WHERE chart = ?1 AND export_date > ?2 AND export_date < ?2 + ?3 AND base_date = ?2
            """
        })
        try rows.bind([.integer(chart.code), .integer(day), .integer(Layout.keyframeSpan)])
        var found: [(RankChartKey, Int64)] = []
        while try rows.step() {
            found.append((RankChartKey(chart: chart, storefrontID: rows.columnInt64(0), genreID: rows.columnInt64(1)),
                          rows.columnInt64(2)))
        }
        return try found.compactMap { key, date in
            try decodedChart(key, on: date).map { Dependent(key: key, day: date, entries: $0) }
        }
    }

    /// Codes a dependent again, against the day's new list of its chart (a keyframe itself when there is none).
    private func recode(_ dependent: Dependent) throws {
        try write(dependent.key, on: dependent.day, dependent.entries,
                  base: newLists[dependent.key].map { (day, $0, RankListCodec.BaseIndex($0)) })
    }

    // MARK: Reading stored lists

    private func row(_ key: RankChartKey, on date: Int64) throws -> RankListChain.Row? {
        try listRow.bind([.integer(key.chart.code), .integer(key.storefrontID), .integer(key.genreID), .integer(date)])
        defer { listRow.reset() }
        guard try listRow.step() else { return nil }
        guard case .blob(let list) = listRow.value(at: 1) else {
            throw RankListCodec.Malformed(description: "\(name(key)) on \(date) holds no list")
        }
        return (listRow.int64(at: 0), list)
    }

    /// The stored chart of `key` on `date`, nil when there is no list.
    private func decodedChart(_ key: RankChartKey, on date: Int64) throws -> [RankedEntry]? {
        var lists = RankListChain(name: name(key)) { [self] date in try row(key, on: date) }
        return try lists.entries(on: date)
    }
}

/// The statements `RankDayRecorder` runs on one lists table (`RankHistoryLayout.lists` or `newLists`).
private struct ListStatements {
    let table: String
    private let insertList: SQLiteStatement
    private let deleteList: SQLiteStatement
    private let connection: SQLiteConnection

    init(_ connection: SQLiteConnection, table: String) throws {
        self.connection = connection
        self.table = table
        insertList = try connection.prepare("""
            INSERT OR REPLACE INTO \(table) (chart, storefront_id, genre_id, export_date, base_date, depth, list)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
            """)
        deleteList = try connection.prepare("""
            DELETE FROM \(table) WHERE chart = ?1 AND storefront_id = ?2 AND genre_id = ?3 AND export_date = ?4
            """)
    }

    /// Writes the list of `key` on `date` (coded against `baseDate`, nil: a keyframe), replacing one there.
    func insert(_ key: RankChartKey, on date: Int64, baseDate: Int64?, depth: Int, list: [UInt8]) throws {
        try insertList.bind([.integer(key.chart.code), .integer(key.storefrontID), .integer(key.genreID),
                             .integer(date), baseDate.map { .integer($0) } ?? .null, .integer(Int64(depth)),
                             .blob(list)])
        try insertList.runOnce()
    }

    /// Deletes the list of `key` on `date`, if this table holds it.
    func delete(_ key: RankChartKey, on date: Int64) throws {
        try deleteList.bind([.integer(key.chart.code), .integer(key.storefrontID), .integer(key.genreID),
                             .integer(date)])
        try deleteList.runOnce()
    }

    /// Moves this table's lists of `chart` into `other` (in key order: both tables are clustered on the same key).
    func move(into other: ListStatements, chart: Int64) throws {
        let columns = "chart, storefront_id, genre_id, export_date, base_date, depth, list"
        try connection.execute("""
            INSERT OR REPLACE INTO \(other.table) (\(columns)) SELECT \(columns) FROM \(table) WHERE chart = \(chart);
            DELETE FROM \(table) WHERE chart = \(chart);
            """)
    }
}
