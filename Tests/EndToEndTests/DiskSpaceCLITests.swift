import EPFSQLite
import EPFStore
import EPFTestSupport
import Foundation
import Glibc
import Testing

/// End to end: full disks and mixed exports (issue 20, section 4). The disk tests mount a small tmpfs in their
/// own temporary directory (they need root, as CI has; without it they fail and say why) or run epf under a file
/// size limit (`prlimit --fsize`).
@Suite("full disks and mixed exports")
struct DiskSpaceCLITests {
    static let sample = ["itunes20260105", "pricing20260105", "popularity20260105"].map {
        EPFBinary.packageRoot.appendingPathComponent("feeds/\($0)").path
    }

    /// The sample feed's tables, each with its row count.
    static let sampleRows: [String: Int64] = [
        "application": 150, "application_detail": 376, "application_device_type": 382,
        "application_popularity_per_genre": 1720, "application_price": 3000, "artist": 42,
        "artist_application": 150, "artist_collection": 15, "artist_song": 120, "artist_type": 8, "collection": 15,
        "collection_song": 120, "device_type": 9, "genre": 60, "genre_application": 253, "media_type": 12,
        "song": 120, "storefront": 60, "video": 7,
    ]

    /// A tmpfs of `megabytes` mounted at `directory`; `unmount()` in a defer.
    struct SmallDisk {
        let directory: String

        init(_ directory: String, megabytes: Int) throws {
            try #require(getuid() == 0, "mounting a small tmpfs needs root (CI runs as root); run the tests as root")
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try Self.run(["mount", "-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", directory])
            self.directory = directory
        }

        func resize(megabytes: Int) throws {
            try Self.run(["mount", "-o", "remount,size=\(megabytes)m", directory])
        }

        func unmount() { try? Self.run(["umount", "-l", directory]) }

        static func run(_ arguments: [String]) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = arguments
            try process.run()
            process.waitUntilExit()
            try #require(process.terminationStatus == 0, "\(arguments.joined(separator: " ")) failed")
        }
    }

    static func rows(_ database: String) throws -> [String: Int64] {
        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        var result: [String: Int64] = [:]
        for table in sampleRows.keys {
            if case .integer(let count) = try connection.scalar("SELECT count(*) FROM \(table)") {
                result[table] = count
            }
        }
        return result
    }

    static func importSample(_ database: String, in work: WorkDirectory) throws {
        let result = try runEPF(["import"] + sample + ["--db", database, "--quiet"], in: work.path)
        try #require(result.status == 0, "\(result.stderr)")
        #expect(try rows(database) == sampleRows)
    }

    /// A v5 mirror of a generated full of `apps` apps (dated 2026-01-05, like the sample, or a week later).
    static func mirror(_ work: WorkDirectory, apps: Int, week: Int = 0) throws -> String {
        try ImportCLITests.generate(work, name: "mirror", apps: apps, seed: 7,
                                    extra: ["--layout", "v5", "--week", "\(week)"])
    }

    @Test func theSpaceCheckRefusesBeforeTouchingAnything() throws {
        let work = try WorkDirectory()
        let disk = try SmallDisk(work.file("disk"), megabytes: 12)
        defer { disk.unmount() }
        let database = work.file("disk", "epf.sqlite")
        try Self.importSample(database, in: work)
        let mirror = try Self.mirror(work, apps: 2000)
        let before = try FileManager.default.contentsOfDirectory(atPath: disk.directory).sorted()
        let attributes = try FileManager.default.attributesOfItem(atPath: database)

        let refused = try runEPF(["sync", mirror, "--db", database, "--quiet"], in: work.path)
        #expect(refused.status == 73, "\(refused.stderr)")
        #expect(refused.stderr.contains("not enough space in \(disk.directory) for this import: it needs about "),
                "\(refused.stderr)")
        #expect(refused.stderr.contains(" MB) free. Nothing was changed"), "\(refused.stderr)")
        #expect(refused.stderr.contains("Nothing was changed"))
        #expect(refused.stderr.contains("--no-space-check skips this estimate"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk.directory).sorted() == before)
        let after = try FileManager.default.attributesOfItem(atPath: database)
        #expect(after[.modificationDate] as? Date == attributes[.modificationDate] as? Date)
        #expect(after[.size] as? NSNumber == attributes[.size] as? NSNumber)
        #expect(try Self.rows(database) == Self.sampleRows)
        withExtendedLifetime(work) {}
    }

    @Test func aFullDiskMidImportKeepsEveryTableWholeAndTheNextRunCompletesTheExport() throws {
        let work = try WorkDirectory()
        let disk = try SmallDisk(work.file("disk"), megabytes: 12)
        defer { disk.unmount() }
        let database = work.file("disk", "epf.sqlite")
        try Self.importSample(database, in: work)
        let mirror = try Self.mirror(work, apps: 2000)

        let full = try runEPF(["sync", mirror, "--db", database, "--quiet", "--no-space-check"], in: work.path)
        #expect(full.status == 73, "\(full.stderr)")
        #expect(full.stderr.contains("the disk is full at \(disk.directory) ("), "\(full.stderr)")
        #expect(full.stderr.contains("Free space or use a larger filesystem, then run the same command again"))
        #expect(!full.stderr.contains("NOT applied"), "the stop is told once, in plain words: \(full.stderr)")
        let failedTable = try #require(full.stderr.firstMatch(of: /while writing (\w+)/)?.1).description
        // Every table is whole: the sample's rows, or (applied before the disk filled) the new export's.
        let afterFailure = try Self.rows(database)
        #expect(afterFailure[failedTable] == Self.sampleRows[failedTable])
        let changed = afterFailure.filter { $0.value != Self.sampleRows[$0.key] }.map(\.key).sorted()
        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        #expect(try connection.scalar("PRAGMA integrity_check") == .text("ok"))
        for table in changed {
            #expect(Self.summary(full.stdout, status: "applied").contains(table), "\(table) changed, not applied")
        }

        try disk.resize(megabytes: 200)
        let again = try runEPF(["sync", mirror, "--db", database, "--quiet"], in: work.path)
        #expect(again.status == 0, "\(again.stderr)")
        let completed = try Self.rows(database)
        #expect(completed["application"] == 2000)
        #expect(completed["application_price"] == Int64(20_000))
        let status = try runEPF(["status", "--db", database, "--json"], in: work.path)
        #expect(Self.behindAfterSync(status.stdout).isEmpty, "\(status.stdout)")
        withExtendedLifetime(work) {}
    }

    @Test func aFileSizeLimitIsNamedAndTheNextRunCompletes() throws {
        let work = try WorkDirectory()
        let database = work.file("epf.sqlite")
        try Self.importSample(database, in: work)
        let mirror = try Self.mirror(work, apps: 2000)
        // prlimit runs epf under RLIMIT_FSIZE: writes past 4 MB fail with EFBIG (SIGXFSZ is ignored by epf).
        let limited = try runEPFWithFileSizeLimit(4_000_000, ["sync", mirror, "--db", database, "--quiet",
                                                              "--no-space-check"], in: work.path)
        #expect(limited.status == 73, "\(limited.stderr)")
        #expect(limited.stderr.contains("the file size limit (ulimit -f) was reached writing in \(work.path)"),
                "\(limited.stderr)")
        #expect(limited.stderr.contains("run the same command again"))
        let afterFailure = try Self.rows(database)
        let failedTable = try #require(limited.stderr.firstMatch(of: /while writing (\w+)/)?.1).description
        #expect(afterFailure[failedTable] == Self.sampleRows[failedTable])

        let again = try runEPF(["sync", mirror, "--db", database, "--quiet"], in: work.path)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try Self.rows(database)["application"] == 2000)
    }

    @Test func statusFlagsTablesFromAnOlderFullAndTheNextSyncCompletesIt() throws {
        let work = try WorkDirectory()
        let database = work.file("epf.sqlite")
        try Self.importSample(database, in: work)
        let mirror = try Self.mirror(work, apps: 300, week: 1)
        let partial = try runEPF(["import", mirror + "/itunes20260112", "--only", "^application$", "--db", database,
                                  "--quiet"], in: work.path)
        #expect(partial.status == 0, "\(partial.stderr)")

        let text = try runEPF(["status", "--db", database, "--imports", "0"], in: work.path)
        #expect(text.status == 0)
        #expect(text.stdout.contains("warning: the tables come from more than one full export: 1 from the full of "
                                     + "2026-01-12 in \(mirror), 18 behind:"), "\(text.stdout)")
        #expect(text.stdout.contains("  artist (full of 2026-01-05 from \(EPFBinary.packageRoot.path)/feeds)"))
        // The advice names the directory the newest full came from: a sync of the sample's own folder (which
        // holds only the older full) applies nothing.
        #expect(text.stdout.contains("Next: epf sync \(mirror) applies the 18 tables behind from the full export of "
                                     + "2026-01-12 there; a sync of another mirror, only once it holds that full"),
                "\(text.stdout)")
        let elsewhere = try runEPF(["sync", EPFBinary.packageRoot.path + "/feeds", "--db", database, "--quiet"],
                                   in: work.path)
        #expect(elsewhere.status == 0, "\(elsewhere.stderr)")
        let still = try runEPF(["status", "--db", database, "--json"], in: work.path)
        #expect(Self.behindAfterSync(still.stdout).count == 18, "\(still.stdout)")

        let json = try runEPF(["status", "--db", database, "--json"], in: work.path)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let mixed = try #require(object["mixedExports"] as? [String: Any], "\(json.stdout)")
        #expect(mixed["newestFull"] as? String == "2026-01-12T00:00:00Z")
        #expect(mixed["current"] as? [String] == ["application"])
        let behind = (mixed["behind"] as? [[String: Any]] ?? []).compactMap { $0["table"] as? String }
        #expect(behind.count == 18 && behind.contains("application_price"))
        #expect((mixed["nextSync"] as? String)?.hasPrefix("epf sync \(mirror) applies the 18 tables behind") == true)

        let served = try servedStatus(database, in: work.path)
        let servedMixed = try #require(served["mixedExports"] as? [String: Any], "\(served)")
        #expect(servedMixed["newestFull"] as? String == "2026-01-12T00:00:00Z")
        #expect((servedMixed["behind"] as? [Any])?.count == 18)

        let sync = try runEPF(["sync", mirror, "--db", database, "--quiet"], in: work.path)
        #expect(sync.status == 0, "\(sync.stderr)")
        // The table already applied from the newest full is not loaded again.
        #expect(Self.summary(sync.stdout, status: "unchanged").contains(mirror + "/itunes20260112/application.tbz"),
                "\(sync.stdout)")
        let after = try runEPF(["status", "--db", database, "--json"], in: work.path)
        #expect(Self.behindAfterSync(after.stdout).isEmpty, "\(after.stdout)")
        let summary = try runEPF(["status", "--db", database], in: work.path).stdout
        #expect(!summary.contains("more than one full export"), "\(summary)")
    }

    /// The tables `epf status --json` names behind the newest full. The sample is a v3 export, the mirrors v5 ones:
    /// v5's four chart tables replace v3's `application_popularity_per_genre`, which is then not behind.
    static func behindAfterSync(_ json: String) -> [String] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
              let mixed = object["mixedExports"] as? [String: Any] else { return [] }
        return (mixed["behind"] as? [[String: Any]] ?? []).compactMap { $0["table"] as? String }
    }

    /// The tables of an import summary with this status.
    static func summary(_ stdout: String, status: String) -> Set<String> {
        Set(stdout.split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ")
            return words.count > 2 && words[0] == status ? String(words[1]) : nil
        })
    }

    /// Runs epf through `prlimit --fsize=BYTES`.
    func runEPFWithFileSizeLimit(_ bytes: Int, _ arguments: [String], in directory: String) throws -> RunResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
        process.arguments = ["--fsize=\(bytes)", EPFBinary.url.path] + arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let (outputData, errorData) = BuiltEPF.readToEnd(process, output: output, errors: errors)
        return RunResult(status: process.terminationStatus, stdout: String(decoding: outputData, as: UTF8.self),
                         stderr: String(decoding: errorData, as: UTF8.self))
    }

    /// `GET /v1/status` from an `epf serve --port 0` of the database.
    func servedStatus(_ database: String, in directory: String) throws -> [String: Any] {
        let served = try ServedEPF(database: database, in: directory)
        defer { served.stop() }
        return try #require(try served.get("/v1/status").json as? [String: Any])
    }
}
