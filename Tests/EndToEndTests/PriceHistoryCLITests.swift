import EPFSQLite
import Foundation
import Testing

/// End to end on generated feeds with dirt: `--history prices` records exactly the differences between the price
/// table before and after each import (computed here from the tables themselves), nothing twice when an export is
/// applied again; `epf prices --history`, `epf changes --kind price` and their HTTP routes list them; history can
/// be turned on over a database that existed before.
@Suite struct PriceHistoryCLITests {
    typealias Prices = [String: (price: Double?, currency: String?)]

    /// `application_price` as `id storefront` -> price and currency.
    static func prices(_ database: String) throws -> Prices {
        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        var prices: Prices = [:]
        for row in try connection.query("SELECT application_id, storefront_id, retail_price, currency_code "
                                         + "FROM application_price") {
            guard case .integer(let id) = row[0], case .integer(let storefront) = row[1] else { continue }
            var price: Double?
            switch row[2] {
            case .real(let number): price = number
            case .integer(let number): price = Double(number)
            case .text(let text): price = Double(text)
            default: break
            }
            var currency: String?
            if case .text(let text) = row[3] { currency = text }
            prices["\(id) \(storefront)"] = (price, currency)
        }
        return prices
    }

    /// What the history must gain going from `before` to `after` (`full`: keys that left count too).
    static func expectedChanges(_ before: Prices, _ after: Prices, full: Bool) -> [String] {
        var lines: [String] = []
        for key in Set(before.keys).union(after.keys) {
            switch (before[key], after[key]) {
            case (nil, _?): lines.append("\(key) appeared")
            case (_?, nil) where full: lines.append("\(key) disappeared")
            case (let old?, let new?) where old.price != new.price || old.currency != new.currency:
                lines.append("\(key) changed")
            default: break
            }
        }
        return lines.sorted()
    }

    /// The history rows of one export date as `id storefront change`.
    static func recorded(_ database: String, exportDate: String) throws -> [String] {
        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        guard try connection.tableExists("epf_price_history") else { return [] }
        return try connection.query("SELECT id, storefront_id, change FROM epf_price_history "
                                    + "WHERE date(export_date / 1000, 'unixepoch') = ?1", [.text(exportDate)])
            .map { row in row.map { value -> String in
                switch value {
                case .integer(let number): return "\(number)"
                case .text(let text): return text
                default: return "?"
                }
            }.joined(separator: " ") }.sorted()
    }

    static func count(_ database: String) throws -> Int64 {
        try ImportCLITests.scalar(database, "SELECT count(*) FROM epf_price_history")
    }

    @Test func historyRecordsExactlyWhatEachImportChangedAndIsListedEverywhere() throws {
        let work = try WorkDirectory()
        let common = ["--only", "application,application_price", "--dirt"]
        let full = try ImportCLITests.generate(work, name: "full", apps: 1500, seed: 5, storefronts: 12, extra: common)
        let daily = try ImportCLITests.generate(work, name: "daily", apps: 1500, seed: 5, storefronts: 12,
                                                extra: common + ["--incremental", "--day", "1"])
        let week = try ImportCLITests.generate(work, name: "week", apps: 1500, seed: 5, storefronts: 12,
                                               extra: common + ["--week", "1"])
        let database = work.file("epf.sqlite")
        func importing(_ paths: [String], _ extra: [String] = []) throws {
            let run = try runEPF(["import"] + paths + ["--db", database, "--quiet"] + extra, in: work.path)
            #expect(run.status == 0 || run.status == 65, "\(run.stderr)")
        }

        // The first load is the baseline.
        try importing([full + "/itunes20260105", full + "/pricing20260105"], ["--history", "prices"])
        #expect(try ImportCLITests.scalar(database, "SELECT count(*) FROM sqlite_schema WHERE name = "
                                          + "'epf_price_history'") == 0 || (try Self.count(database)) == 0)
        // The incremental (no flag: the database remembers): exactly the keys whose price it changed or added.
        var before = try Self.prices(database)
        try importing([daily + "/pricing20260106"])
        var after = try Self.prices(database)
        let dailyWanted = Self.expectedChanges(before, after, full: false)
        #expect(!dailyWanted.isEmpty)
        #expect(try Self.recorded(database, exportDate: "2026-01-06") == dailyWanted)
        // The next week's full: the differences of the whole tables, disappearances included.
        before = after
        try importing([week + "/itunes20260112", week + "/pricing20260112"])
        after = try Self.prices(database)
        let weekWanted = Self.expectedChanges(before, after, full: true)
        #expect(weekWanted.contains { $0.hasSuffix("disappeared") } && weekWanted.contains { $0.hasSuffix("appeared") })
        #expect(try Self.recorded(database, exportDate: "2026-01-12") == weekWanted)

        // Applying both again records nothing more.
        let total = try Self.count(database)
        try importing([daily + "/pricing20260106", week + "/pricing20260112"], ["--force"])
        #expect(try Self.count(database) == total)

        // epf prices --history: one item's changes, oldest first; the same through HTTP.
        let busiest = try ImportCLITests.scalar(database, "SELECT id FROM epf_price_history GROUP BY id "
                                                + "ORDER BY count(*) DESC, id LIMIT 1")
        let itemCount = try ImportCLITests.scalar(database, "SELECT count(*) FROM epf_price_history WHERE id = \(busiest)")
        let cli = try runEPF(["prices", "\(busiest)", "--history", "--json", "--db", database], in: work.path)
        #expect(cli.status == 0, "\(cli.stderr)")
        let listed = try #require(try JSONSerialization.jsonObject(with: Data(cli.stdout.utf8)) as? [String: Any])
        let changes = listed["changes"] as? [[String: Any]] ?? []
        #expect(changes.count == Int(itemCount))
        let dates = changes.compactMap { $0["exportDate"] as? String }
        #expect(dates == dates.sorted())
        let table = try runEPF(["prices", "\(busiest)", "--history", "--country", "us", "--db", database],
                               in: work.path)
        #expect(table.status == 0)
        #expect(!table.stdout.contains("▁"), "no chart when piped")

        // epf changes --kind price --drops: only drops, and the HTTP feed pages to the same list.
        let drops = try runEPF(["changes", "--since", "2026-01-01", "--kind", "price", "--drops", "--json",
                                "--db", database], in: work.path)
        #expect(drops.status == 0, "\(drops.stderr)")
        let dropList = try #require(try JSONSerialization.jsonObject(with: Data(drops.stdout.utf8)) as? [[String: Any]])
        let wantedDrops = try ImportCLITests.scalar(database, "SELECT count(*) FROM epf_price_history WHERE change = "
                                                    + "'changed' AND CAST(new_price AS REAL) < CAST(old_price AS REAL)")
        #expect(wantedDrops > 0 && dropList.count == Int(wantedDrops))
        for drop in dropList {
            let old = drop["oldPrice"] as? Double ?? 0
            let new = drop["newPrice"] as? Double ?? 0
            #expect(drop["change"] as? String == "changed" && new < old, "\(drop)")
        }

        let served = try ServedEPF(database: database, in: work.path)
        defer { served.stop() }
        let history = try served.get("/v1/apps/\(busiest)/prices?history=1")
        #expect(history.status == 200)
        #expect(((history.json as? [String: Any])?["changes"] as? [Any])?.count == Int(itemCount))
        var paged: [[String: Any]] = []
        var cursor: String?
        repeat {
            let page = try served.get("/v1/changes?kind=price&drops=1&since=2026-01-01&limit=7"
                                      + (cursor.map { "&cursor=\($0)" } ?? ""))
            #expect(page.status == 200)
            let body = page.json as? [String: Any] ?? [:]
            paged += body["changes"] as? [[String: Any]] ?? []
            cursor = body["nextCursor"] as? String
        } while cursor != nil
        #expect(paged.count == dropList.count)
        // The same changes, field for field: the CLI formats each price once per currency, the server every time.
        #expect(paged.map { NSDictionary(dictionary: $0) } == dropList.map { NSDictionary(dictionary: $0) })
        #expect(try served.get("/v1/changes?kind=app&drops=1&since=2026-01-01").status == 400)
        #expect(try served.get("/v1/apps/\(busiest)/prices?history=2").status == 400)
    }

    @Test func historyTurnedOnOverAnExistingDatabaseStartsFromItsTables() throws {
        let work = try WorkDirectory()
        let common = ["--only", "application_price"]
        let full = try ImportCLITests.generate(work, name: "full", apps: 200, seed: 8, storefronts: 6, extra: common)
        let daily = try ImportCLITests.generate(work, name: "daily", apps: 200, seed: 8, storefronts: 6,
                                                extra: common + ["--incremental", "--day", "1"])
        let database = work.file("epf.sqlite")
        #expect(try runEPF(["import", full + "/pricing20260105", "--db", database, "--quiet"], in: work.path)
                    .status == 0)
        let before = try Self.prices(database)
        let run = try runEPF(["import", daily + "/pricing20260106", "--db", database, "--quiet", "--history",
                              "prices"], in: work.path)
        #expect(run.status == 0, "\(run.stderr)")
        let wanted = Self.expectedChanges(before, try Self.prices(database), full: false)
        #expect(!wanted.isEmpty)
        #expect(try Self.recorded(database, exportDate: "2026-01-06") == wanted)
        let status = try runEPF(["status", "--db", database, "--json"], in: work.path)
        let json = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        #expect(json?["priceHistory"] as? Bool == true)
    }

    /// The texts of a change a full's merge finds are stored as JSON strings by the project's one JSON writer:
    /// quotes, backslashes, control characters, U+2028 and U+2029 (escaped, as JavaScript needs) and characters
    /// outside the BMP come back as they were, from the stored history and from `epf prices --history --json`
    /// (which shows currencies in capitals: the text has no small letters).
    @Test func textsThatNeedJSONEscapesRoundTrip() throws {
        let work = try WorkDirectory()
        let odd = "Q\"\\\u{2028}\u{2029}\t\u{07}\u{0B}\u{1F}/😀É"
        try work.write("feed/pricing20260105/application_price",
                       NumericPricesCLITests.priceFile([["7", "0.990", "USD", "143441"]]))
        try work.write("feed/pricing20260106/application_price",
                       NumericPricesCLITests.priceFile([["7", "1.990", odd, "143441"]], exportDate: "1767657600000"))
        let database = work.file("epf.sqlite")
        for (day, extra) in [("20260105", ["--history", "prices"]), ("20260106", [])] {
            let run = try runEPF(["import", work.file("feed/pricing\(day)"), "--db", database, "--quiet"] + extra,
                                 in: work.path)
            #expect(run.status == 0, "\(run.stderr)")
        }
        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        #expect(try connection.query("SELECT currency_code FROM application_price") == [[.text(odd)]])
        // Stored: the separators escaped, never raw (a JavaScript string literal breaks on them).
        let stored = try connection.query("SELECT entries FROM epf_price_changes")
        guard case .text(let entries)? = stored.first?.first else {
            Issue.record("no packed history row: \(stored)")
            return
        }
        #expect(entries.contains("\\u2028\\u2029") && !entries.contains("\u{2028}"), "\(entries)")
        #expect(try connection.query("SELECT change, old_price, new_price, currency FROM epf_price_history")
                    == [[.text("changed"), .text("0.99"), .text("1.99"), .text(odd)]])
        // Listed: the same text through the CLI's JSON.
        let cli = try runEPF(["prices", "7", "--history", "--json", "--db", database], in: work.path)
        #expect(cli.status == 0, "\(cli.stderr)")
        let listed = try JSONSerialization.jsonObject(with: Data(cli.stdout.utf8)) as? [String: Any]
        let changes = listed?["changes"] as? [[String: Any]] ?? []
        #expect(changes.count == 1 && changes.first?["currency"] as? String == odd, "\(cli.stdout)")
    }
}
