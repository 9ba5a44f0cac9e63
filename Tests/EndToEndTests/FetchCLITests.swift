import EPFSQLite
import EPFStore
import EPFTestSupport
import Foundation
import Testing

/// A generated feed in Apple's v5 layout (full + two incrementals) behind a `FeedServer`, and a mirror to fill.
final class FetchFixture {
    let work: WorkDirectory
    let server: FeedServer
    let source: String
    let mirror: String
    static let user = "epfuser"
    static let password = "pa55-w0rd-secret"

    init(apps: Int = 150, only: String? = nil, layout: String = "v5") throws {
        work = try WorkDirectory(prefix: "epf-fetch")
        source = work.file("srv")
        mirror = work.file("mirror")
        let current = source + "/current"
        let common = ["--layout", layout, "--apps", "\(apps)", "--price-storefronts", "5"]
            + (only.map { ["--only", $0] } ?? [])
        for extra in [[], ["--incremental", "--day", "1"], ["--incremental", "--day", "2"]] {
            let target = extra.isEmpty ? current : current + "/incremental/current"
            let result = try runEPF(["generate", target] + common + extra, in: work.path)
            #expect(result.status == 0, "generate: \(result.stderr)")
        }
        server = FeedServer(root: source, credentials: "\(Self.user):\(Self.password)")
        try server.start()
    }

    deinit { server.stop() }

    var credentials: [String: String] {
        ["EPF_USER": Self.user, "EPF_PASSWORD": Self.password, "HOME": work.path]
    }

    /// The fetch command line against the server, with quick retries for tests.
    func arguments(_ extra: [String]) -> [String] {
        ["fetch", "--mirror", mirror, "--url", server.url("current/"), "--retry-wait", "0.05", "--stall-timeout",
         "1", "--quiet"] + extra
    }

    func fetch(_ extra: [String] = [], environment: [String: String]? = nil) throws -> RunResult {
        try runEPF(arguments(extra), in: work.path, environment: environment ?? credentials)
    }

    /// Source archives (relative to `srv/current`) and where the mirror keeps them.
    func archives() -> [(source: String, mirror: String)] {
        let current = source + "/current"
        let files = FileManager.default.enumerator(atPath: current)?.compactMap { $0 as? String } ?? []
        return files.filter { $0.hasSuffix(".tbz") }.sorted().map { relative in
            let prefix = "incremental/current/"
            guard relative.hasPrefix(prefix) else { return (relative, relative) }
            let rest = String(relative.dropFirst(prefix.count))
            let feedEntry = rest.split(separator: "/")[0]
            let stem = feedEntry.hasSuffix(".tbz") ? feedEntry.dropLast(4) : feedEntry
            return (relative, "incremental/\(stem.suffix(8))/\(rest)")
        }
    }

    /// Archives whose mirrored bytes differ from the source (or are missing).
    func mismatches(only: (String) -> Bool = { _ in true }) -> [String] {
        archives().filter { only($0.source) }.compactMap { pair in
            let original = FileManager.default.contents(atPath: source + "/current/" + pair.source)
            let copy = FileManager.default.contents(atPath: mirror + "/" + pair.mirror)
            let sidecar = FileManager.default.fileExists(atPath: mirror + "/" + pair.mirror + ".md5")
            return original == copy && sidecar ? nil : pair.mirror
        }
    }

    /// Leftovers of downloads in progress anywhere in the mirror.
    func partials() -> [String] {
        let files = FileManager.default.enumerator(atPath: mirror)?.compactMap { $0 as? String } ?? []
        return files.filter { $0.hasSuffix(".part") || $0.hasSuffix(".state") || $0.hasSuffix(".partial")
            || $0.hasSuffix(".tmp") }
    }
}

/// `epf fetch` through the built binary against a real HTTP server on 127.0.0.1.
@Suite struct FetchCLITests {
    static func tables(_ database: String) throws -> [String] {
        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        return try connection.query("SELECT table_name FROM epf_tables ORDER BY 1").compactMap {
            if case .text(let name) = $0.first { return name }
            return nil
        }
    }

    @Test func cleanFetchThenSyncEqualsImportingTheFeedAndASecondFetchDownloadsNothing() throws {
        let fixture = try FetchFixture()
        let first = try fixture.fetch(["--connections", "4"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(fixture.mismatches().isEmpty)
        #expect(fixture.partials().isEmpty)
        #expect(first.stdout.contains("published  itunes20260105"))
        let sent = fixture.server.archiveBytesSent
        #expect(sent > 0)

        let second = try fixture.fetch()
        #expect(second.status == 0, "\(second.stderr)")
        #expect(fixture.server.archiveBytesSent == sent)
        #expect(second.stdout.contains("0 downloaded"))

        // Leftovers of a download must never be read by sync.
        try fixture.work.write("mirror/itunes20260105/application.tbz.part", Array("junk\n".utf8))
        try fixture.work.write("mirror/itunes20260105/application.tbz.part.state", Array("{}".utf8))
        let synced = fixture.work.file("synced.sqlite")
        let sync = try runEPF(["sync", fixture.mirror, "--db", synced, "--quiet"], in: fixture.work.path)
        #expect(sync.status == 0, "\(sync.stderr)")

        let direct = fixture.work.file("direct.sqlite")
        let current = fixture.source + "/current"
        for paths in [["itunes20260105", "pricing20260105", "popularity20260105"],
                      ["incremental/current/itunes20260106", "incremental/current/pricing20260106",
                       "incremental/current/popularity20260106"],
                      ["incremental/current/itunes20260107", "incremental/current/pricing20260107",
                       "incremental/current/popularity20260107"]] {
            let result = try runEPF(["import"] + paths.map { current + "/" + $0 } + ["--db", direct, "--quiet"],
                                    in: fixture.work.path)
            #expect(result.status == 0, "\(result.stderr)")
        }
        let tables = try Self.tables(direct)
        #expect(tables.count > 10)
        #expect(try Self.tables(synced) == tables)
        for table in tables {
            #expect(try ImportCLITests.digest(synced, table: table) == ImportCLITests.digest(direct, table: table),
                    "table \(table) differs")
        }

        // Incrementals the database's ledger shows applied are not fetched again, even when gone from the mirror.
        try FileManager.default.removeItem(atPath: fixture.mirror + "/incremental")
        let third = try fixture.fetch(["--db", synced])
        #expect(third.status == 0, "\(third.stderr)")
        #expect(fixture.server.archiveBytesSent == sent)
        // Applied: two incrementals of six changed tables and the day's four charts each.
        #expect(third.stdout.contains("0 downloaded, 0 resumed, 23 present, 20 applied"), "\(third.stdout)")
    }

    @Test func keepRemovesOlderFullsAfterACompleteFetchButNotTheDatabasesFull() throws {
        let fixture = try FetchFixture()
        #expect(try fixture.fetch(["--only", "application"]).status == 0)
        let database = fixture.work.file("keep.sqlite")
        #expect(try runEPF(["sync", fixture.mirror, "--db", database, "--quiet"], in: fixture.work.path).status == 0)
        try fixture.work.write("mirror/itunes20251229/application.tbz", [1])
        try fixture.work.write("mirror/pricing20251229/application_price.tbz", [1])
        try fixture.work.write("mirror/incremental/20251230/itunes20251230/application.tbz", [1])
        let result = try fixture.fetch(["--only", "application", "--keep", "1", "--db", database])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("removed    itunes20251229 (--keep)"))
        let left = try FileManager.default.contentsOfDirectory(atPath: fixture.mirror).filter { !$0.hasPrefix(".") }
        #expect(left.sorted() == ["incremental", "itunes20260105"])
        let days = try FileManager.default.contentsOfDirectory(atPath: fixture.mirror + "/incremental")
        #expect(days.sorted() == ["20260106", "20260107"])
    }

    @Test func aVersionThreeTreeOfOneArchivePerFeedIsMirroredForSync() throws {
        let fixture = try FetchFixture(layout: "v3-archive")
        let result = try fixture.fetch(["--connections", "3"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(fixture.mismatches().isEmpty)
        #expect(FileManager.default.fileExists(atPath: fixture.mirror + "/itunes20260105.tbz"))
        #expect(FileManager.default.fileExists(atPath: fixture.mirror + "/incremental/20260107/pricing20260107.tbz"))
        let plan = try runEPF(["sync", fixture.mirror, "--plan"], in: fixture.work.path)
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(plan.stdout.contains("incremental 20260107"))
        let database = fixture.work.file("v3.sqlite")
        let sync = try runEPF(["sync", fixture.mirror, "--db", database, "--quiet"], in: fixture.work.path)
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(try Self.tables(database).contains("application_price"))
    }

    enum Fault: String, CaseIterable, Sendable {
        case dropMidFile, stall, ignoreRange, corruptOnce, busy
    }

    @Test(arguments: Fault.allCases)
    func everyRecoverableFaultEndsInTheCorrectMirror(_ fault: Fault) throws {
        let fixture = try FetchFixture(apps: 1000, only: "application,application_detail,application_price")
        var faults = FeedFaults()
        switch fault {
        case .dropMidFile: faults.dropMidFile = 3
        case .stall: faults.stallMidFile = 2
        case .ignoreRange: faults.ignoreRange = true
        case .corruptOnce: faults.corrupt = ["current/itunes20260105/application_detail.tbz": 1]
        case .busy: faults.unavailable = 3
        }
        faults.stallSeconds = 20
        fixture.server.faults = faults
        let result = try fixture.fetch(["--connections", "4", "--min-split", "64K"])
        #expect(result.status == 0, "\(fault): \(result.stderr)")
        #expect(fixture.mismatches().isEmpty, "\(fault)")
        #expect(fixture.partials().isEmpty, "\(fault): \(fixture.partials())")
        if fault == .corruptOnce { #expect(result.stderr.contains("MD5 mismatch")) }
        if fault == .ignoreRange { #expect(result.stderr.contains("ignored the byte range")) }
    }

    @Test func aFileThatNeverMatchesItsMD5ExitsSixtyFiveAndLeavesNothingPartial() throws {
        let fixture = try FetchFixture(apps: 1000, only: "application,application_detail,application_price")
        var faults = FeedFaults()
        faults.corrupt = ["current/itunes20260105/application_detail.tbz": Int.max]
        fixture.server.faults = faults
        let result = try fixture.fetch(["--connections", "3", "--min-split", "64K"])
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("application_detail.tbz: MD5 mismatch"))
        #expect(fixture.partials().filter { !$0.hasSuffix(".partial") }.isEmpty, "\(fixture.partials())")
        #expect(!FileManager.default.fileExists(atPath: fixture.mirror + "/itunes20260105"))
        // Every other file is there (the itunes directory stays hidden until it is complete).
        #expect(fixture.mismatches { !$0.hasPrefix("itunes20260105/") }.isEmpty)
        let sync = try runEPF(["sync", fixture.mirror, "--plan"], in: fixture.work.path)
        #expect(!sync.stdout.contains("itunes20260105"))
    }

    @Test func refusedCredentialsExitSeventySevenNamingTheirSourceButNotThePassword() throws {
        let fixture = try FetchFixture()
        var wrong = fixture.credentials
        wrong["EPF_PASSWORD"] = "not-the-password"
        let refused = try fixture.fetch(environment: wrong)
        #expect(refused.status == 77)
        #expect(refused.stderr.contains("EPF_USER/EPF_PASSWORD"))
        #expect(!refused.stderr.contains("not-the-password"))

        let none = try fixture.fetch(environment: ["HOME": fixture.work.path])
        #expect(none.status == 77)
        #expect(none.stderr.contains("~/.netrc"))

        let netrc = fixture.work.file("netrc")
        let line = "machine 127.0.0.1 login \(FetchFixture.user) password \(FetchFixture.password)\n"
        try fixture.work.write("netrc", Array(line.utf8))
        let viaNetrc = try fixture.fetch(["--netrc-file", netrc], environment: ["HOME": fixture.work.path])
        #expect(viaNetrc.status == 0, "\(viaNetrc.stderr)")
        #expect(fixture.mismatches().isEmpty)

        let onCommandLine = try fixture.fetch(["--password", "x"])
        #expect(onCommandLine.status == 64)
    }

    @Test func anIncrementalNotPublishedYetIsSkippedAndTheRestMirrored() throws {
        let fixture = try FetchFixture()
        var faults = FeedFaults()
        faults.notFound = ["current/incremental/current/itunes20260107"]
        fixture.server.faults = faults
        let result = try fixture.fetch()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("not published yet"))
        #expect(fixture.mismatches { !$0.contains("itunes20260107") }.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: fixture.mirror + "/incremental/20260107/itunes20260107"))
    }

    @Test func aKilledFetchResumesWithoutDownloadingAgainWhatItHad() throws {
        let fixture = try FetchFixture(apps: 1000, only: "application_detail")
        var faults = FeedFaults()
        faults.bytesPerSecond = 100_000
        fixture.server.faults = faults
        let file = "current/itunes20260105/application_detail.tbz"
        let size = Int64(FileManager.default.contents(atPath: fixture.source + "/" + file)?.count ?? 0)
        #expect(size > 300_000)
        let (process, _, _) = try startEPF(fixture.arguments(["--connections", "2", "--min-split", "64K"]),
                                           in: fixture.work.path, environment: fixture.credentials)
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning && fixture.server.bytesSent(file) < size / 2 && Date() < deadline {
            usleep(20_000)
        }
        // One fetch at a time: a second one finds the lock taken.
        let second = try fixture.fetch()
        #expect(second.status == 75, "\(second.stderr)")
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let before = fixture.server.bytesSent(file)
        #expect(before < size, "the fetch finished before it was killed; make the file larger")
        #expect(!FileManager.default.fileExists(atPath: fixture.mirror + "/itunes20260105"))

        fixture.server.faults = FeedFaults()
        let resumed = try fixture.fetch(["--connections", "2", "--min-split", "64K", "--json"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(fixture.mismatches().isEmpty)
        #expect(fixture.partials().isEmpty)
        let again = fixture.server.bytesSent(file) - before
        // The resumed run fetched only what the killed one had not saved: its state lags by about 0.25 s, and bytes
        // the server counted as sent may still sit in the kernel's socket buffers (more on a loaded machine).
        #expect(again < size - before + 128 * 1024,
                "sent \(again) bytes again of \(size), \(before) before the kill")
        #expect(again < size * 3 / 4)
        #expect(resumed.stdout.contains("\"resumed\""))
    }

    @Test func idleConnectionsSplitTheRangesStillInFlight() throws {
        let fixture = try FetchFixture(apps: 1000, only: "application_detail")
        try FileManager.default.removeItem(atPath: fixture.source + "/current/incremental")
        var faults = FeedFaults()
        faults.bytesPerSecond = 100_000
        fixture.server.faults = faults
        let result = try fixture.fetch(["--connections", "4", "--min-split", "128K", "--only", "application_detail"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(fixture.mismatches().isEmpty)
        let ranges = fixture.server.requestLog.filter {
            $0.hasPrefix("GET /current/itunes20260105/application_detail.tbz range=bytes=")
        }
        // Four pieces of 128 KB (the last shorter); the connection done first splits a piece still in flight.
        #expect(ranges.count > 4, "\(ranges)")
    }

    @Test func dryRunListsWhatWouldBeDownloadedAndWritesNothing() throws {
        let fixture = try FetchFixture()
        let result = try fixture.fetch(["--dry-run", "--only", "application,application_price"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("would download  itunes20260105/application.tbz"))
        #expect(result.stdout.contains("incremental/20260107/pricing20260107/application_price.tbz"))
        #expect(!result.stdout.contains("application_detail"))
        #expect(!FileManager.default.fileExists(atPath: fixture.mirror))
        #expect(fixture.server.archiveBytesSent == 0)
        #expect(try fixture.fetch(["--url", fixture.server.url("nothing/")]).status == 66)
        #expect(try fixture.fetch(["--connections", "0"]).status == 64)
        // A server that is gone: retries, then 69 (EX_UNAVAILABLE).
        fixture.server.stop()
        let gone = try fixture.fetch(["--retries", "1"])
        #expect(gone.status == 69, "\(gone.stderr)")
        #expect(gone.stderr.contains("gave up after 2 tries"))
    }

    /// Runs scripts/nightly-import with the built epf.
    static func nightly(_ arguments: [String], fixture: FetchFixture, environment: [String: String]) throws
        -> RunResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [EPFBinary.packageRoot.appendingPathComponent("scripts/nightly-import").path] + arguments
        var merged = ProcessInfo.processInfo.environment
        merged.removeValue(forKey: "EPF_DB")
        merged["EPF_BIN"] = EPFBinary.url.path
        for (key, value) in environment { merged[key] = value }
        process.environment = merged
        process.currentDirectoryURL = URL(fileURLWithPath: fixture.work.path)
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let errorData = errors.fileHandleForReading.readDataToEndOfFile()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return RunResult(status: process.terminationStatus, stdout: String(decoding: outputData, as: UTF8.self),
                         stderr: String(decoding: errorData, as: UTF8.self))
    }

    @Test func nightlyImportFetchesThenSyncsWithOneLogAndOneExitCode() throws {
        let fixture = try FetchFixture()
        let database = fixture.work.file("db/epf.sqlite")
        let logs = fixture.work.file("logs")
        let arguments = ["--log-dir", logs, "--url", fixture.server.url("current/"), "--only",
                         "application,application_price", fixture.mirror, database]
        let ok = try Self.nightly(arguments, fixture: fixture, environment: fixture.credentials)
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(ok.stderr.isEmpty && ok.stdout.isEmpty)
        #expect(try Self.tables(database) == ["application", "application_price"])
        let logFiles = try FileManager.default.contentsOfDirectory(atPath: logs)
        #expect(logFiles.count == 1)
        let log = try String(contentsOfFile: logs + "/" + (logFiles.first ?? ""), encoding: .utf8)
        #expect(log.contains(" fetch --mirror") && log.contains(" sync ") && log.contains("exit 0"))
        #expect(!log.contains(FetchFixture.password))

        var wrong = fixture.credentials
        wrong["EPF_PASSWORD"] = "wrong"
        let refused = try Self.nightly(arguments, fixture: fixture, environment: wrong)
        #expect(refused.status == 77)
        #expect(refused.stderr.contains("failed with exit 77"))
        #expect(refused.stderr.contains("last lines of the log"))
        #expect(refused.stderr.contains("refused the credentials"))

        // --only with --no-fetch applies only those tables of the mirror (as a regex of the names to sync).
        let alone = fixture.work.file("db/alone.sqlite")
        let synced = try Self.nightly(["--log-dir", logs, "--no-fetch", "--only", "application", fixture.mirror,
                                       alone], fixture: fixture, environment: [:])
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(try Self.tables(alone) == ["application"])
        let bad = try Self.nightly(["--no-fetch", "--only", "^app.*", fixture.mirror, alone], fixture: fixture,
                                   environment: [:])
        #expect(bad.status == 64 && bad.stderr.contains("--only takes table names separated by commas"))
    }
}

