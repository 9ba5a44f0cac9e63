import EPFTestSupport
import Foundation
import Glibc
import Testing

/// What users do that the import contract did not cover, on the bundled sample feed (docs/import.md, "Exports out
/// of order", "What status claims", "Databases other users read"); the operations matrix covers the same at random.
@Suite struct UserOrderCLITests {
    static var feeds: String { BuiltEPF.packageRoot.appendingPathComponent("feeds").path }

    static func status(_ database: String, in directory: String) throws -> [String: Any] {
        let run = try runEPF(["status", "--json", "--db", database], in: directory)
        #expect(run.status == 0, "\(run.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
    }

    /// Copies the sample mirror's parts into `root` (`incremental/20260106/...` below it).
    static func mirror(_ work: WorkDirectory, _ name: String) throws -> String {
        let root = work.file(name)
        try FileManager.default.createDirectory(atPath: root + "/incremental", withIntermediateDirectories: true)
        for feed in ["itunes20260105", "pricing20260105"] {
            try FileManager.default.copyItem(atPath: feeds + "/" + feed, toPath: root + "/" + feed)
        }
        try FileManager.default.copyItem(atPath: feeds + "/incremental/20260106",
                                         toPath: root + "/incremental/20260106")
        return root
    }

    @Test func anIncrementalBeforeItsFullIsRefusedAndNothingIsLost() throws {
        let work = try WorkDirectory(prefix: "epf-order")
        let database = work.file("a.sqlite")
        let incremental = ["itunes20260106", "pricing20260106"].map { Self.feeds + "/incremental/20260106/" + $0 }
        let first = try runEPF(["import"] + incremental + ["--db", database, "--quiet"], in: work.path)
        #expect(first.status == 65)
        #expect(first.stderr.contains("import a full export of application first"), "\(first.stderr)")
        // The JSON report dates each refused table, though it was not read: its feed folder's day.
        let json = try runEPF(["import"] + incremental + ["--db", work.file("j.sqlite"), "--json"], in: work.path)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let refused = (report["outcomes"] as? [[String: Any]] ?? []).filter { $0["status"] as? String == "failed" }
        #expect(json.status == 65 && refused.count >= 2, "\(json.stdout)")
        for table in refused {
            #expect(table["exportDate"] as? String == "2026-01-06T00:00:00Z", "\(table)")
        }
        // No table yet: status fails (66) but still says, in JSON, what was refused.
        let empty = try runEPF(["status", "--json", "--db", database], in: work.path)
        #expect(empty.status == 66)
        let refusals = (try? JSONSerialization.jsonObject(with: Data(empty.stdout.utf8)) as? [String: Any])?[
            "failures"] as? [Any]
        #expect(refusals?.count == 6, "\(empty.stdout.prefix(400))")
        let full = try runEPF(["import", Self.feeds + "/itunes20260105", Self.feeds + "/pricing20260105", "--db",
                               database, "--quiet"], in: work.path)
        #expect(full.status == 0, "\(full.stderr)")
        let again = try runEPF(["import"] + incremental + ["--db", database, "--quiet"], in: work.path)
        #expect(again.status == 0, "\(again.stderr)")
        let search = try runEPF(["search", "cafe", "ole", "--db", database], in: work.path)
        #expect(search.stdout.contains("Café Olé Lite 2"), "\(search.stdout)")
        let status = try Self.status(database, in: work.path)
        #expect(status["exportDate"] as? String == "2026-01-06T00:00:00Z")
        #expect(status["mixed"] as? Bool == false)
        #expect((status["failures"] as? [Any])?.isEmpty == true)

        // The full of 2026-01-05 again, from a copy elsewhere: the same files, already applied.
        try FileManager.default.copyItem(atPath: Self.feeds + "/itunes20260105", toPath: work.file("itunes20260105"))
        let stale = try runEPF(["import", work.file("itunes20260105"), "--db", database], in: work.path)
        #expect(stale.status == 0, "\(stale.stderr)")
        #expect(stale.stdout.contains("0 applied"), "\(stale.stdout)")
        let after = try runEPF(["search", "cafe", "ole", "--db", database], in: work.path)
        #expect(after.stdout.contains("Café Olé Lite 2"))

        // The older full forced back in: the table holds it, and the incremental imported again applies again.
        let forced = try runEPF(["import", Self.feeds + "/itunes20260105", "--db", database, "--force", "--quiet"],
                                in: work.path)
        #expect(forced.status == 0, "\(forced.stderr)")
        let back = try runEPF(["search", "cafe", "ole", "--db", database], in: work.path).stdout
        #expect(back.contains("Café Olé Lite") && !back.contains("Café Olé Lite 2"), "\(back)")
        let reapplied = try runEPF(["import"] + incremental + ["--db", database, "--json", "--quiet"], in: work.path)
        #expect(reapplied.status == 0, "\(reapplied.stderr)")
        let outcomes = (try JSONSerialization.jsonObject(with: Data(reapplied.stdout.utf8)) as? [String: Any])?[
            "outcomes"] as? [[String: Any]] ?? []
        #expect(outcomes.contains { $0["table"] as? String == "application" && $0["status"] as? String == "applied" },
                "\(reapplied.stdout.prefix(600))")
        let restored = try runEPF(["search", "cafe", "ole", "--db", database], in: work.path)
        #expect(restored.stdout.contains("Café Olé Lite 2"), "\(restored.stdout)")
    }

    @Test func aFileThatFailsIsClaimedUntilItIsMadeUpFor() throws {
        let work = try WorkDirectory(prefix: "epf-order")
        let root = try Self.mirror(work, "mirror")
        let database = work.file("e.sqlite")
        let broken = root + "/incremental/20260106/itunes20260106/application"
        let original = try Data(contentsOf: URL(fileURLWithPath: broken))
        try Data("not EPF at all\n".utf8).write(to: URL(fileURLWithPath: broken))
        let synced = try runEPF(["sync", root, "--db", database, "--quiet"], in: work.path)
        #expect(synced.status == 65)
        var status = try Self.status(database, in: work.path)
        // Other tables are at 2026-01-06, application is held at 2026-01-05: the data is complete as of then.
        #expect(status["exportDate"] as? String == "2026-01-05T00:00:00Z")
        #expect(status["newestExportDate"] as? String == "2026-01-06T00:00:00Z")
        #expect(status["mixed"] as? Bool == true)
        let failures = status["failures"] as? [[String: Any]] ?? []
        #expect(failures.count == 1)
        #expect(failures.first?["table"] as? String == "application")
        #expect(failures.first?["export"] as? String == "2026-01-06T00:00:00Z")
        let text = try runEPF(["status", "--db", database], in: work.path)
        #expect(text.stdout.contains("data as of: 2026-01-05T00:00:00Z"), "\(text.stdout)")
        #expect(text.stdout.contains("1 file failed"), "\(text.stdout)")
        #expect(text.stdout.contains("Fix the damaged files") && !text.stdout.contains("Refused for their order"),
                "\(text.stdout)")
        // The import's summary lists the file as a failed row of its own, in text and in JSON.
        let genre = Self.feeds + "/itunes20260105/genre"
        let direct = try runEPF(["import", broken, genre, "--db", work.file("d.sqlite")], in: work.path)
        #expect(direct.status == 65)
        #expect(direct.stdout.split(separator: "\n").contains { $0.hasPrefix("failed") && $0.contains(broken) },
                "\(direct.stdout)")
        let report = try runEPF(["import", broken, genre, "--db", work.file("j.sqlite"), "--json"], in: work.path)
        let object = try JSONSerialization.jsonObject(with: Data(report.stdout.utf8)) as? [String: Any]
        let failedFiles = object?["failedFiles"] as? [[String: Any]] ?? []
        #expect(failedFiles.count == 1 && failedFiles.first?["path"] as? String == broken, "\(report.stdout)")
        #expect((failedFiles.first?["error"] as? String)?.contains("not an EPF table file") == true)

        try original.write(to: URL(fileURLWithPath: broken))
        let repaired = try runEPF(["sync", root, "--db", database, "--quiet"], in: work.path)
        #expect(repaired.status == 0, "\(repaired.stderr)")
        status = try Self.status(database, in: work.path)
        #expect(status["exportDate"] as? String == "2026-01-06T00:00:00Z")
        #expect(status["mixed"] as? Bool == false)
        #expect((status["failures"] as? [Any])?.isEmpty == true)
    }

    /// Tables Apple stopped shipping (as music left EPF) stay in the database; once a newer full of their feed was
    /// applied without them, status says they are no longer shipped, kept as of their last full, not behind: no
    /// mixed exports, no sync advice.
    @Test func tablesTheNewerFullNoLongerShipsAreRetiredNotBehind() throws {
        let work = try WorkDirectory(prefix: "epf-order")
        try DemoDatabase.copy(into: work.path)
        let generated = try runEPF(["generate", "later", "--apps", "150", "--week", "2", "--match"], in: work.path)
        #expect(generated.status == 0, "\(generated.stderr)")
        for table in ["song", "collection_song", "artist_song"] {
            try FileManager.default.removeItem(atPath: work.file("later/itunes20260119/\(table)"))
        }
        let feeds = ["itunes", "pricing", "popularity", "match"].map { "later/\($0)20260119" }
        let imported = try runEPF(["import"] + feeds + ["--quiet"], in: work.path)
        #expect(imported.status == 0, "\(imported.stderr)")
        let status = try Self.status("epf.sqlite", in: work.path)
        let retired = status["retired"] as? [[String: Any]] ?? []
        let names = retired.map { $0["table"] as? String ?? "" }
        #expect(names == ["artist_song", "collection_song", "song"], "\(retired)")
        #expect(retired.allSatisfy { $0["keptAsOf"] as? String == "2026-01-12T00:00:00Z"
                && $0["notInFull"] as? String == "2026-01-19T00:00:00Z" && $0["feed"] as? String == "itunes" })
        #expect(status["mixed"] as? Bool == false && status["mixedExports"] is NSNull,
                "\(status["mixedExports"] ?? "")")
        #expect(status["exportDate"] as? String == "2026-01-19T00:00:00Z")
        let text = try runEPF(["status"], in: work.path).stdout
        #expect(text.contains("retired (no longer shipped): artist_song, collection_song, song: kept as of the itunes "
                              + "full of 2026-01-12; the itunes full of 2026-01-19 did not contain them"), "\(text)")
        #expect(!text.contains("behind") && !text.contains("epf sync"), "\(text)")
    }

    /// A refused incremental, imported alone, next to a chart that did apply: the tables it names are missing,
    /// so the data is not complete as of any day, and the advice is the order, not the files.
    @Test func aRefusedIncrementalAloneLeavesItsTablesMissing() throws {
        let work = try WorkDirectory(prefix: "epf-order")
        let database = work.file("r.sqlite")
        let day = Self.feeds + "/incremental/20260106"
        let imported = try runEPF(["import", day + "/itunes20260106", day + "/popularity20260106", "--db", database],
                                  in: work.path)
        #expect(imported.status == 65)
        #expect(imported.stderr.contains("error: application NOT applied, the database holds none of it yet"),
                "\(imported.stderr)")
        #expect(!imported.stderr.contains("previous data kept"), "\(imported.stderr)")
        let status = try Self.status(database, in: work.path)
        #expect(status["mixed"] as? Bool == true)
        let missing = status["missing"] as? [String] ?? []
        #expect(missing.contains("application") && !missing.contains("application_popularity_per_genre"),
                "\(missing)")
        let text = try runEPF(["status", "--db", database], in: work.path).stdout
        #expect(text.contains("incomplete: nothing held yet of application,"), "\(text)")
        #expect(text.contains("Refused for their order (the files are fine)"), "\(text)")
        #expect(!text.contains("Fix the"), "\(text)")

        // The full first, then the incremental: nothing is missing any more.
        let full = try runEPF(["import", Self.feeds + "/itunes20260105", "--db", database, "--quiet"], in: work.path)
        #expect(full.status == 0, "\(full.stderr)")
        let again = try runEPF(["import", day + "/itunes20260106", "--db", database, "--quiet"], in: work.path)
        #expect(again.status == 0, "\(again.stderr)")
        let settled = try Self.status(database, in: work.path)
        #expect((settled["missing"] as? [String])?.isEmpty == true, "\(settled["missing"] ?? "")")
        #expect(settled["mixed"] as? Bool == false)
    }

    /// A table created from an incremental alone (--force) holds only what it changed: status says so.
    @Test func aTableFromAnIncrementalAloneIsClaimedPartial() throws {
        let work = try WorkDirectory(prefix: "epf-order")
        let database = work.file("f.sqlite")
        let incremental = Self.feeds + "/incremental/20260106/itunes20260106/application"
        let forced = try runEPF(["import", incremental, "--force", "--db", database, "--quiet"], in: work.path)
        #expect(forced.status == 0, "\(forced.stderr)")
        var status = try Self.status(database, in: work.path)
        #expect(status["incrementalOnly"] as? [String] == ["application"], "\(status["incrementalOnly"] ?? "")")
        #expect(status["mixed"] as? Bool == true)
        let text = try runEPF(["status", "--db", database], in: work.path).stdout
        #expect(text.contains("partial: application holds only what incrementals changed"), "\(text)")
        // Its full, then the incremental again, in date order (with --force, as the refusal says).
        let full = try runEPF(["import", Self.feeds + "/itunes20260105/application", incremental, "--force", "--db",
                               database, "--quiet"], in: work.path)
        #expect(full.status == 0, "\(full.stderr)")
        status = try Self.status(database, in: work.path)
        #expect((status["incrementalOnly"] as? [String])?.isEmpty == true, "\(status["incrementalOnly"] ?? "")")
        #expect(status["mixed"] as? Bool == false)
    }

    /// While an import holds the lock, status says the tables are what it committed so far (and, before its first
    /// commit, to try again later rather than that the database holds nothing).
    @Test func statusSaysWhenAnImportIsRunning() throws {
        let work = try WorkDirectory(prefix: "epf-order")
        let database = work.file("l.sqlite")
        #expect(try runEPF(["import", Self.feeds + "/itunes20260105", "--db", database, "--quiet"],
                           in: work.path).status == 0)
        #expect(try Self.status(database, in: work.path)["importRunning"] as? Bool == false)
        // Another process holds the import lock as an import does (flock, exclusive), then says so in a file.
        let script = "import fcntl, os, sys, time\nf = open(sys.argv[1] + '.lock', 'w')\n"
            + "fcntl.flock(f, fcntl.LOCK_EX)\ng = open(sys.argv[2] + '.lock', 'w')\nfcntl.flock(g, fcntl.LOCK_EX)\n"
            + "open(sys.argv[1] + '.held', 'w').close()\n"
            + "for _ in range(600):\n    time.sleep(0.05)\n    if os.path.exists(sys.argv[1] + '.release'): break\n"
        try Data(script.utf8).write(to: URL(fileURLWithPath: work.file("hold.py")))
        // The second database is a first import before its first commit: an empty file.
        let first = work.file("first.sqlite")
        _ = FileManager.default.createFile(atPath: first, contents: nil)
        let (holder, output, errors) = try BuiltEPF.start(program: "/usr/bin/env",
                                                          ["python3", "hold.py", database, first], in: work.path)
        defer {
            _ = FileManager.default.createFile(atPath: database + ".release", contents: nil)
            _ = BuiltEPF.finish(holder, output: output, errors: errors)
        }
        let deadline = Date().addingTimeInterval(20)
        while !FileManager.default.fileExists(atPath: database + ".held") && Date() < deadline { usleep(20_000) }
        let status = try Self.status(database, in: work.path)
        #expect(status["importRunning"] as? Bool == true, "\(status["importRunning"] ?? "")")
        let text = try runEPF(["status", "--db", database], in: work.path).stdout
        #expect(text.contains("import running:"), "\(text)")
        let empty = try runEPF(["status", "--db", work.file("new.sqlite")], in: work.path)
        #expect(empty.status == 66)
        for command in [["status"], ["lookup", "284207097"]] {
            let waiting = try runEPF(command + ["--db", first], in: work.path)
            #expect(waiting.status == 75 && waiting.stderr.contains("an import is running"),
                    "\(command): \(waiting.status) \(waiting.stderr)")
        }
    }

    /// `sync --plan` says what the database already holds, step by step, as sync would then skip it.
    @Test func syncPlanLeavesOutWhatTheDatabaseHolds() throws {
        let work = try WorkDirectory(prefix: "epf-order")
        let root = try Self.mirror(work, "mirror")
        let database = work.file("p.sqlite")
        func plan() throws -> (text: String, steps: [[String: Any]]) {
            let text = try runEPF(["sync", root, "--plan", "--db", database], in: work.path)
            #expect(text.status == 0, "\(text.stderr)")
            let json = try runEPF(["sync", root, "--plan", "--json", "--db", database], in: work.path)
            let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
            return (text.stdout, object?["steps"] as? [[String: Any]] ?? [])
        }
        var (text, steps) = try plan()
        #expect(!text.contains("already applied"), "\(text)")
        #expect(steps.map { $0["status"] as? String } == ["pending", "pending"], "\(steps)")

        // Part of the full (its pricing feed) imported by hand: the full's step is partly applied.
        let pricing = try runEPF(["import", root + "/pricing20260105", "--db", database, "--quiet"], in: work.path)
        #expect(pricing.status == 0, "\(pricing.stderr)")
        (text, steps) = try plan()
        #expect(text.contains(" files already applied or superseded)"), "\(text)")
        #expect(steps.first?["status"] as? String == "partial", "\(steps)")
        let pending = steps.first?["pending"] as? [String] ?? []
        #expect(!pending.isEmpty && !pending.contains { $0.contains("pricing20260105") }, "\(pending)")

        let synced = try runEPF(["sync", root, "--db", database, "--quiet"], in: work.path)
        #expect(synced.status == 0, "\(synced.stderr)")
        (text, steps) = try plan()
        #expect(text.split(separator: "\n").filter { $0.hasSuffix("(already applied)") }.count == 2, "\(text)")
        #expect(text.contains("nothing to apply"), "\(text)")
        #expect(steps.map { $0["status"] as? String } == ["applied", "applied"], "\(steps)")
        #expect(steps.allSatisfy { ($0["pending"] as? [String])?.isEmpty == true })
        // --force applies everything again, and its plan says so.
        let forced = try runEPF(["sync", root, "--plan", "--force", "--db", database], in: work.path)
        #expect(!forced.stdout.contains("already applied"), "\(forced.stdout)")

        // A newer full imported from elsewhere: the mirror's incremental is superseded (sync reads and skips it,
        // and the ledger never records it whole), which the plan says, as nothing left to apply.
        let later = try ImportCLITests.generate(work, name: "later", apps: 100, extra: ["--week", "1"])
        #expect(try runEPF(["import", later, "--db", database, "--quiet"], in: work.path).status == 0)
        #expect(try runEPF(["sync", root, "--db", database, "--quiet"], in: work.path).status == 0)
        (text, steps) = try plan()
        #expect(text.contains("incremental 20260106: ") && text.contains("(superseded: "), "\(text)")
        #expect(text.contains("nothing to apply"), "\(text)")
        #expect(steps.map { $0["status"] as? String } == ["applied", "superseded"], "\(steps)")
    }

    /// A first import killed inside a transaction leaves a hot rollback journal, which a read-only reader cannot
    /// roll back: readers say so (exit 75, run the import again), and the import run again recovers.
    @Test func aFirstImportKilledMidTransactionIsNamedAndRecovers() throws {
        let work = try WorkDirectory(prefix: "epf-order")
        let database = work.file("hot.sqlite")
        // A writer in rollback-journal mode (as a first import is, StoreDatabase.open) killed before its commit.
        let script = """
            import sqlite3, os, signal
            c = sqlite3.connect('\(database)', isolation_level=None)
            c.execute('PRAGMA journal_mode=DELETE'); c.execute('PRAGMA cache_size=1')
            c.execute('CREATE TABLE t(x)'); c.execute('INSERT INTO t VALUES (zeroblob(100000))')
            c.execute('BEGIN')
            for i in range(50): c.execute('INSERT INTO t VALUES (zeroblob(10000))')
            os.kill(os.getpid(), signal.SIGKILL)
            """
        try Data(script.utf8).write(to: URL(fileURLWithPath: work.file("kill.py")))
        _ = try runShell("python3 kill.py", in: work.path)
        #expect(FileManager.default.fileExists(atPath: database + "-journal"))
        for command in [["status"], ["sync", Self.feeds, "--plan"]] {
            let run = try runEPF(command + ["--db", database], in: work.path)
            #expect(run.status == 75, "\(command): \(run.status) \(run.stderr)")
            #expect(run.stderr.contains("interrupted before it finished") && run.stderr.contains("run the same epf "
                                                                                               + "import"),
                    "\(run.stderr)")
        }
        let again = try runEPF(["import", Self.feeds + "/itunes20260105", "--db", database, "--quiet"], in: work.path)
        #expect(again.status == 0, "\(again.stderr)")
        let status = try Self.status(database, in: work.path)
        #expect(status["exportDate"] as? String == "2026-01-05T00:00:00Z")
    }

    /// A readme in a feed folder is not a table; a stray file named like one fails as that table, missing from
    /// the database until a newer full of its feed replaces the feed whole (a file that is gone cannot be applied
    /// again, and the newer full does not ship it).
    @Test func aStrayFileIsMissingUntilANewerFullOfItsFeed() throws {
        let work = try WorkDirectory(prefix: "epf-order")
        let root = try Self.mirror(work, "mirror")
        let folder = root + "/incremental/20260106/itunes20260106/"
        try Data("notes\n".utf8).write(to: URL(fileURLWithPath: folder + "README.txt"))
        let database = work.file("s.sqlite")
        let clean = try runEPF(["sync", root, "--db", database, "--quiet"], in: work.path)
        #expect(clean.status == 0, "\(clean.stderr)")
        try Data("notes\n".utf8).write(to: URL(fileURLWithPath: folder + "zz_notes"))
        let synced = try runEPF(["sync", root, "--db", database, "--quiet"], in: work.path)
        #expect(synced.status == 65, "\(synced.stderr)")
        var status = try Self.status(database, in: work.path)
        let failures = status["failures"] as? [[String: Any]] ?? []
        #expect(failures.count == 1 && failures.first?["table"] as? String == "zz_notes", "\(failures)")
        #expect(status["missing"] as? [String] == ["zz_notes"], "\(status["missing"] ?? "")")

        let later = try ImportCLITests.generate(work, name: "later", apps: 100, extra: ["--week", "1"])
        let imported = try runEPF(["import", later, "--db", database, "--quiet"], in: work.path)
        #expect(imported.status == 0, "\(imported.stderr)")
        status = try Self.status(database, in: work.path)
        #expect((status["failures"] as? [Any])?.isEmpty == true, "\(status["failures"] ?? "")")
        #expect((status["missing"] as? [Any])?.isEmpty == true, "\(status["missing"] ?? "")")
        #expect(status["exportDate"] as? String == "2026-01-12T00:00:00Z", "\(status["exportDate"] ?? "")")
    }

    @Test func aMovedMirrorKeepsWhatItApplied() throws {
        let work = try WorkDirectory(prefix: "epf-order")
        let root = try Self.mirror(work, "mirror")
        let database = work.file("e.sqlite")
        #expect(try runEPF(["sync", root, "--db", database, "--quiet"], in: work.path).status == 0)
        try FileManager.default.moveItem(atPath: root, toPath: work.file("moved"))
        let again = try runEPF(["sync", work.file("moved"), "--db", database, "--json", "--quiet"], in: work.path)
        #expect(again.status == 0, "\(again.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any]
        let applied = (report?["outcomes"] as? [[String: Any]] ?? []).filter { $0["status"] as? String == "applied" }
        #expect(applied.isEmpty, "\(applied.map { $0["table"] ?? "" })")
    }

    @Test func syncAndImportOfAMirrorGoByExportMode() throws {
        let work = try WorkDirectory(prefix: "epf-order")
        // An incremental placed in the root, where fulls go: still an incremental.
        let root = work.file("flat")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        for feed in ["itunes20260105", "pricing20260105"] {
            try FileManager.default.copyItem(atPath: Self.feeds + "/" + feed, toPath: root + "/" + feed)
        }
        try FileManager.default.copyItem(atPath: Self.feeds + "/incremental/20260106/itunes20260106",
                                         toPath: root + "/itunes20260106")
        let plan = try runEPF(["sync", root, "--plan", "--db", work.file("p.sqlite")], in: work.path)
        #expect(plan.stdout.contains("full 20260105"), "\(plan.stdout)")
        #expect(plan.stdout.contains("incremental 20260106"), "\(plan.stdout)")
        // A full placed under incremental/: still a full, and the newest one.
        let later = try ImportCLITests.generate(work, name: "later", apps: 100, extra: ["--week", "1"])
        try FileManager.default.createDirectory(atPath: root + "/incremental", withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: later, toPath: root + "/incremental/20260112")
        let replanned = try runEPF(["sync", root, "--plan", "--db", work.file("p.sqlite")], in: work.path)
        #expect(replanned.stdout.contains("full 20260112"), "\(replanned.stdout)")
        #expect(!replanned.stdout.contains("incremental 20260106"), "\(replanned.stdout)")
        // A later day that brings only prices and charts (whose files are FULL every day) is that day's incremental:
        // the first file in name order, a chart's, does not make it a full. (The pricing folder holds the sample
        // incremental's tables: the plan reads only the headers.)
        let day = root + "/incremental/20260113"
        try FileManager.default.createDirectory(atPath: day, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Self.feeds + "/incremental/20260106/popularity20260106",
                                         toPath: day + "/popularity20260113")
        try FileManager.default.copyItem(atPath: Self.feeds + "/incremental/20260106/itunes20260106",
                                         toPath: day + "/pricing20260113")
        let withCharts = try runEPF(["sync", root, "--plan", "--db", work.file("p.sqlite")], in: work.path)
        #expect(withCharts.stdout.contains("full 20260112"), "\(withCharts.stdout)")
        #expect(withCharts.stdout.contains("incremental 20260113"), "\(withCharts.stdout)")

        // epf import of a mirror's root imports what sync would, incrementals included, and says so.
        let database = work.file("m.sqlite")
        let imported = try runEPF(["import", Self.feeds, "--db", database], in: work.path)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stderr.contains("is a mirror"), "\(imported.stderr)")
        let status = try Self.status(database, in: work.path)
        #expect(status["exportDate"] as? String == "2026-01-06T00:00:00Z")

        // epf import . beside its own database leaves the database's files alone.
        let here = work.file("here")
        try FileManager.default.copyItem(atPath: Self.feeds + "/itunes20260105", toPath: here)
        #expect(try runEPF(["import", ".", "--db", "epf.sqlite", "--quiet"], in: here).status == 0)
        let twice = try runEPF(["import", ".", "--db", "epf.sqlite", "--json", "--quiet"], in: here)
        #expect(twice.status == 0, "\(twice.stderr)")
        #expect(!twice.stdout.contains("epf.sqlite-wal") && !twice.stdout.contains("epf.sqlite.lock"))
    }

    @Test func otherUsersReadTheDatabase() throws {
        // As root, the readers run as nobody; a non-root run is already another user than the owner of nothing.
        guard BuiltEPF.canRunAsReader else { return }
        let work = try WorkDirectory(prefix: "epf-order")
        chmod(work.path, 0o755)
        let database = work.file("e.sqlite")
        #expect(try runEPF(["import", Self.feeds, "--db", database, "--quiet"], in: work.path).status == 0)
        func asNobody(_ arguments: [String]) throws -> BuiltEPF.Run {
            try BuiltEPF.runAsReader(arguments, in: "/")
        }
        let lookup = try asNobody(["lookup", "293406864", "--db", database])
        #expect(lookup.status == 0, "\(lookup.stderr)")
        #expect(lookup.stdout.contains("Dragon Battle Tracker"))
        #expect(try asNobody(["status", "--db", database]).status == 0)
        let sql = try asNobody(["sql", "SELECT count(*) FROM application", "--db", database])
        #expect(sql.status == 0 && sql.stdout.contains("153"), "\(sql.stdout) \(sql.stderr)")

        // A copy without its -shm (made by an earlier version) says what to do; so does one nobody may not read.
        let old = work.file("old.sqlite")
        try FileManager.default.copyItem(atPath: database, toPath: old)
        let missing = try asNobody(["status", "--db", old])
        #expect(missing.status == 77)
        #expect(missing.stderr.contains("-shm file is missing"), "\(missing.stderr)")
        chmod(old, 0o600)
        let denied = try asNobody(["status", "--db", old])
        #expect(denied.status == 77)
        #expect(denied.stderr.contains("permission denied"), "\(denied.stderr)")
        let notADatabase = work.file("notes.sqlite")
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: notADatabase))
        let bad = try runEPF(["status", "--db", notADatabase], in: work.path)
        #expect(bad.status == 65)
        #expect(bad.stderr.contains("is not an SQLite database"), "\(bad.stderr)")
    }
}
