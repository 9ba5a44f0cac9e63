import EPFSQLite
import EPFStore
import Foundation
import Testing

/// `epf sync` of a v5 mirror (one .tbz per table) with read-ahead: the same tables as `--no-read-ahead`, and a sync
/// killed while the next archive is being read ahead resumes to the same database, leaving no spill file behind.
@Suite struct ReadAheadCLITests {
    static let tables = ["application", "application_detail", "application_device_type", "genre_application",
                         "application_price"]

    static func digest(_ database: String) throws -> [String] {
        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        var rows: [String] = []
        for table in tables {
            rows += try connection.query("SELECT * FROM \(table)").map { "\(table): \($0)" }.sorted()
        }
        return rows
    }

    /// The summary lines without their timings: status, table, mode, records, rows.
    static func summary(_ stdout: String) -> [String] {
        stdout.split(separator: "\n").map { line in
            line.split(separator: " ", omittingEmptySubsequences: true).prefix(5).joined(separator: " ")
        }.filter { !$0.hasPrefix("rebuilt") && !$0.hasPrefix("phases") && !$0.contains(" in ") }
    }

    @Test func killedAndResumedSyncWithReadAheadGivesTheSameDatabase() throws {
        let work = try WorkDirectory()
        let mirror = work.file("mirror")
        let generated = try runEPF(["generate", mirror, "--apps", "2000", "--seed", "9", "--price-storefronts", "10",
                                    "--layout", "v5"], in: work.path)
        #expect(generated.status == 0, "\(generated.stderr)")

        let reference = work.file("reference/epf.sqlite")
        try FileManager.default.createDirectory(atPath: work.file("reference"), withIntermediateDirectories: true)
        let plain = try runEPF(["sync", mirror, "--db", reference, "--no-read-ahead", "--no-documents"],
                               in: work.path)
        #expect(plain.status == 0, "\(plain.stderr)")
        let expected = try Self.digest(reference)
        #expect(expected.count > 2000)

        let directory = work.file("ahead")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let database = directory + "/epf.sqlite"
        let (process, _, _) = try startEPF(["sync", mirror, "--db", database, "--no-documents", "--quiet"],
                                           in: work.path)
        // Kill it once a table is applied: the next archive is then being read ahead or loaded.
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline && process.isRunning {
            let connection = try? SQLiteConnection(path: database, mode: .readOnly)
            let applied = try? connection?.scalar("SELECT count(*) FROM epf_ledger WHERE outcome = 'applied'")
            if case .integer(let count)? = applied, count >= 1 { break }
            usleep(20_000)
        }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(!names.contains { $0.contains("read-ahead") }, "\(names)")

        let rerun = try runEPF(["sync", mirror, "--db", database, "--no-documents"], in: work.path)
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(try Self.digest(database) == expected)

        let fresh = work.file("fresh/epf.sqlite")
        try FileManager.default.createDirectory(atPath: work.file("fresh"), withIntermediateDirectories: true)
        let ahead = try runEPF(["sync", mirror, "--db", fresh, "--no-documents"], in: work.path)
        #expect(ahead.status == 0, "\(ahead.stderr)")
        #expect(Self.summary(ahead.stdout) == Self.summary(plain.stdout))
        #expect(try Self.digest(fresh) == expected)
    }
}
