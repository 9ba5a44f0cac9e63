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
/// - Spans (`RankHistoryRead.spansTable`): an item in the day's chart that was not in the chart the day before
///   (or in the day's old chart, when recorded again) and has no span covering the day gets one from the day, open
///   when the day is the newest, else up to the next recorded day (an item back within four weeks of leaving
///   reopens its span instead). Items that leave keep their spans open until the next keyframe day recorded as the
///   newest closes those of every item of the chart's lists since the keyframe day before that the keyframe day's
///   chart lacks (a newest day recorded again closes those its old chart had and the new lacks): an item that
///   leaves and comes back within the two weeks costs no write (closing every item as it left, and reopening it as
///   it came back, was most of the recording's writes). Spans so found may be wider than the presence, never
///   narrower: readers decode the lists.
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

    /// Which items' open spans the day closes.
    private enum Closing {
        /// None: the day is not the newest, or items that leave keep their spans open until a keyframe day.
        case none
        /// A keyframe day recorded as the newest: every item of the chart's lists from `chainStart` to the day
        /// (the day's old lists included) that the day's chart lacks.
        case period
        /// Another newest day recorded again: the items of its old chart the new one lacks.
        case replaced
    }

    private var closing = Closing.none

    private var listRow: SQLiteStatement
    private let chainRows: SQLiteStatement
    /// The statements that write a list into `Layout.lists` and into `Layout.newLists`.
    private let settledListRows: ListStatements
    private let newListRows: ListStatements
    /// The statements on the spans of `Layout.spans` and of `Layout.newSpans`.
    private let spans: SpanStatements
    private let newSpans: SpanStatements

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
        spans = try SpanStatements(connection, table: Layout.spans)
        newSpans = try SpanStatements(connection, table: Layout.newSpans)
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
        if closing == .period { try newListRows.move(into: settledListRows, chart: chart.code) }
        let dependents = replacing ? try decodeDependents() : []
        let referenceDay = replacing ? day : previousDay
        let keys = groups.keys.sorted()
        for key in keys {
            guard var entries = groups.removeValue(forKey: key) else { continue }
            entries.sort { ($0.rank, $0.id) < ($1.rank, $1.id) }
            try recordChart(key, entries, referenceDay: referenceDay)
        }
        try forgetCharts(notIn: Set(keys))
        try writeSpans()
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
        closing = nextDay != nil ? .none : keyframeDay == day ? .period : replacing ? .replaced : .none
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

    private func recordChart(_ key: RankChartKey, _ group: [RankedEntry], referenceDay: Int64?) throws {
        var (lists, dates) = try chain(key)
        let base = keyframeDay == day ? nil : try previousDay.flatMap { try lists.ids(on: $0) }
        let reference = try referenceDay.flatMap { try lists.ids(on: $0) } ?? []
        let ids = group.map(\.id)
        let leaving = try closed(&lists, dates: dates, reference: reference)
        try write(key, on: day, group, base: base.map { (previousDay ?? day, $0) })
        if replacing { newLists[key] = ids }
        charts += 1
        entries += group.count
        updateSpans(key, now: ids, before: reference, leaving: leaving)
    }

    /// The chart's lists from `chainStart` to the day, read in one scan (the rest are read as needed), and the
    /// days of those lists.
    private func chain(_ key: RankChartKey) throws -> (RankListChain, [Int64]) {
        var lists = RankListChain(name: name(key)) { [self] date in try row(key, on: date) }
        var dates: [Int64] = []
        try chainRows.bind([.integer(key.chart.code), .integer(key.storefrontID), .integer(key.genreID),
                            .integer(min(chainStart, day)), .integer(day)])
        defer { chainRows.reset() }
        while try chainRows.step() {
            guard let date = chainRows.int64(at: 0), case .blob(let list) = chainRows.value(at: 2) else { continue }
            lists.add((chainRows.int64(at: 1), list), on: date)
            dates.append(date)
        }
        return (lists, dates)
    }

    /// The items whose open spans the day may close (`Closing`), before the day's chart is taken out of them.
    private func closed(_ lists: inout RankListChain, dates: [Int64], reference: [Int64]) throws -> [Int64] {
        switch closing {
        case .none: return []
        case .replaced: return reference
        case .period:
            var ids: [Int64] = []
            for date in dates where date <= day { ids += try lists.ids(on: date) ?? [] }
            return ids
        }
    }

    private func name(_ key: RankChartKey) -> String {
        "the \(key.chart.rawValue) chart of storefront \(key.storefrontID), genre \(key.genreID)"
    }

    /// Writes the list of `key` on `date`: a delta against `base` (a day's ids) when there is one and it is smaller.
    private func write(_ key: RankChartKey, on date: Int64, _ group: [RankedEntry],
                       base: (day: Int64, ids: [Int64])?) throws {
        var list: [UInt8] = []
        var baseDate: Int64?
        if let base {
            let delta = RankListCodec.delta(group, base: RankListCodec.BaseIndex(base.ids))
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

    /// An item entering or leaving a chart of the day, written once the day's charts are done, in the spans'
    /// key order (written as found, an item's random place in the index made a first day's millions of spans
    /// several times dearer).
    struct SpanChange: Comparable {
        let id: Int64
        let storefrontID: Int64
        let genreID: Int64

        static func < (lhs: Self, rhs: Self) -> Bool {
            (lhs.id, lhs.storefrontID, lhs.genreID) < (rhs.id, rhs.storefrontID, rhs.genreID)
        }
    }

    /// Days out of a chart after which an item's return starts a new span (within them its span reopens): four
    /// weeks took the spans of 90 generated days from 19.5 to 13.0 MB; an item's history reads a few more lists.
    static let rejoinDays: Int64 = 28

    private var entering: [SpanChange] = []
    private var leaving: [SpanChange] = []

    /// Notes the items new to the chart (against `before`), and those of `leaving` not in it now.
    private func updateSpans(_ key: RankChartKey, now: [Int64], before: [Int64], leaving gone: [Int64]) {
        let earlier = RankListCodec.BaseIndex(before)
        for id in now where !earlier.contains(id) {
            entering.append(SpanChange(id: id, storefrontID: key.storefrontID, genreID: key.genreID))
        }
        guard !gone.isEmpty else { return }
        let current = RankListCodec.BaseIndex(now)
        for id in gone where !current.contains(id) {
            leaving.append(SpanChange(id: id, storefrontID: key.storefrontID, genreID: key.genreID))
        }
    }

    /// Writes the noted spans: an entering item's latest span from before the day is read, and left alone when it
    /// covers the day (and the days up to the next recorded one), reopened or widened when it ended within
    /// `rejoinDays`, else a span opens, in `Layout.newSpans` (moved into `Layout.spans` on the chart table's next
    /// keyframe day recorded as the newest, which opens its spans there directly).
    private func writeSpans() throws {
        let code = chart.code
        let entered = RankHistoryRead.spanDay(entered: day)
        let left = nextDay.map { RankHistoryRead.spanDay(left: $0) }
        if closing == .period { try spans.adopt(newSpans, chart: code) }
        let opening = closing == .period ? spans : newSpans
        for change in entering.sorted() {
            // The later of the two tables' latest spans; on a tie the new table's (a reopened copy, below).
            var latest = try newSpans.latest(change, chart: code, before: entered)
            if let old = try spans.latest(change, chart: code, before: entered),
               latest.map({ old.span.entered > $0.span.entered }) ?? true {
                latest = old
            }
            if let (table, span) = latest {
                guard let spanLeft = span.left else { continue }
                if let left, spanLeft >= left { continue }
                if spanLeft >= entered - Self.rejoinDays {
                    let widened = left.map { max($0, spanLeft) }
                    if table.table == opening.table {
                        try table.setLeft(change, chart: code, entered: span.entered, left: widened)
                    } else {
                        // A span of `epf_rank_spans` reopened between keyframe days: a copy with its new end in the
                        // new spans' table (merged into it by the next keyframe day's move), so the day writes no
                        // page of `epf_rank_spans` (items closed by a keyframe day come back all over it).
                        try opening.open(change, chart: code, entered: span.entered, left: widened)
                    }
                    continue
                }
            }
            try opening.open(change, chart: code, entered: entered, left: left)
        }
        let closedDay = RankHistoryRead.spanDay(left: day)
        var previous: SpanChange?
        for change in leaving.sorted() where change != previous {
            previous = change
            try spans.close(change, chart: code, left: closedDay)
            if closing != .period { try newSpans.close(change, chart: code, left: closedDay) }
        }
        entering = []
        leaving = []
    }

    /// The charts the new day lacks: a day recorded again loses its old lists of them, and their items' open spans
    /// close as `closing` says (of the day's old lists, or of every list since `chainStart` on a keyframe day).
    private func forgetCharts(notIn recorded: Set<RankChartKey>) throws {
        let from = closing == .period ? min(chainStart, day) : day
        guard replacing || closing == .period else { return }
        var gone: [RankChartKey] = []
        let keys = try connection.prepare("SELECT DISTINCT storefront_id, genre_id FROM ("
            + Self.overLists { table, dayIndex in
                """
                SELECT storefront_id, genre_id FROM \(table) INDEXED BY \(dayIndex)
                WHERE chart = ?1 AND export_date >= ?2 AND export_date <= ?3
                """
            } + ")")
        try keys.bind([.integer(chart.code), .integer(from), .integer(day)])
        while try keys.step() {
            let key = RankChartKey(chart: chart, storefrontID: keys.columnInt64(0), genreID: keys.columnInt64(1))
            if !recorded.contains(key) { gone.append(key) }
        }
        for key in gone {
            if closing != .none {
                var (lists, dates) = try chain(key)
                let reference = replacing ? try lists.ids(on: day) ?? [] : []
                updateSpans(key, now: [], before: [], leaving: try closed(&lists, dates: dates, reference: reference))
            }
            if replacing {
                try settledListRows.delete(key, on: day)
                try newListRows.delete(key, on: day)
            }
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
                  base: newLists[dependent.key].map { (day, $0) })
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

/// The statements `RankDayRecorder` runs on one spans table (`RankHistoryLayout.spans` or `newSpans`).
private struct SpanStatements {
    let table: String
    private let latestSpan: SQLiteStatement
    private let setLeftDay: SQLiteStatement
    private let openSpan: SQLiteStatement
    private let closeSpan: SQLiteStatement
    private let connection: SQLiteConnection

    init(_ connection: SQLiteConnection, table: String) throws {
        self.connection = connection
        self.table = table
        latestSpan = try connection.prepare("""
            SELECT entered_day, left_day FROM \(table)
            WHERE id = ?1 AND chart = ?2 AND storefront_id = ?3 AND genre_id = ?4 AND entered_day <= ?5
            ORDER BY entered_day DESC LIMIT 1
            """)
        setLeftDay = try connection.prepare("""
            UPDATE \(table) SET left_day = ?6
            WHERE id = ?1 AND chart = ?2 AND storefront_id = ?3 AND genre_id = ?4 AND entered_day = ?5
            """)
        openSpan = try connection.prepare("""
            INSERT INTO \(table) (id, chart, storefront_id, genre_id, entered_day, left_day)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6)
            ON CONFLICT DO UPDATE SET left_day = CASE WHEN left_day IS NULL OR excluded.left_day IS NULL THEN NULL
                ELSE max(left_day, excluded.left_day) END
            """)
        closeSpan = try connection.prepare("""
            UPDATE \(table) SET left_day = ?5
            WHERE id = ?1 AND chart = ?2 AND storefront_id = ?3 AND genre_id = ?4 AND left_day IS NULL
            """)
    }

    /// Binds a span's key (?1-?4) and a day (?5).
    private func bind(_ statement: SQLiteStatement, _ change: RankDayRecorder.SpanChange, chart: Int64,
                      day: Int64) throws {
        try statement.bind(change.id, at: 1)
        try statement.bind(chart, at: 2)
        try statement.bind(change.storefrontID, at: 3)
        try statement.bind(change.genreID, at: 4)
        try statement.bind(day, at: 5)
    }

    private func bindLeft(_ statement: SQLiteStatement, _ value: Int64?) throws {
        if let value { try statement.bind(value, at: 6) } else { try statement.bindNull(at: 6) }
    }

    /// The item's span in the chart that entered last on or before `day`, with this table.
    func latest(_ change: RankDayRecorder.SpanChange, chart: Int64,
                before day: Int64) throws -> (table: SpanStatements, span: (entered: Int64, left: Int64?))? {
        try bind(latestSpan, change, chart: chart, day: day)
        defer { latestSpan.reset() }
        guard try latestSpan.step() else { return nil }
        return (self, (latestSpan.columnInt64(0), latestSpan.int64(at: 1)))
    }

    /// Sets the left day of the span that entered on `entered` (nil: open).
    func setLeft(_ change: RankDayRecorder.SpanChange, chart: Int64, entered: Int64, left: Int64?) throws {
        try bind(setLeftDay, change, chart: chart, day: entered)
        try bindLeft(setLeftDay, left)
        try setLeftDay.runOnce()
    }

    /// Opens a span from `entered` to `left` (nil: open), merged with one that entered the same day.
    func open(_ change: RankDayRecorder.SpanChange, chart: Int64, entered: Int64, left: Int64?) throws {
        try bind(openSpan, change, chart: chart, day: entered)
        try bindLeft(openSpan, left)
        try openSpan.runOnce()
    }

    /// Closes the item's open span in the chart on `left`.
    func close(_ change: RankDayRecorder.SpanChange, chart: Int64, left: Int64) throws {
        try bind(closeSpan, change, chart: chart, day: left)
        try closeSpan.runOnce()
    }

    /// Moves `other`'s spans of `chart` into this table (in key order: the other table is clustered on the same
    /// key).
    func adopt(_ other: SpanStatements, chart: Int64) throws {
        try connection.execute("""
            INSERT INTO \(table) (id, chart, storefront_id, genre_id, entered_day, left_day)
            SELECT id, chart, storefront_id, genre_id, entered_day, left_day FROM \(other.table)
            WHERE chart = \(chart)
            ON CONFLICT DO UPDATE SET left_day = CASE WHEN left_day IS NULL OR excluded.left_day IS NULL THEN NULL
                ELSE max(left_day, excluded.left_day) END;
            DELETE FROM \(other.table) WHERE chart = \(chart);
            """)
    }
}
