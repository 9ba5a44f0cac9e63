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
}
