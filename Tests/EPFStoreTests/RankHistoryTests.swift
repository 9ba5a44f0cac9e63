import EPFSchema
import EPFSQLite
import EPFTestSupport
import Foundation
import Testing
@testable import EPFStore

/// The rank history's codec and SQLite storage, against a model of every day's charts: days recorded in order, out
/// of order and twice, days missing, charts that come and go, dirt in the ranks.
@Suite struct RankHistoryTests {
    static let day: Int64 = 86_400_000

    // MARK: Codec

    @Test(arguments: [
        [RankedEntry(rank: 1, id: 5), RankedEntry(rank: 2, id: 7), RankedEntry(rank: 3, id: 1)],
        [RankedEntry(rank: 1, id: 5), RankedEntry(rank: 1, id: 6), RankedEntry(rank: 4, id: 7)],
        [RankedEntry(rank: -2, id: 6_700_000_000), RankedEntry(rank: 0, id: 1)],
        [],
    ])
    func aKeyframeDecodesToWhatWasCoded(_ entries: [RankedEntry]) throws {
        let bytes = RankListCodec.keyframe(entries)
        #expect(try bytes.withUnsafeBytes { try RankListCodec.decode($0, base: nil) } == entries)
        for entry in entries {
            let rank = try bytes.withUnsafeBytes {
                try RankListCodec.rank(of: entry.id, in: $0, basePosition: nil, baseCount: 0)
            }
            #expect(rank == entry.rank)
        }
        #expect(try bytes.withUnsafeBytes { try RankListCodec.rank(of: 99, in: $0, basePosition: nil, baseCount: 0) }
                == nil)
    }

    @Test func aDeltaDecodesAgainstItsBaseAndCostsAByteAnUnchangedEntry() throws {
        let base: [Int64] = Array(1_000_000_001...1_000_000_200)
        var ids = base
        ids.swapAt(3, 9)
        ids.remove(at: 50)
        ids.insert(6_500_000_000, at: 0)
        ids.append(base[50])
        let entries = ids.enumerated().map { RankedEntry(rank: $0.offset + 1, id: $0.element) }
        let delta = RankListCodec.delta(entries, base: RankListCodec.BaseIndex(base))
        #expect(delta.count < 215)
        #expect(try delta.withUnsafeBytes { try RankListCodec.decode($0, base: base) } == entries)
        for (offset, id) in ids.enumerated() {
            let rank = try delta.withUnsafeBytes {
                try RankListCodec.rank(of: id, in: $0, basePosition: base.firstIndex(of: id), baseCount: base.count)
            }
            #expect(rank == offset + 1)
        }
        var ranked = entries
        ranked[4] = RankedEntry(rank: 4, id: ranked[4].id)
        let withRanks = RankListCodec.delta(ranked, base: RankListCodec.BaseIndex(base))
        #expect(try withRanks.withUnsafeBytes { try RankListCodec.decode($0, base: base) } == ranked)
        let rank = try withRanks.withUnsafeBytes {
            try RankListCodec.rank(of: ranked[4].id, in: $0, basePosition: base.firstIndex(of: ranked[4].id),
                                   baseCount: base.count)
        }
        #expect(rank == 4)
    }

    @Test func damagedBytesThrowAndNeverReadPastTheList() throws {
        let base: [Int64] = [10, 20, 30]
        let entries = [RankedEntry(rank: 1, id: 30), RankedEntry(rank: 2, id: 99)]
        let delta = RankListCodec.delta(entries, base: RankListCodec.BaseIndex(base))
        for length in 0..<delta.count {
            #expect(throws: RankListCodec.Malformed.self) {
                try Array(delta.prefix(length)).withUnsafeBytes { try RankListCodec.decode($0, base: base) }
            }
        }
        #expect(throws: RankListCodec.Malformed.self) {
            try delta.withUnsafeBytes { try RankListCodec.decode($0, base: [10]) }
        }
        #expect(throws: RankListCodec.Malformed.self) {
            try delta.withUnsafeBytes { try RankListCodec.decode($0, base: nil) }
        }
    }

    // MARK: Storage against a model

    /// Every day's charts as recorded last: day -> chart key -> entries.
    typealias Model = [Int64: [RankChartKey: [RankedEntry]]]

    /// Writes `charts` into a table with the chart table's columns and records it as `day`.
    static func record(_ connection: SQLiteConnection, _ chart: RankChart, day: Int64,
                       _ charts: [RankChartKey: [RankedEntry]], extraRows: [String] = []) throws {
        try connection.execute("""
            DROP TABLE IF EXISTS source;
            CREATE TABLE source (export_date INTEGER, storefront_id INTEGER, genre_id INTEGER,
                \(chart.idColumn) INTEGER, \(chart.rankColumn) INTEGER);
            """)
        let insert = try connection.prepare("INSERT INTO source VALUES (?1, ?2, ?3, ?4, ?5)")
        // Written in no particular order: the recorder orders by storefront, genre, rank, id.
        for (key, entries) in charts {
            for entry in entries.reversed() {
                try insert.bind([.integer(day), .integer(key.storefrontID), .integer(key.genreID), .integer(entry.id),
                                 .integer(Int64(entry.rank))])
                try insert.runOnce()
            }
        }
        for row in extraRows { try connection.execute("INSERT INTO source VALUES (\(day), \(row))") }
        try connection.transaction {
            try RankDayRecorder(connection, chart: chart, day: day).record(from: "source")
        }
    }

    /// A chart that moves a little from `previous`: swaps, a few leave, a few enter (new or returning ids).
    static func moved(_ previous: [RankedEntry], depth: Int, random: inout SeededGenerator) -> [RankedEntry] {
        var ids = previous.map(\.id)
        for _ in 0..<random.below(4) where ids.count > 1 {
            ids.swapAt(random.below(ids.count), random.below(ids.count))
        }
        for _ in 0..<random.below(3) where !ids.isEmpty { ids.remove(at: random.below(ids.count)) }
        while ids.count < depth {
            let id = Int64(1 + random.below(3 * depth))
            if !ids.contains(id) { ids.insert(id, at: random.below(ids.count + 1)) }
        }
        return ids.enumerated().map { RankedEntry(rank: $0.offset + 1, id: $0.element) }
    }

    /// Checks every read against the model: recorded days, each chart on each day (recorded or not), depths, the
    /// day before, and each item's history.
    static func check(_ connection: SQLiteConnection, _ model: Model, chart: RankChart, keys: [RankChartKey],
                      days: ClosedRange<Int64>) throws {
        let history = try #require(try RankHistoryRead(connection))
        let recorded = model.keys.sorted()
        #expect(try history.recordedDays(chart: chart) == recorded)
        #expect(try history.recordedDays(chart: chart, since: recorded.count > 1 ? recorded[1] : Int64.max)
                == Array(recorded.dropFirst()))
        var points: [Int64: [RankHistoryPoint]] = [:]
        for day in days.map({ $0 * Self.day }) {
            #expect(try history.recordedDay(before: day, chart: chart) == recorded.last { $0 < day })
            for key in keys {
                let expected = model[day].map { $0[key] ?? [] }
                #expect(try history.chart(key, on: day) == expected, "chart \(key) on day \(day / Self.day)")
                #expect(try history.depth(key, on: day) == expected?.count)
                for entry in expected ?? [] {
                    points[entry.id, default: []].append(RankHistoryPoint(day: day, key: key, rank: entry.rank))
                }
            }
        }
        for (id, expected) in points {
            #expect(try history.history(of: id) == expected.sorted { ($0.day, $0.key) < ($1.day, $1.key) },
                    "history of \(id)")
            let since = days.upperBound * Self.day - 3 * Self.day
            #expect(try history.history(of: id, since: since, storefront: keys[0].storefrontID)
                    == expected.filter { $0.day >= since && $0.key.storefrontID == keys[0].storefrontID }
                        .sorted { ($0.day, $0.key) < ($1.day, $1.key) })
        }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func daysInOrderOutOfOrderTwiceAndMissingReadBackAsRecorded(seed: UInt64) throws {
        let scratch = try TemporaryDirectory()
        let connection = try SQLiteConnection(path: scratch.file("ranks.sqlite"), mode: .readWriteCreate)
        var random = SeededGenerator(seed: seed)
        let chart = RankChart.free
        let keys = [RankChartKey(chart: chart, storefrontID: 143441, genreID: 36),
                    RankChartKey(chart: chart, storefrontID: 143441, genreID: 6014),
                    RankChartKey(chart: chart, storefrontID: 143444, genreID: 36)]
        // Twenty days of charts; each key's chart is absent some days.
        var truth: [Int64: [RankChartKey: [RankedEntry]]] = [:]
        var last: [RankChartKey: [RankedEntry]] = [:]
        for day in Int64(1)...20 {
            for key in keys where random.below(8) != 0 {
                let next = Self.moved(last[key] ?? [], depth: 12, random: &random)
                truth[day * Self.day, default: [:]][key] = next
                last[key] = next
            }
        }
        // Recorded in a shuffled order, some twice (first with other charts), some never.
        var order = Array(Int64(1)...20).filter { $0 % 7 != 4 }
        for index in order.indices.reversed() { order.swapAt(index, random.below(index + 1)) }
        order.insert(contentsOf: [order[2], order[0]], at: random.below(order.count))
        var model: Model = [:]
        for (index, day) in order.enumerated() {
            let date = day * Self.day
            let repeatedLater = order[(index + 1)...].contains(day)
            let charts = repeatedLater
                ? [keys[0]: Self.moved(truth[date]?[keys[1]] ?? [], depth: 5, random: &random)] : truth[date] ?? [:]
            try Self.record(connection, chart, day: date, charts)
            model[date] = charts
            if index % 5 == 4 || index == order.count - 1 {
                try Self.check(connection, model, chart: chart, keys: keys, days: 0...21)
            }
        }
    }

    /// Every index entry a recorded day wrote: (id, storefront, genre) triples.
    static func indexed(_ connection: SQLiteConnection, chart: RankChart, day: Int64) throws -> Set<[Int64]> {
        let rows = try connection.prepare(
            "SELECT first_id, list FROM epf_rank_items WHERE chart = ?1 AND export_date = ?2 ORDER BY first_id")
        try rows.bind([.integer(chart.code), .integer(day)])
        var entries: [RankItemIndex.Entry] = []
        var count = 0
        while try rows.step() {
            count += 1
            let firstID = rows.columnInt64(0)
            let listed: [RankItemIndex.Entry]? = try rows.withBlob(at: 1) { bytes in
                var found: [RankItemIndex.Entry] = []
                try RankItemIndex.appendEntries(of: bytes, firstID: firstID, to: &found)
                return found
            }
            entries += listed ?? []
        }
        #expect(count > 0, "a recorded day writes at least one index row")
        return Set(entries.map { [$0.id, $0.storefrontID, $0.genreID] })
    }

    /// The item index lists every item of a keyframe day (and of a chart table's first day), and on the other days
    /// recorded as the newest only what entered a chart since the day before and was not in it on the keyframe day;
    /// the lists of the days since the newest keyframe day wait in the new lists' table.
    @Test func theItemIndexListsKeyframeDaysWholeAndEntrantsBetween() throws {
        let scratch = try TemporaryDirectory()
        let connection = try SQLiteConnection(path: scratch.file("ranks.sqlite"), mode: .readWriteCreate)
        var random = SeededGenerator(seed: 7)
        let keys = [RankChartKey(chart: .free, storefrontID: 143441, genreID: 36),
                    RankChartKey(chart: .free, storefrontID: 143444, genreID: 6014)]
        var charts: [RankChartKey: [RankedEntry]] = [:]
        var keyframes: [Int64] = []
        var keyframeCharts: [RankChartKey: [RankedEntry]] = [:]
        for day in Int64(1)...16 {
            let previous = charts
            for key in keys { charts[key] = Self.moved(charts[key] ?? [], depth: 12, random: &random) }
            try Self.record(connection, .free, day: day * Self.day, charts)
            let keyframe = try connection.scalar("SELECT keyframe FROM epf_rank_days WHERE export_date = ?1",
                                                 [.integer(day * Self.day)]) == .integer(1)
            if keyframe {
                keyframes.append(day)
                keyframeCharts = charts
            }
            var expected: Set<[Int64]> = []
            for (key, entries) in charts {
                let before = Set((previous[key] ?? []).map(\.id) + (keyframeCharts[key] ?? []).map(\.id))
                for entry in entries where keyframe || !before.contains(entry.id) {
                    expected.insert([entry.id, key.storefrontID, key.genreID])
                }
            }
            #expect(try Self.indexed(connection, chart: .free, day: day * Self.day) == expected, "day \(day)")
            let newestKeyframe = (keyframes.last ?? 0) * Self.day
            #expect(try connection.scalar("SELECT count(*) FROM epf_rank_lists_new WHERE export_date <= ?1",
                                          [.integer(newestKeyframe)]) == .integer(0), "day \(day)")
            #expect(try connection.scalar("SELECT count(*) FROM epf_rank_lists WHERE export_date > ?1",
                                          [.integer(newestKeyframe)]) == .integer(0), "day \(day)")
            #expect(try connection.scalar("SELECT count(*) FROM epf_rank_lists_new")
                    == .integer(2 * (day - (keyframes.last ?? 0))), "day \(day)")
        }
        #expect(keyframes == [1, 15])
        // Day 9 recorded again with other charts: it lists its new items besides its old ones (day 10 listed only
        // what entered since the old day 9).
        let old = try Self.indexed(connection, chart: .free, day: 9 * Self.day)
        let again = [keys[0]: [RankedEntry(rank: 1, id: 9_000_001)]]
        try Self.record(connection, .free, day: 9 * Self.day, again)
        #expect(try Self.indexed(connection, chart: .free, day: 9 * Self.day)
                == old.union([[9_000_001, keys[0].storefrontID, keys[0].genreID]]))
    }

    @Test func indexListsCutAtTheirSizeAndFindEveryItem() throws {
        var random = SeededGenerator(seed: 11)
        var entries: [RankItemIndex.Entry] = []
        for _ in 0..<600 {
            entries.append(RankItemIndex.Entry(id: Int64(random.below(400)) - 20,
                                               storefrontID: 143_441 + Int64(random.below(30)),
                                               genreID: Int64(random.below(3) == 0 ? 36 : 6000 + random.below(30))))
        }
        entries.append(RankItemIndex.Entry(id: 6_700_000_000, storefrontID: 143_441, genreID: 36))
        entries.sort()
        let lists = RankItemIndex.lists(entries, listBytes: 256)
        #expect(lists.count > 3)
        #expect(lists.allSatisfy { $0.bytes.count <= 256 })
        #expect(lists.map(\.firstID) == lists.map(\.firstID).sorted())
        var decoded: [RankItemIndex.Entry] = []
        for list in lists {
            try list.bytes.withUnsafeBytes { try RankItemIndex.appendEntries(of: $0, firstID: list.firstID,
                                                                              to: &decoded) }
        }
        var unique: [RankItemIndex.Entry] = []
        for entry in entries where unique.last != entry { unique.append(entry) }
        #expect(decoded == unique)
        for id in Set(entries.map(\.id)) {
            let list = try #require(lists.last { $0.firstID <= id })
            let charts = try list.bytes.withUnsafeBytes { try RankItemIndex.charts(of: id, in: $0,
                                                                                   firstID: list.firstID) }
            #expect(charts.map { [$0.storefrontID, $0.genreID] }
                    == unique.filter { $0.id == id }.map { [$0.storefrontID, $0.genreID] }, "item \(id)")
        }
        for length in 1..<lists[0].bytes.count where length % 7 == 0 {
            #expect(throws: RankListCodec.Malformed.self) {
                var found: [RankItemIndex.Entry] = []
                try Array(lists[0].bytes.prefix(length)).withUnsafeBytes {
                    try RankItemIndex.appendEntries(of: $0, firstID: lists[0].firstID, to: &found)
                }
                // A cut that falls between items decodes: then it lacks the rest.
                if found.count < lists[0].bytes.count { throw RankListCodec.Malformed(description: "short") }
            }
        }
    }

    /// A database recorded with spans before the item index reads its earlier days through them and its later
    /// ones through the index: the first indexed day ends the open spans after the newest day recorded before.
    @Test func aDatabaseRecordedWithSpansReadsBothEras() throws {
        let scratch = try TemporaryDirectory()
        let connection = try SQLiteConnection(path: scratch.file("ranks.sqlite"), mode: .readWriteCreate)
        var random = SeededGenerator(seed: 5)
        let chart = RankChart.paid
        let keys = [RankChartKey(chart: chart, storefrontID: 143441, genreID: 36),
                    RankChartKey(chart: chart, storefrontID: 143441, genreID: 6014)]
        var model: Model = [:]
        var charts: [RankChartKey: [RankedEntry]] = [:]
        func recordDay(_ day: Int64) throws {
            for key in keys { charts[key] = Self.moved(charts[key] ?? [], depth: 10, random: &random) }
            try Self.record(connection, chart, day: day * Self.day, charts)
            model[day * Self.day] = charts
        }
        for day in Int64(1)...5 { try recordDay(day) }
        // As an earlier epf left it: spans instead of the index (an open span for each item in a chart on day 5).
        try connection.execute("""
            DROP TABLE epf_rank_items;
            CREATE TABLE epf_rank_spans (id INTEGER NOT NULL, chart INTEGER NOT NULL, storefront_id INTEGER NOT NULL,
                genre_id INTEGER NOT NULL, entered_day INTEGER NOT NULL, left_day INTEGER,
                PRIMARY KEY (id, chart, storefront_id, genre_id, entered_day)) WITHOUT ROWID;
            """)
        var lastSeen: [[Int64]: Int64] = [:]
        for (day, dayCharts) in model {
            for (key, entries) in dayCharts {
                for entry in entries {
                    let item = [entry.id, key.storefrontID, key.genreID]
                    lastSeen[item] = max(lastSeen[item] ?? 0, day / Self.day)
                }
            }
        }
        let span = try connection.prepare("INSERT INTO epf_rank_spans VALUES (?1, ?2, ?3, ?4, 1, ?5)")
        for (item, last) in lastSeen {
            try span.bind([.integer(item[0]), .integer(chart.code), .integer(item[1]), .integer(item[2]),
                           last == 5 ? .null : .integer(last + 1)])
            try span.runOnce()
        }
        for day in Int64(6)...9 { try recordDay(day) }
        #expect(try connection.scalar("SELECT count(*) FROM epf_rank_spans WHERE left_day IS NULL") == .integer(0))
        try Self.check(connection, model, chart: chart, keys: keys, days: 0...10)
    }

    @Test func dirtIsRecordedAsTheTableHoldsIt() throws {
        let scratch = try TemporaryDirectory()
        let connection = try SQLiteConnection(path: scratch.file("ranks.sqlite"), mode: .readWriteCreate)
        let key = RankChartKey(chart: .songs, storefrontID: 143441, genreID: 34)
        // Duplicate ranks and a gap; a row without a rank (left out); a row without an id (left out).
        let dirty = [RankedEntry(rank: 1, id: 10), RankedEntry(rank: 1, id: 11), RankedEntry(rank: 4, id: 12)]
        try Self.record(connection, .songs, day: Self.day, [key: dirty],
                   extraRows: ["143441, 34, 13, NULL", "143441, 34, NULL, 2"])
        try Self.record(connection, .songs, day: 2 * Self.day, [key: Array(dirty.reversed())])
        let history = try #require(try RankHistoryRead(connection))
        #expect(try history.chart(key, on: Self.day) == dirty)
        #expect(try history.chart(key, on: 2 * Self.day) == dirty.sorted { ($0.rank, $0.id) < ($1.rank, $1.id) })
        #expect(try history.history(of: 12).map(\.rank) == [4, 4])
        #expect(try history.history(of: 13).isEmpty)
        #expect(try history.chart(key, on: 3 * Self.day) == nil)
        #expect(try history.recordedDays() == [Self.day, 2 * Self.day])
        #expect(try history.recordedDays(chart: .free).isEmpty)
    }
}
