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
        keys.withUnsafeMutableBufferPointer { ChartAppRows.sortByApp($0) }
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
        #expect(list.contains("SEARCH epf_chart_apps USING PRIMARY KEY (table_name=? AND first_id<?)"), "\(list)")
        let current = try plan(ChartAppLists.currentSQL.replacingOccurrences(of: "?1", with: "?1 AND ?2 = ?2"))
        #expect(current.contains("SEARCH l USING INTEGER PRIMARY KEY (rowid>?)"), "\(current)")
        #expect(!current.contains("SCAN"), "\(current)")
    }
}
