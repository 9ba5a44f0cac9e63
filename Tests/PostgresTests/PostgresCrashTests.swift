import EPFGenerator
import EPFImport
import EPFPostgres
import EPFStore
import EPFTestSupport
import Foundation
import Testing

/// The `epf` binary built next to the tests (`swift build --build-tests` builds it).
private var epfBinary: String { BuiltEPF.url.path }

/// Starts `epf` with its output discarded.
private func startEPF(_ arguments: [String], in directory: String) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: epfBinary)
    process.arguments = arguments
    process.currentDirectoryURL = URL(fileURLWithPath: directory)
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    return process
}

/// Crashes, dropped connections, concurrent imports and readers during a swap, against a real server.
@Suite struct PostgresCrashTests {
    /// Blocks a full load of `table` at its swap: a reader's lock on the old table (held until `release`).
    final class TableHold: @unchecked Sendable {
        let connection: PostgresConnection
        init(url: String, table: String) throws {
            connection = try PostgresConnection(url: url)
            try connection.execute("BEGIN")
            try connection.execute("LOCK TABLE epf.\(table) IN ACCESS SHARE MODE")
        }
        func release() throws { try connection.execute("COMMIT") }
    }

    @Test func killNineThenRerunContinuesFromTheLastCheckpoint() throws {
        let url = try TestCluster.get().database()
        let scratch = try TemporaryDirectory()
        var options = feedOptions(apps: 1000)
        options.tables = ["application_price"]
        let paths = try generate(options, in: scratch.path, name: "feed")
        #expect(try importPostgres(paths, url: url, scratch: scratch).succeeded)
        let expected = try dump(url, "SELECT * FROM epf.application_price")
        // The old table is held by a reader, so the import cannot finish before it is killed.
        let hold = try TableHold(url: url, table: "application_price")
        let process = try startEPF(["import"] + paths + ["--db", url, "--force", "--checkpoint-records", "100",
                                                         "--quiet"], in: scratch.path)
        let progressed = try waitFor(60) {
            let done = try dump(url, "SELECT coalesce(max(records_done), 0) FROM epf.epf_progress").first
            return (Int(done ?? "0") ?? 0) > 0
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try hold.release()
        #expect(progressed, "the import never committed a checkpoint")
        #expect(try dump(url, "SELECT * FROM epf.application_price") == expected)

        let rerun = try importPostgres(paths, url: url, scratch: scratch) { $0.force = true }
        #expect(rerun.succeeded, "\(failures(rerun))")
        let outcome = try #require(rerun.outcomes.first { $0.table == "application_price" })
        #expect(outcome.resumedRecords > 0)
        #expect(outcome.warnings.contains { $0.contains("resuming") })
        #expect(outcome.rows == expected.count)
        #expect(try dump(url, "SELECT * FROM epf.application_price") == expected)
        #expect(try dump(url, "SELECT count(*) FROM epf.epf_progress") == ["0"])
    }

    /// With a storefront selection, so that the resumed load is seen to count what it left out before the cut.
    @Test func aDroppedConnectionLosesNothingAndTheRerunResumes() throws {
        let url = try TestCluster.get().database()
        let selection = try RowSelection.Request(storefronts: "us,gb", languages: nil)
        let scratch = try TemporaryDirectory()
        var options = feedOptions(apps: 300)
        options.tables = ["application_price"]
        let paths = try generate(options, in: scratch.path, name: "feed")
        let first = try importPostgres(paths, url: url, scratch: scratch) { $0.selectionRequest = selection }
        #expect(first.succeeded)
        let leftOut = first.outcomes.first?.leftOut ?? 0
        #expect(leftOut > 0)
        let expected = try dump(url, "SELECT * FROM epf.application_price")
        let hold = try TableHold(url: url, table: "application_price")
        // The import loads everything, then waits for the lock at its swap; there its connection is cut.
        let killer = Thread {
            _ = try? waitFor(60) {
                let waiting = try dump(url, """
                    SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'
                    """)
                guard let pid = waiting.first else { return false }
                try PostgresConnection(url: url).execute("SELECT pg_terminate_backend($1)", [pid])
                return true
            }
            try? hold.release()
        }
        killer.start()
        let cut = try importPostgres(paths, url: url, scratch: scratch) {
            $0.force = true
            $0.checkpointRecords = 100
            $0.selectionRequest = selection
        }
        #expect(cut.outcomes.first?.status == .failed)
        #expect(cut.outcomes.first?.message?.contains("PostgreSQL") == true, "\(failures(cut))")
        #expect(try dump(url, "SELECT * FROM epf.application_price") == expected)

        let rerun = try importPostgres(paths, url: url, scratch: scratch) {
            $0.force = true
            $0.selectionRequest = selection
        }
        #expect(rerun.succeeded, "\(failures(rerun))")
        #expect(rerun.outcomes.first?.resumedRecords == (rerun.outcomes.first?.records ?? 0))
        #expect(rerun.outcomes.first?.leftOut == leftOut)
        #expect(try dump(url, "SELECT * FROM epf.application_price") == expected)
    }

    @Test func aSecondImportOfTheSameSchemaIsRefused() throws {
        let url = try TestCluster.get().database()
        let scratch = try TemporaryDirectory()
        var options = feedOptions(apps: 100)
        options.tables = ["storefront"]
        let paths = try generate(options, in: scratch.path, name: "feed")
        let holder = try PostgresConnection(url: url)
        try holder.execute("SELECT pg_advisory_lock(hashtextextended('epf import epf', 0))")
        #expect(throws: ImportError.self) { try importPostgres(paths, url: url, scratch: scratch) }
        let process = try startEPF(["import"] + paths + ["--db", url, "--quiet"], in: scratch.path)
        process.waitUntilExit()
        #expect(process.terminationStatus == 75)
        // Another schema is another lock.
        #expect(try importPostgres(paths, url: url, scratch: scratch, schema: "other").succeeded)
        try holder.execute("SELECT pg_advisory_unlock_all()")
        #expect(try importPostgres(paths, url: url, scratch: scratch).succeeded)
    }

    @Test func aReaderDuringAFullImportSeesTheOldTableOrTheNewOne() throws {
        let url = try TestCluster.get().database()
        let scratch = try TemporaryDirectory()
        var small = feedOptions(apps: 200)
        small.tables = ["application_price"]
        var large = feedOptions(apps: 600)
        large.tables = ["application_price"]
        let oldPaths = try generate(small, in: scratch.path, name: "old")
        let newPaths = try generate(large, in: scratch.path, name: "new")
        #expect(try importPostgres(oldPaths, url: url, scratch: scratch).succeeded)
        let oldCount = try dump(url, "SELECT count(*) FROM epf.application_price")
        let done = ManagedAtomicFlag()
        final class Seen: @unchecked Sendable { var counts = Set<String>(); var errors: [String] = []; var reads = 0 }
        let seen = Seen()
        let thread = Thread {
            guard let reader = try? PostgresConnection(url: url) else {
                seen.errors.append("cannot connect")
                done.finish()
                return
            }
            while !done.isSet {
                do {
                    let count = try reader.scalar("SELECT count(*) FROM epf.application_price") ?? "NULL"
                    seen.counts.insert(count)
                    seen.reads += 1
                } catch {
                    seen.errors.append("\(error)")
                }
            }
            done.finish()
        }
        thread.start()
        let report = try importPostgres(newPaths, url: url, scratch: scratch) { $0.checkpointRecords = 200 }
        usleep(50_000)
        done.set()
        done.waitFinished()
        let newCount = try dump(url, "SELECT count(*) FROM epf.application_price")
        #expect(report.succeeded, "\(failures(report))")
        #expect(oldCount != newCount)
        #expect(seen.errors.isEmpty, "\(seen.errors.prefix(3))")
        #expect(seen.counts.isSubset(of: Set(oldCount + newCount)), "\(seen.counts)")
        #expect(seen.reads > 1)
    }
}

/// Waits until `condition` holds (polling), at most `seconds`.
private func waitFor(_ seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try condition() { return true }
        usleep(10_000)
    }
    return false
}

/// A flag one thread sets and another polls, and a second flag for "the poller has stopped".
final class ManagedAtomicFlag: @unchecked Sendable {
    private let lock = NSCondition()
    private var value = false
    private var finished = false
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
    func set() { lock.lock(); value = true; lock.unlock() }
    func finish() { lock.lock(); finished = true; lock.broadcast(); lock.unlock() }
    func waitFinished() { lock.lock(); while !finished { lock.wait() }; lock.unlock() }
}

/// `epf status` and the query commands with a PostgreSQL URL, through the built binary.
@Suite struct PostgresCLITests {
    /// Runs `epf` to completion with its output in files; returns status, stdout and stderr.
    private func runEPF(_ arguments: [String], in scratch: TemporaryDirectory) throws -> (Int32, String, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: epfBinary)
        process.arguments = arguments
        process.currentDirectoryURL = scratch.url
        let outPath = scratch.file("stdout-\(UUID().uuidString)")
        let errPath = scratch.file("stderr-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        let out = String(decoding: FileManager.default.contents(atPath: outPath) ?? Data(), as: UTF8.self)
        let err = String(decoding: FileManager.default.contents(atPath: errPath) ?? Data(), as: UTF8.self)
        return (process.terminationStatus, out, err)
    }

    @Test func statusAndImportNeverPrintThePasswordAndQueriesRefuseAURL() throws {
        let url = try TestCluster.get().database()
        // The cluster trusts local connections, so any password is accepted: it must still never be printed.
        let secret = url.replacingOccurrences(of: "postgres@", with: "postgres:s3cr3t-pw@")
        let scratch = try TemporaryDirectory()
        var options = feedOptions(apps: 100)
        options.tables = ["storefront", "genre"]
        let paths = try generate(options, in: scratch.path, name: "feed")
        let (imported, importOut, importErr) = try runEPF(["import"] + paths + ["--db", secret, "--schema", "cli"],
                                                          in: scratch)
        #expect(imported == 0, "\(importErr)")
        #expect(!(importOut + importErr).contains("s3cr3t"))
        let (status, json, statusErr) = try runEPF(["status", "--db", secret, "--schema", "cli", "--json"],
                                                   in: scratch)
        #expect(status == 0, "\(statusErr)")
        #expect(json.contains("\"tables\"") && json.contains("\"storefront\"") && json.contains("\"lastImports\""))
        #expect(!(json + statusErr).contains("s3cr3t"))
        let (lookup, _, lookupErr) = try runEPF(["lookup", "1", "--db", secret], in: scratch)
        #expect(lookup == 64)
        #expect(lookupErr.contains("SQLite") && !lookupErr.contains("s3cr3t"))
        let (serve, _, _) = try runEPF(["serve", "--db", secret, "--port", "0"], in: scratch)
        #expect(serve == 64)
        let (badSchema, _, _) = try runEPF(["status", "--db", secret, "--schema", "No-Such"], in: scratch)
        #expect(badSchema == 64)
    }
}
