import EPFPostgres
import EPFSQLite
import EPFTestSupport
import Foundation
import Testing

/// `--history prices` on PostgreSQL through the CLI: a full, its incremental and the next week's full record the
/// same changes as on SQLite; applied again (`--force`) after the first full, the daily and the week record nothing
/// more and are not refused (the history then holds their changes, so the insert must skip them rather than
/// collide with its unique key).
@Suite struct PostgresPriceHistoryTests {
    @Test func theSameChangesAsOnSQLiteAndNothingTwice() throws {
        let url = try TestCluster.get().database()
        let scratch = try TemporaryDirectory()
        var options = feedOptions(apps: 300, dirt: true)
        options.priceStorefronts = 8
        let first = try generate(options, in: scratch.path, name: "first")
        options.mode = .incremental
        options.day = 1
        let daily = try generate(options, in: scratch.path, name: "daily")
        options.mode = .full
        options.week = 1
        let week = try generate(options, in: scratch.path, name: "week")
        let sqlite = scratch.file("epf.sqlite")
        func importing(_ paths: [String], _ extra: [String]) throws {
            let pg = try BuiltEPF.run(["import"] + paths + extra + ["--db", url, "--schema", "history", "--quiet",
                                                                    "--rejects-dir", scratch.file("pg.rejects")],
                                      in: scratch.path)
            #expect(pg.status == 0 || pg.status == 65, "\(pg.stderr)")
            let local = try BuiltEPF.run(["import"] + paths + extra + ["--db", sqlite, "--quiet"], in: scratch.path)
            #expect(local.status == pg.status, "\(local.stderr)")
        }
        func changes() throws -> (postgres: [String], sqlite: [String]) {
            let columns = "id, storefront_id, change, coalesce(old_price, 'NULL'), coalesce(new_price, 'NULL'), "
                + "coalesce(currency, 'NULL'), export_date"
            let postgres = try dump(url, "SELECT \(columns) FROM history.epf_price_history")
            let connection = try SQLiteConnection(path: sqlite, mode: .readOnly)
            let local = try connection.query("SELECT \(columns) FROM epf_price_history").map { row in
                row.map { value -> String in
                    switch value {
                    case .integer(let number): return "\(number)"
                    case .text(let text): return text
                    default: return "NULL"
                    }
                }.joined(separator: "|")
            }.sorted()
            // PostgreSQL's numeric keeps the feed's scale (`0.990`), SQLite's REAL the number (`0.99`): compared as
            // the numbers they are.
            func numbers(_ line: String) -> String {
                var fields = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
                for index in [3, 4] where index < fields.count {
                    if let number = Double(fields[index]) { fields[index] = DecimalNumber.text(number) }
                }
                return fields.joined(separator: "|")
            }
            return (postgres.map(numbers).sorted(), local.map(numbers).sorted())
        }

        try importing(first, ["--history", "prices"])
        try importing(daily, [])
        try importing(week, [])
        let recorded = try changes()
        #expect(recorded.postgres.count > 100, "the incremental and the next full change prices")
        #expect(recorded.postgres == recorded.sqlite)

        // The first full applied again over the week's tables records its changes under its own date; the daily
        // and the week applied again after it find the changes they recorded before: nothing twice, nothing
        // refused.
        try importing(first, ["--force"])
        try importing(daily, ["--force"])
        try importing(week, ["--force"])
        let again = try changes()
        #expect(again.postgres == again.sqlite)
        func date(_ line: String) -> String { String(line.split(separator: "|").last ?? "") }
        let dates = Set(recorded.postgres.map(date))
        #expect(again.postgres.filter { dates.contains(date($0)) } == recorded.postgres)
        #expect(again.postgres.count > recorded.postgres.count, "the first full again records what it reverts")
    }
}
