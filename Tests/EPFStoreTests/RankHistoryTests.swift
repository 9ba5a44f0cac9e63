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

    /// Every span's id and left day, of both spans tables.
    static let spans = """
        SELECT id FROM (SELECT id, left_day FROM epf_rank_spans UNION ALL SELECT id, left_day FROM epf_rank_spans_new)
        """

    /// Items that leave a chart keep their spans open until the next keyframe day recorded as the newest closes
    /// them: every day, each item in the chart has an open span and every open span is an item of the chart's days
    /// since the last keyframe day; on a keyframe day the open spans are the day's items.
    @Test func spansOfItemsThatLeftCloseOnTheNextKeyframeDay() throws {
        let scratch = try TemporaryDirectory()
        let connection = try SQLiteConnection(path: scratch.file("ranks.sqlite"), mode: .readWriteCreate)
        var random = SeededGenerator(seed: 7)
        let key = RankChartKey(chart: .free, storefrontID: 143441, genreID: 36)
        var chart: [RankedEntry] = []
        var since: Set<Int64> = []
        var keyframes: [Int64] = []
        for day in Int64(1)...16 {
            chart = Self.moved(chart, depth: 12, random: &random)
            try Self.record(connection, .free, day: day * Self.day, [key: chart])
            let keyframe = try connection.scalar("SELECT keyframe FROM epf_rank_days WHERE export_date = ?1",
                                                 [.integer(day * Self.day)]) == .integer(1)
            let open = Set(try connection.query(Self.spans + " WHERE left_day IS NULL").compactMap {
                if case .integer(let id) = $0[0] { return id }
                return nil
            })
            let ids = Set(chart.map(\.id))
            if keyframe {
                keyframes.append(day)
                since = []
            }
            since.formUnion(ids)
            #expect(open.isSuperset(of: ids), "day \(day)")
            #expect(keyframe ? open == ids : open.isSubset(of: since), "day \(day)")
            // The lists of the days since the newest keyframe day wait in the new lists' table; the keyframe day
            // moved the others into the settled one.
            let newestKeyframe = (keyframes.last ?? 0) * Self.day
            #expect(try connection.scalar("SELECT count(*) FROM epf_rank_lists_new WHERE export_date <= ?1",
                                          [.integer(newestKeyframe)]) == .integer(0), "day \(day)")
            #expect(try connection.scalar("SELECT count(*) FROM epf_rank_lists WHERE export_date > ?1",
                                          [.integer(newestKeyframe)]) == .integer(0), "day \(day)")
            #expect(try connection.scalar("SELECT count(*) FROM epf_rank_lists_new")
                    == .integer(day - (keyframes.last ?? 0)), "day \(day)")
        }
        #expect(keyframes == [1, 15])
        let closed = try connection.scalar("SELECT count(*) FROM (\(Self.spans) WHERE left_day IS NOT NULL)")
        #expect(closed.map { $0 != .integer(0) } == true, "items left and had their spans closed")
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
