import EPFGenerator
import EPFStore
import Foundation
import Testing

/// End to end: `epf import` of a `--dirt` feed keeps apps with junk in `download_size` (NULL, repaired), and
/// `epf lookup` finds them; `--bad-values reject` rejects them instead.
@Suite struct BadValuesCLITests {
    /// The dirt entries of the generated feed and the app id each application entry's record carries.
    static func junkApps(_ feed: String) throws -> [(entry: DirtEntry, id: String)] {
        let manifest = URL(fileURLWithPath: feed).appendingPathComponent("dirt20260105.json")
        let entries = try JSONDecoder().decode([DirtEntry].self, from: Data(contentsOf: manifest))
        let table = try Data(contentsOf: URL(fileURLWithPath: feed + "/itunes20260105/application"))
        return entries.filter { $0.table == "application" && $0.column == "download_size" }.map { entry in
            let record = table[Int(entry.offset)...].prefix(200)
            let fields = record.split(separator: 0x01, omittingEmptySubsequences: false)
            return (entry, String(decoding: fields[1], as: UTF8.self))
        }
    }

    @Test func junkValuesAreRepairedLookedUpAndListedInTheRejectsFile() throws {
        let work = try WorkDirectory()
        let feed = try ImportCLITests.generate(work, name: "dirty", apps: 200,
                                               extra: ["--dirt", "--only", "application"])
        let junk = try Self.junkApps(feed)
        #expect(junk.map { $0.entry.value } == ["[123]", "<UnknownKeyException>", "12\u{07}3", "[int]"])
        let database = work.file("epf.sqlite")
        let imported = try runEPF(["import", feed + "/itunes20260105", "--db", database, "--quiet"], in: work.path)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.contains("repaired"))
        #expect(imported.stderr.contains("3 rejected, 5 repaired"), "\(imported.stderr)")

        for (entry, id) in junk {
            let lookup = try runEPF(["lookup", id, "--db", database, "--json"], in: work.path)
            #expect(lookup.status == 0, "app \(id) with download_size '\(entry.value ?? "")' not found")
            let json = try JSONSerialization.jsonObject(with: Data(lookup.stdout.utf8)) as? [String: Any]
            let app = (json?["results"] as? [[String: Any]])?.first
            #expect(app?["trackId"] as? Int == Int(id))
            #expect(app?["fileSizeBytes"] == nil)
            #expect((app?["releaseDate"] as? String)?.hasSuffix("Z") == true)
        }

        // The rejects file lists each repair: reason, record, offset, action, column, original text (escaped).
        let rejects = try Data(contentsOf: URL(fileURLWithPath: database
                                               + ".rejects/itunes20260105-application.rejects"))
        let lines = rejects.split(separator: 0x0A).map { String(decoding: $0, as: UTF8.self) }
        for (entry, _) in junk {
            let value = (entry.value ?? "").replacingOccurrences(of: "\u{07}", with: "\\x07")
            let expected = ["bad-integer", "\(entry.record)", "\(entry.offset)", "repaired", "download_size", value]
                .joined(separator: "\u{01}") + "\u{01}"
            #expect(lines.contains { $0.hasPrefix(expected) }, "no repair line for record \(entry.record)")
        }

        let status = try runEPF(["status", "--db", database], in: work.path)
        #expect(status.stdout.contains("repaired"))

        // With --bad-values reject, the same apps are rejected and not found.
        let strict = work.file("strict.sqlite")
        let rejected = try runEPF(["import", feed + "/itunes20260105", "--db", strict, "--quiet", "--json",
                                   "--bad-values", "reject"], in: work.path)
        #expect(rejected.status == 0, "\(rejected.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(rejected.stdout.utf8)) as? [String: Any]
        let outcome = (report?["outcomes"] as? [[String: Any]])?.first
        #expect(outcome?["repaired"] as? Int == 0)
        #expect(outcome?["rejects"] as? Int == 8)
        let missing = try runEPF(["lookup", junk[0].id, "--db", strict], in: work.path)
        #expect(missing.status == 1)

        let bad = try runEPF(["import", feed, "--db", strict, "--bad-values", "maybe"], in: work.path)
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("--bad-values must be 'null' or 'reject'"))
    }

    /// `--rejects-dir` puts the rejects files where the cron job keeps its logs, not next to the database.
    @Test func rejectsDirectoryOption() throws {
        let work = try WorkDirectory()
        let feed = try ImportCLITests.generate(work, name: "dirty", apps: 200,
                                               extra: ["--dirt", "--only", "application"])
        let database = work.file("epf.sqlite")
        let directory = work.file("logs/rejects")
        let imported = try runEPF(["import", feed + "/itunes20260105", "--db", database, "--quiet",
                                   "--rejects-dir", directory], in: work.path)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stderr.contains(directory + "/itunes20260105-application.rejects"), "\(imported.stderr)")
        #expect(FileManager.default.fileExists(atPath: directory + "/itunes20260105-application.rejects"))
        #expect(!FileManager.default.fileExists(atPath: database + ".rejects"))
        let empty = try runEPF(["import", feed + "/itunes20260105", "--db", database, "--rejects-dir", ""],
                               in: work.path)
        #expect(empty.status == 64 && empty.stderr.contains("--rejects-dir"), "\(empty.stderr)")
        // A rejects directory that cannot be made is named with the system's reason, not Foundation's dictionary.
        try Data().write(to: URL(fileURLWithPath: work.file("afile")))
        let blocked = try runEPF(["import", feed + "/itunes20260105", "--db", work.file("other.sqlite"), "--quiet",
                                  "--rejects-dir", work.file("afile/rejects")], in: work.path)
        #expect(blocked.status != 0)
        #expect(blocked.stderr.contains("cannot create the rejects directory: Not a directory"), "\(blocked.stderr)")
        #expect(!blocked.stderr.contains("NSCocoaErrorDomain"), "\(blocked.stderr)")
    }
}
