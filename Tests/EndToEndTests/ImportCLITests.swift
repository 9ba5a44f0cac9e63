import EPFGenerator
import EPFSQLite
import EPFStore
import Foundation
import Testing

/// End-to-end tests of `epf import`, `epf sync` and `epf status` through the built binary.
@Suite struct ImportCLITests {
    static func generate(_ work: WorkDirectory, name: String, apps: Int, seed: UInt64 = 3, storefronts: Int = 10,
                         extra: [String] = []) throws -> String {
        let result = try runEPF(["generate", work.file(name), "--apps", "\(apps)", "--seed", "\(seed)",
                                 "--price-storefronts", "\(storefronts)"] + extra, in: work.path)
        #expect(result.status == 0, "generate failed: \(result.stderr)")
        return work.file(name)
    }

    static func scalar(_ database: String, _ sql: String) throws -> Int64 {
        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        guard case .integer(let value) = try connection.scalar(sql) else { return -1 }
        return value
    }

    static func digest(_ database: String, table: String) throws -> [String] {
        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        return try connection.query("SELECT * FROM \(table)").map { "\($0)" }.sorted()
    }

    @Test func importStatusAndExitCodes() throws {
        let work = try WorkDirectory()
        let feed = try Self.generate(work, name: "feed", apps: 150)
        let database = work.file("epf.sqlite")
        let first = try runEPF(["import", feed, "--db", database, "--json"], in: work.path)
        #expect(first.status == 0, "\(first.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(first.stdout.utf8)) as? [String: Any]
        let outcomes = report?["outcomes"] as? [[String: Any]] ?? []
        #expect(outcomes.contains { $0["table"] as? String == "application" && $0["status"] as? String == "applied" })

        let status = try runEPF(["status", "--db", database, "--json"], in: work.path)
        #expect(status.status == 0)
        #expect(status.stdout.contains("\"application\""))
        let human = try runEPF(["status", "--db", database], in: work.path)
        #expect(human.stdout.contains("last imports"))

        let again = try runEPF(["import", feed, "--db", database], in: work.path)
        #expect(again.status == 0)
        #expect(again.stdout.contains("unchanged"))

        #expect(try runEPF(["import", work.file("missing"), "--db", database], in: work.path).status == 66)
        #expect(try runEPF(["import", "--db", database], in: work.path).status == 64)
        #expect(try runEPF(["import", feed, "--bogus"], in: work.path).status == 64)
        #expect(try runEPF(["status", "--db", work.file("none.sqlite")], in: work.path).status == 66)
    }

    @Test func killNineAtAnyPointThenRerunGivesTheSameDatabase() throws {
        let work = try WorkDirectory()
        let old = try Self.generate(work, name: "old", apps: 500, seed: 1)
        let new = try Self.generate(work, name: "new", apps: 3000, seed: 2, storefronts: 40)
        let reference = work.file("reference.sqlite")
        #expect(try runEPF(["import", new, "--db", reference, "--only", "application_price", "--quiet"],
                           in: work.path).status == 0)
        let expected = try Self.digest(reference, table: "application_price")

        for killAfterCheckpoints in [1, 4] {
            let database = work.file("killed-\(killAfterCheckpoints).sqlite")
            #expect(try runEPF(["import", old, "--db", database, "--only", "application_price", "--quiet"],
                               in: work.path).status == 0)
            let oldRows = try Self.digest(database, table: "application_price")
            let (process, _, _) = try startEPF(["import", new, "--db", database, "--only", "application_price",
                                                "--checkpoint-records", "5000", "--quiet"], in: work.path)
            let deadline = Date().addingTimeInterval(60)
            var done: Int64 = 0
            while Date() < deadline && process.isRunning {
                done = (try? Self.scalar(database, "SELECT coalesce(max(records_done), 0) FROM epf_progress")) ?? 0
                if done >= Int64(5000 * killAfterCheckpoints) { break }
                usleep(20_000)
            }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            // The database opens, is intact and still serves the previous complete table.
            let connection = try SQLiteConnection(path: database, mode: .readOnly)
            #expect(try connection.query("PRAGMA integrity_check") == [[.text("ok")]])
            if process.terminationReason == .uncaughtSignal {
                #expect(try Self.digest(database, table: "application_price") == oldRows)
            }
            let rerun = try runEPF(["import", new, "--db", database, "--only", "application_price",
                                    "--checkpoint-records", "5000", "--json"], in: work.path)
            #expect(rerun.status == 0, "\(rerun.stderr)")
            if process.terminationReason == .uncaughtSignal && done > 0 {
                #expect(rerun.stdout.contains("resuming"), "the rerun should continue from the checkpoint")
            }
            #expect(try Self.digest(database, table: "application_price") == expected)
        }
    }

    /// A full that records price history, killed after its first checkpoint or once its staging table is
    /// complete (committed at the end of its part, while the merge runs beside the index build), and run again,
    /// records the same history as a full never interrupted: each change once, nothing from the killed run.
    @Test func aKilledFullWithPriceHistoryRecordsEachChangeOnce() throws {
        let work = try WorkDirectory()
        let old = try Self.generate(work, name: "old", apps: 1000, seed: 1, storefronts: 40)
        let new = try Self.generate(work, name: "new", apps: 1500, seed: 2, storefronts: 40)
        func history(_ database: String) throws -> [String] {
            let connection = try SQLiteConnection(path: database, mode: .readOnly)
            guard try connection.tableExists("epf_price_history") else { return [] }
            return try connection.query("""
                SELECT kind, id, storefront_id, change, old_price, new_price, currency, export_date
                FROM epf_price_history
                """).map { "\($0)" }.sorted()
        }
        let only = ["--only", "application_price", "--quiet"]
        let reference = work.file("reference.sqlite")
        #expect(try runEPF(["import", old, "--db", reference, "--history", "prices"] + only, in: work.path).status == 0)
        #expect(try runEPF(["import", new, "--db", reference] + only, in: work.path).status == 0)
        let expected = try history(reference)
        let records = try Self.scalar(reference, "SELECT count(*) FROM application_price")
        #expect(expected.count > 1000, "the new full changes prices")

        for killAt in [5000, records] {
            let database = work.file("killed-\(killAt).sqlite")
            #expect(try runEPF(["import", old, "--db", database, "--history", "prices"] + only,
                               in: work.path).status == 0)
            let (process, _, _) = try startEPF(["import", new, "--db", database, "--checkpoint-records", "5000"]
                                               + only, in: work.path)
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline && process.isRunning {
                let done = (try? Self.scalar(database, "SELECT coalesce(max(records_done), 0) FROM epf_progress")) ?? 0
                if done >= killAt { break }
                usleep(5_000)
            }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            if process.terminationReason == .uncaughtSignal {
                let killed = try history(database)
                #expect(killed.isEmpty || killed == expected, "a killed run records all or nothing")
            }
            let rerun = try runEPF(["import", new, "--db", database, "--checkpoint-records", "5000"] + only,
                                   in: work.path)
            #expect(rerun.status == 0, "\(rerun.stderr)")
            #expect(try history(database) == expected, "killed at \(killAt) records")
            #expect(try Self.digest(database, table: "application_price")
                    == Self.digest(reference, table: "application_price"))
        }
    }

    @Test func aSecondImportIsRefusedWhileOneRuns() throws {
        let work = try WorkDirectory()
        let feed = try Self.generate(work, name: "feed", apps: 6000, storefronts: 40)
        let database = work.file("epf.sqlite")
        let (process, _, _) = try startEPF(["import", feed, "--db", database, "--quiet"], in: work.path)
        defer {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline && !FileManager.default.fileExists(atPath: database + "-wal") { usleep(10_000) }
        guard process.isRunning else { return }
        let second = try runEPF(["import", feed, "--db", database], in: work.path)
        #expect(second.status == 75)
        #expect(second.stderr.contains("another import is running"))
    }

    @Test func readersSeeTheWholeOldTableOrTheWholeNewOneThroughout() throws {
        let work = try WorkDirectory()
        let old = try Self.generate(work, name: "old", apps: 300, seed: 1)
        let new = try Self.generate(work, name: "new", apps: 5000, seed: 2, storefronts: 30)
        let database = work.file("epf.sqlite")
        #expect(try runEPF(["import", old, "--db", database, "--quiet"], in: work.path).status == 0)
        let oldCount = try Self.scalar(database, "SELECT count(*) FROM application_price")
        let reference = work.file("reference.sqlite")
        #expect(try runEPF(["import", new, "--db", reference, "--quiet"], in: work.path).status == 0)
        let newCount = try Self.scalar(reference, "SELECT count(*) FROM application_price")

        let (process, _, _) = try startEPF(["import", new, "--db", database, "--quiet",
                                            "--checkpoint-records", "5000"], in: work.path)
        let reader = try SQLiteConnection(path: database, mode: .readOnly)
        var seen = Set<Int64>()
        var errors: [String] = []
        let deadline = Date().addingTimeInterval(120)
        while process.isRunning && Date() < deadline {
            do {
                if case .integer(let count) = try reader.scalar("SELECT count(*) FROM application_price") {
                    seen.insert(count)
                }
                _ = try reader.scalar("SELECT title FROM application LIMIT 1")
            } catch {
                errors.append("\(error)")
            }
            usleep(2_000)
        }
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(errors.isEmpty, "\(errors.prefix(3))")
        #expect(seen.isSubset(of: [oldCount, newCount]),
                "a reader saw \(seen), expected only \(oldCount) or \(newCount)")
        #expect(try Self.scalar(database, "SELECT count(*) FROM application_price") == newCount)
    }

    @Test func syncAppliesTheNewestFullThenItsIncrementalsAndIsSafeToRepeat() throws {
        let work = try WorkDirectory()
        let mirror = work.file("mirror")
        // An older full that must be ignored, the newest full, and two incrementals after it.
        _ = try Self.generate(work, name: "mirror/20251229", apps: 100, seed: 9,
                              extra: ["--export-date", "2025-12-29", "--layout", "v3-archive"])
        _ = try Self.generate(work, name: "mirror/20260105", apps: 120, seed: 3, extra: ["--layout", "v3-archive"])
        _ = try Self.generate(work, name: "mirror/20260105/incremental/20260106", apps: 120, seed: 3,
                              extra: ["--layout", "v3-archive", "--incremental"])
        let database = work.file("epf.sqlite")
        let plan = try runEPF(["sync", mirror, "--db", database, "--plan"], in: work.path)
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(plan.stdout.contains("full 20260105"))
        #expect(plan.stdout.contains("incremental 20260106"))
        #expect(!plan.stdout.contains("20251229"))
        let first = try runEPF(["sync", mirror, "--db", database], in: work.path)
        #expect(first.status == 0, "\(first.stderr)")
        let second = try runEPF(["sync", mirror, "--db", database], in: work.path)
        #expect(second.status == 0)
        #expect(second.stdout.contains("0 applied"))
        #expect(try Self.scalar(database, "SELECT count(*) FROM epf_ledger WHERE mode = 'INCREMENTAL'") > 0)
    }

    @Test func inspectReportsAndExitCodes() throws {
        let work = try WorkDirectory()
        let clean = try Self.generate(work, name: "clean", apps: 100,
                                      extra: ["--layout", "v5", "--only", "application"])
        let sound = try runEPF(["inspect", clean, "--json"], in: work.path)
        #expect(sound.status == 0, "\(sound.stdout)")
        let reports = try JSONSerialization.jsonObject(with: Data(sound.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(reports.first?["table"] as? String == "application")
        #expect(reports.first?["md5"] as? String != nil)
        #expect(reports.first?["recordsRead"] as? Int == reports.first?["recordsWritten"] as? Int)

        let dirty = try Self.generate(work, name: "dirty", apps: 100, extra: ["--dirt", "--only", "application"])
        let bad = try runEPF(["inspect", dirty], in: work.path)
        #expect(bad.status == 65)
        #expect(bad.stdout.contains("field-count"))
        #expect(bad.stdout.contains("invalid-utf8"))
        #expect(try runEPF(["inspect", work.file("nothing-here")], in: work.path).status == 66)
        #expect(try runEPF(["inspect"], in: work.path).status == 64)
        #expect(try runEPF(["inspect", "--help"], in: work.path).stdout.contains("EXIT STATUS"))
        #expect(try runEPF(["--help"], in: work.path).status == 0)
    }

    /// A directory without a table file (a download that left it empty, a wrong path) is a failure that names it,
    /// for import (before the database is created or touched) and inspect alike, never "0 applied" and exit 0.
    @Test func aDirectoryWithoutTablesIsAnError() throws {
        let work = try WorkDirectory()
        let empty = work.file("itunes20260105")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        try Data("not a table\n".utf8).write(to: URL(fileURLWithPath: work.file("itunes20260105/README.md")))
        let imported = try runEPF(["import", empty, "--db", work.file("epf.sqlite")], in: work.path)
        #expect(imported.status == 66)
        #expect(imported.stderr.contains("\(empty): no EPF table files found"), "\(imported.stderr)")
        #expect(!FileManager.default.fileExists(atPath: work.file("epf.sqlite")))
        let inspected = try runEPF(["inspect", empty], in: work.path)
        #expect(inspected.status == 65)
        #expect(inspected.stdout.contains("no EPF table files found"))
    }
}
