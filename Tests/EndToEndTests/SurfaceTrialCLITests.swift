import EPFTestSupport
import Foundation
import Testing

/// What a new user's trial found on the surface (issue 31, section 3): one exit code per problem with the database
/// file whatever the command, a nightly run with nothing to do in one line, `superseded` said as such, and an
/// archive without its `.md5` named as not verified.
extension SurfaceCLITests {
    /// Each command that opens a database, with arguments that succeed on a good one.
    static func databaseCommands(appID: String) -> [[String]] {
        [["lookup", appID], ["search", "a"], ["sql", "SELECT 1"], ["status"],
         ["import", "feed/itunes20260105/genre", "--quiet"]]
    }

    @Test func aDatabaseFileProblemExitsAlikeFromEveryCommand() throws {
        let feed = try Imported()
        let notADatabase = feed.work.file("notdb.sqlite")
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: notADatabase))
        for arguments in Self.databaseCommands(appID: feed.appID) {
            let run = try feed.epf(arguments + ["--db", "notdb.sqlite"])
            #expect(run.status == 65, "\(arguments[0]): \(run.stderr)")
            // Named once, as not a database, whatever the command.
            #expect(run.stderr.contains("notdb.sqlite is not an SQLite database")
                        && run.stderr.components(separatedBy: "notdb.sqlite").count == 2,
                    "\(arguments[0]): \(run.stderr)")
        }

        // As another user: a copy without its -shm in a directory that user may not write, then a file that user
        // may not read at all.
        guard BuiltEPF.canRunAsReader else { return }
        chmod(feed.work.path, 0o755)
        let copy = feed.work.file("copy.sqlite")
        try FileManager.default.copyItem(atPath: feed.database, toPath: copy)
        for (mode, words) in [(0o644, "-shm file is missing"), (0o600, "permission denied")] {
            chmod(copy, mode_t(mode))
            for arguments in Self.databaseCommands(appID: feed.appID) {
                let run = try BuiltEPF.runAsReader(arguments + ["--db", copy], in: feed.work.path)
                #expect(run.status == 77, "\(arguments[0]), mode \(String(mode, radix: 8)): \(run.stderr)")
                // import needs to write beside the database first: its lock file is what this user may not make.
                let expected = arguments[0] == "import" ? "permission denied: this user may not write" : words
                #expect(run.stderr.contains(expected), "\(arguments[0]): \(run.stderr)")
            }
        }
    }

    /// The summary's lines, without the timings of the last one.
    static func lines(_ text: String) -> [String] {
        text.split(separator: "\n").map(String.init)
    }

    @Test func aRunWithNothingToDoIsOneLineAndAnOlderExportIsSuperseded() throws {
        let work = try WorkDirectory()
        for arguments in [["mirror/20260105"], ["older", "--export-date", "2026-01-04"]] {
            let generated = try runEPF(["generate"] + arguments + ["--apps", "100"], in: work.path)
            #expect(generated.status == 0, "\(generated.stderr)")
        }
        #expect(try runEPF(["sync", "mirror", "--db", "epf.sqlite", "--quiet"], in: work.path).status == 0)
        let again = try runEPF(["sync", "mirror", "--db", "epf.sqlite", "--quiet"], in: work.path)
        let files = try FileManager.default.subpathsOfDirectory(atPath: work.file("mirror/20260105"))
            .filter { $0.split(separator: "/").count == 2 }.count
        #expect(again.status == 0 && files > 3, "\(again.stderr)")
        let lines = Self.lines(again.stdout)
        #expect(lines.count == 2
                    && lines[0] == "unchanged  \(files) files already applied (--force applies them again)"
                    && lines[1].hasPrefix("0 applied, 0 failed, \(files) unchanged in "), "\(again.stdout)")
        let json = try runEPF(["sync", "mirror", "--db", "epf.sqlite", "--json"], in: work.path)
        #expect((Self.object(json.stdout)["unchangedSources"] as? [String])?.count == files, "\(json.stdout)")

        // A full older than the one the tables hold: superseded, in the summary, its last line and the JSON.
        let older = try FileManager.default.contentsOfDirectory(atPath: work.file("older")).sorted()
            .map { "older/" + $0 }
        let superseded = try runEPF(["import"] + older + ["--db", "epf.sqlite", "--quiet"], in: work.path)
        #expect(superseded.status == 0, "\(superseded.stderr)")
        let rows = Self.lines(superseded.stdout).filter { $0.hasPrefix("superseded ") }
        #expect(rows.count == files, "\(superseded.stdout)")
        #expect(!superseded.stdout.contains("unchanged ") && superseded.stdout.contains(
            "0 applied, 0 failed, 0 unchanged, \(files) superseded in "), "\(superseded.stdout)")
        #expect(superseded.stderr.contains("not applied, superseded: the table holds the newer full export of 2026-01-05"))
        let supersededJSON = try runEPF(["import"] + older + ["--db", "epf.sqlite", "--json"], in: work.path)
        let statuses = (Self.object(supersededJSON.stdout)["outcomes"] as? [[String: Any]] ?? [])
            .compactMap { $0["status"] as? String }
        #expect(statuses.count == files && statuses.allSatisfy { $0 == "superseded" }, "\(statuses)")
    }

    @Test func anArchiveWithoutItsMD5IsLoadedAndSaidNotVerified() throws {
        let work = try WorkDirectory()
        let generated = try runEPF(["generate", "v5", "--layout", "v5", "--only", "application", "--apps", "100"],
                                   in: work.path)
        #expect(generated.status == 0, "\(generated.stderr)")
        let archive = "v5/itunes20260105/application.tbz"
        try FileManager.default.removeItem(atPath: work.file(archive + ".md5"))
        let run = try runEPF(["import", archive, "--db", "epf.sqlite", "--quiet"], in: work.path)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("warning: application: no application.tbz.md5 beside \(archive): the archive was "
                                    + "not verified"), "\(run.stderr)")
        let json = try runEPF(["import", archive, "--db", "again.sqlite", "--json"], in: work.path)
        let warnings = (Self.object(json.stdout)["outcomes"] as? [[String: Any]])?.first?["warnings"] as? [String]
        #expect(warnings?.contains { $0.hasPrefix("no application.tbz.md5 beside") } == true, "\(json.stdout)")
        // One file already applied is named.
        let again = try runEPF(["import", archive, "--db", "epf.sqlite", "--quiet"], in: work.path)
        #expect(Self.lines(again.stdout).first == "unchanged  \(archive) (already applied; --force applies it again)",
                "\(again.stdout)")
    }
}
