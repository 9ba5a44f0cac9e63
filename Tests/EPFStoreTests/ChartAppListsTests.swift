import EPFSchema
import EPFSQLite
import EPFTestSupport
import Testing
@testable import EPFStore

/// `ChartAppRows` and `ChartAppLists`: a chart table's rows gathered by app, cut into lists, read back one app at a
/// time exactly as they were met; rows that do not fit make the gathering give up.
@Suite struct ChartAppListsTests {
    /// Rows in chart order (storefront, genre, rank), apps drawn from a few thousand, ids large as today's.
    static func chartRows(seed: UInt64) -> [(app: Int64, storefront: Int64, genre: Int64, rank: Int64, date: Int64)] {
        var random = seed
        func next(_ bound: Int64) -> Int64 {
            random = random &* 6364136223846793005 &+ 1442695040888963407
            return Int64((random >> 33) % UInt64(bound))
        }
        var rows: [(Int64, Int64, Int64, Int64, Int64)] = []
        for storefront in [143441, 143444, 143462] as [Int64] {
            for genre in [36, 6014, 7001] as [Int64] {
                let date: Int64 = genre == 7001 ? 1_767_657_600_000 : 1_767_571_200_000
                for rank in 1...200 {
                    rows.append((6_400_000_000 + next(3000) * 7, storefront, genre, Int64(rank), date))
                }
            }
        }
        return rows
    }

    @Test func everyAppReadsItsRowsInTheOrderMet() throws {
        let rows = Self.chartRows(seed: 7)
        let gathered = ChartAppRows()
        for row in rows {
            gathered.add(app: row.app, storefront: row.storefront, genre: row.genre, rank: row.rank, date: row.date)
        }
        // NULLs are left out, as a reading of the table skips them.
        gathered.add(app: 1, storefront: nil, genre: 36, rank: 1, date: 0)
        gathered.add(app: nil, storefront: 143441, genre: 36, rank: 1, date: 0)
        let finished = gathered.finish()
        let lists = try #require(finished)
        #expect(lists.count > 1, "several lists: \(lists.count)")
        #expect(lists.map(\.firstID) == lists.map(\.firstID).sorted())
        #expect(lists.allSatisfy { $0.bytes.count <= ChartAppLists.listBytes })
        func read(_ id: Int64) throws -> [ChartAppEntry] {
            guard let list = lists.last(where: { $0.firstID <= id }) else { return [] }
            return try list.bytes.withUnsafeBytes { try ChartAppLists.entries(of: id, in: $0, firstID: list.firstID) }
        }
        var expected: [Int64: [ChartAppEntry]] = [:]
        for row in rows {
            expected[row.app, default: []].append(ChartAppEntry(storefrontID: row.storefront, genreID: row.genre,
                                                                rank: row.rank, exportDate: row.date))
        }
        for (app, entries) in expected { #expect(try read(app) == entries, "\(app)") }
        for absent in [Int64(0), 1, 6_400_000_001, 7_000_000_000] { #expect(try read(absent).isEmpty) }
    }

    /// Apps near 2^40, ranks near 4096 and 8,200 runs do not fit one 64-bit key each: the rows are read by number,
    /// and read back the same.
    @Test func rowsTooWideToPackReadTheSame() throws {
        let gathered = ChartAppRows()
        var expected: [Int64: [ChartAppEntry]] = [:]
        for run in 0..<8200 {
            let app = (Int64(1) << 40) - 1 - Int64(run % 7)
            let rank = Int64(4095 - run % 3)
            gathered.add(app: app, storefront: 143441 + Int64(run / 100), genre: Int64(run % 100), rank: rank,
                         date: 1_767_571_200_000)
            expected[app, default: []].append(ChartAppEntry(storefrontID: 143441 + Int64(run / 100),
                                                            genreID: Int64(run % 100), rank: rank,
                                                            exportDate: 1_767_571_200_000))
        }
        let finished = gathered.finish()
        let lists = try #require(finished)
        for (app, entries) in expected {
            let list = try #require(lists.last { $0.firstID <= app })
            let read = try list.bytes.withUnsafeBytes {
                try ChartAppLists.entries(of: app, in: $0, firstID: list.firstID)
            }
            #expect(read == entries, "\(app)")
        }
    }

    /// An app too large for a list is a list of its own; the apps around it are in lists of their own.
    @Test func anAppLargerThanAListStandsAlone() throws {
        var encoder = ChartAppLists.Encoder()
        func rows(_ count: Int) -> [ChartAppEntry] {
            (0..<count).map { ChartAppEntry(storefrontID: 143441 + Int64($0), genreID: 36, rank: 7,
                                            exportDate: 1_767_571_200_000) }
        }
        let apps: [(Int64, Int)] = (1...600).map { (Int64($0) * 10, $0 == 300 ? 1500 : 3) }
        for (id, count) in apps {
            encoder.startApp(id: id, count: count)
            for row in rows(count) { encoder.appendRow(row) }
            encoder.endApp()
        }
        let lists = encoder.finish()
        let big = try #require(lists.first { $0.firstID == 3000 })
        #expect(big.bytes.count > ChartAppLists.listBytes)
        #expect(lists.filter { $0.bytes.count > ChartAppLists.listBytes }.count == 1)
        for (id, count) in apps {
            let list = try #require(lists.last { $0.firstID <= id })
            let read = try list.bytes.withUnsafeBytes {
                try ChartAppLists.entries(of: id, in: $0, firstID: list.firstID)
            }
            #expect(read == rows(count), "\(id)")
        }
    }

    @Test(arguments: [
        (Int64(-1), Int64(1)), (Int64(1) << 40, Int64(1)), (Int64(5), Int64(4096)), (Int64(5), Int64(-1)),
    ])
    func aRowThatDoesNotFitGivesUp(app: Int64, rank: Int64) {
        let gathered = ChartAppRows()
        gathered.add(app: 9, storefront: 143441, genre: 36, rank: 1, date: 0)
        gathered.add(app: app, storefront: 143441, genre: 36, rank: rank, date: 0)
        #expect(!gathered.isComplete)
        let finished = gathered.finish()
        #expect(finished == nil)
    }

    @Test func theRadixSortKeepsTheOrderMetOfEachApp() {
        var random: UInt64 = 3
        var keys: [UInt64] = (0..<50_000).map { row in
            random = random &* 6364136223846793005 &+ 1442695040888963407
            let app = random >> 28 // up to 2^36: four digits of 11 bits above the row number
            return app << 23 | UInt64(row)
        }
        let expected = keys.sorted()
        keys.withUnsafeMutableBufferPointer { ChartAppRows.sortByApp($0, from: ChartAppRows.indexBits) }
        #expect(keys == expected)
    }

    /// A reader's two statements are searches of a primary key, never scans: of the lists by table and first app, of
    /// the ledger from the stamp on.
    @Test func theReadsUseTheKeys() throws {
        let work = try TemporaryDirectory()
        let connection = try SQLiteConnection(path: work.file("plan.sqlite"), mode: .readWriteCreate)
        try connection.execute(ChartAppLists.schema)
        try connection.execute("CREATE TABLE epf_ledger (id INTEGER PRIMARY KEY, table_name TEXT, outcome TEXT)")
        func plan(_ sql: String) throws -> String {
            try connection.query("EXPLAIN QUERY PLAN " + sql, [.text("t"), .integer(5)]).map { row in
                row.compactMap { if case .text(let text) = $0 { text } else { nil } }.joined()
            }.joined(separator: "; ")
        }
        let list = try plan(ChartAppLists.listSQL)
        #expect(list.contains("SEARCH epf_chart_app_lists USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"),
                "\(list)")
        let current = try plan(ChartAppLists.currentSQL.replacingOccurrences(of: "?1", with: "?1 AND ?2 = ?2"))
        #expect(current.contains("SEARCH l USING INTEGER PRIMARY KEY (rowid>?)"), "\(current)")
        #expect(!current.contains("SCAN"), "\(current)")
    }
}
