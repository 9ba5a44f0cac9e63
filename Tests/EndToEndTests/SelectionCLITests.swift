import EPFSQLite
import Foundation
import Testing

/// End to end: `epf sync --storefronts --languages` keeps only those storefronts' price and popularity rows and
/// those languages' detail rows, the database remembers the selection for the next sync, a different one is
/// refused (exit 64, nothing changed), and `epf status` and `/v1/status` report it.
@Suite struct SelectionCLITests {
    /// The rows of a table file whose column `column` holds one of `values` (plain v3 files).
    static func rows(in file: String, column: String, where keep: (String) -> Bool) throws -> Int {
        let data = try Data(contentsOf: URL(fileURLWithPath: file))
        let records = data.split(separator: 0x0A).map { Array($0.dropLast()) }
        guard let header = records.first,
              let index = String(decoding: header.dropFirst(), as: UTF8.self).split(separator: "\u{1}",
                                                                                    omittingEmptySubsequences: false)
                  .firstIndex(where: { $0 == column }) else { return -1 }
        return records.filter { $0.first != 0x23 }.filter { record in
            let fields = record.split(separator: 0x01, omittingEmptySubsequences: false)
            return fields.count > index && keep(String(decoding: fields[index], as: UTF8.self))
        }.count
    }

    static func grouped(_ database: String, _ sql: String) throws -> [String: Int64] {
        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        var groups: [String: Int64] = [:]
        for row in try connection.query(sql) where row.count == 2 {
            if case .integer(let count) = row[1] {
                switch row[0] {
                case .integer(let key): groups["\(key)"] = count
                case .text(let key): groups[key] = count
                default: break
                }
            }
        }
        return groups
    }

    @Test func syncKeepsTheSelectionRemembersItAndRefusesAnother() throws {
        let work = try WorkDirectory()
        let mirror = work.file("mirror")
        let full = try ImportCLITests.generate(work, name: "mirror/20260105", apps: 200, seed: 4, storefronts: 20)
        _ = try ImportCLITests.generate(work, name: "mirror/20260105/incremental/20260106", apps: 200, seed: 4,
                                        storefronts: 20, extra: ["--incremental"])
        let database = work.file("epf.sqlite")
        let kept: Set<String> = ["143441", "143444", "143462"]
        let wantedPrices = try Self.rows(in: full + "/pricing20260105/application_price", column: "storefront_id") {
            kept.contains($0)
        }
        let wantedDetails = try Self.rows(in: full + "/itunes20260105/application_detail", column: "language_code") {
            ["EN", "JA"].contains($0)
        }
        #expect(wantedPrices > 0 && wantedDetails > 0)

        // The full alone first, with the selection.
        let first = try runEPF(["import", full + "/itunes20260105", full + "/pricing20260105",
                                full + "/popularity20260105", "--db", database, "--storefronts", "US,gbr,143462",
                                "--languages", "en,JA", "--json", "--quiet"], in: work.path)
        #expect(first.status == 0, "\(first.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(first.stdout.utf8)) as? [String: Any])
        let outcomes = report["outcomes"] as? [[String: Any]] ?? []
        let price = try #require(outcomes.first { $0["table"] as? String == "application_price" })
        #expect(price["rows"] as? Int == wantedPrices)
        #expect(price["leftOut"] as? Int == (price["records"] as? Int ?? 0) - wantedPrices)
        #expect(try Self.grouped(database, "SELECT storefront_id, count(*) FROM application_price GROUP BY 1").keys
                    .sorted() == kept.sorted())
        #expect(try Self.grouped(database, "SELECT storefront_id, count(*) FROM application_popularity_per_genre "
                                 + "GROUP BY 1").keys.allSatisfy(kept.contains))
        #expect(try ImportCLITests.scalar(database, "SELECT count(*) FROM application_detail") == wantedDetails)
        // The storefront table itself is whole: the names of every storefront stay known.
        let storefrontRows = try Self.rows(in: full + "/itunes20260105/storefront", column: "storefront_id") { _ in true }
        #expect(storefrontRows > kept.count)
        #expect(try ImportCLITests.scalar(database, "SELECT count(*) FROM storefront") == storefrontRows)

        // sync without the options applies the incremental with the database's selection.
        let synced = try runEPF(["sync", mirror, "--db", database, "--quiet"], in: work.path)
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(try ImportCLITests.scalar(database, "SELECT count(*) FROM epf_ledger WHERE mode = 'INCREMENTAL'") > 0)
        #expect(try Self.grouped(database, "SELECT storefront_id, count(*) FROM application_price GROUP BY 1").keys
                    .allSatisfy(kept.contains))
        #expect(try Self.grouped(database, "SELECT language_code, count(*) FROM application_detail GROUP BY 1").keys
                    .sorted() == ["EN", "JA"])

        // Another selection is refused before anything is written.
        let before = try ImportCLITests.digest(database, table: "application_price")
        let refused = try runEPF(["sync", mirror, "--db", database, "--storefronts", "us", "--force", "--quiet",
                                  "--only", "^nothing$"], in: work.path)
        #expect(refused.status == 0, "--force allows a new selection: \(refused.stderr)")
        let other = try runEPF(["sync", mirror, "--db", database, "--storefronts", "us,de", "--quiet"], in: work.path)
        #expect(other.status == 64)
        #expect(other.stderr.contains("loaded with another selection"), "\(other.stderr)")
        #expect(!other.stderr.contains("USAGE"))
        #expect(try ImportCLITests.digest(database, table: "application_price") == before)

        // status and /v1/status say what the database keeps (now only us, after the --force above).
        let status = try runEPF(["status", "--db", database], in: work.path)
        #expect(status.stdout.contains("keeps only: storefronts us (143441); languages en, ja"), "\(status.stdout)")
        let served = try DiskSpaceCLITests().servedStatus(database, in: work.path)
        let selection = try #require(served["selection"] as? [String: Any])
        let storefronts = selection["storefronts"] as? [[String: Any]] ?? []
        #expect(storefronts.count == 1 && storefronts.first?["id"] as? Int == 143441
                    && storefronts.first?["country"] as? String == "us")
        #expect(selection["languages"] as? [String] == ["en", "ja"])
    }

    @Test func badSelectionsAreUsageErrors() throws {
        let work = try WorkDirectory()
        let database = work.file("epf.sqlite")
        let feed = try ImportCLITests.generate(work, name: "feed", apps: 100, extra: ["--only", "application_price"])
        for (option, value, message) in [("--storefronts", "us,narnia", "'narnia' is neither"),
                                         ("--storefronts", ",", "needs a comma-separated list"),
                                         ("--languages", "en,e n", "'e n' is not a language code")] {
            let run = try runEPF(["import", feed, "--db", database, option, value], in: work.path)
            #expect(run.status == 64)
            #expect(run.stderr.contains(message), "\(run.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: database))
    }

    /// A load killed after a checkpoint and resumed counts the records it left out before the kill too: `leftOut`
    /// and `rows` add up to the file's records, as in an uninterrupted run.
    @Test func aResumedLoadCountsWhatItLeftOutBeforeTheKill() throws {
        let work = try WorkDirectory()
        let feed = try ImportCLITests.generate(work, name: "feed", apps: 3000, seed: 6, storefronts: 40)
        func priceOutcome(_ stdout: String) throws -> [String: Any] {
            let report = try #require(try JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any])
            let outcomes = report["outcomes"] as? [[String: Any]] ?? []
            return try #require(outcomes.first { $0["table"] as? String == "application_price" })
        }
        let arguments = ["--only", "application_price", "--storefronts", "us,gb", "--checkpoint-records", "5000",
                         "--json"]
        let reference = try runEPF(["import", feed, "--db", work.file("reference.sqlite")] + arguments,
                                   in: work.path)
        #expect(reference.status == 0, "\(reference.stderr)")
        let whole = try priceOutcome(reference.stdout)
        let leftOut = try #require(whole["leftOut"] as? Int)
        #expect(leftOut > 0)

        let database = work.file("killed.sqlite")
        let (process, _, _) = try startEPF(["import", feed, "--db", database, "--quiet"] + arguments, in: work.path)
        let deadline = Date().addingTimeInterval(60)
        var done: Int64 = 0
        while Date() < deadline && process.isRunning {
            done = (try? ImportCLITests.scalar(database, "SELECT coalesce(max(records_done), 0) FROM epf_progress"))
                ?? 0
            if done >= 10_000 { break }
            usleep(10_000)
        }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        let rerun = try runEPF(["import", feed, "--db", database] + arguments, in: work.path)
        #expect(rerun.status == 0, "\(rerun.stderr)")
        let resumed = try priceOutcome(rerun.stdout)
        if process.terminationReason == .uncaughtSignal && done > 0 {
            #expect(rerun.stdout.contains("resuming"), "the rerun should continue from the checkpoint")
            #expect(resumed["resumedRecords"] as? Int ?? 0 > 0)
        }
        #expect(resumed["leftOut"] as? Int == leftOut)
        #expect(resumed["rows"] as? Int == whole["rows"] as? Int)
    }
}
