import Foundation
import Testing
import EPFStore

/// `--threads N` (bzip2 decompression threads) on the commands that read feeds.
@Suite struct ThreadsOptionTests {
    @Test func inspectAndImportTakeThreadsAndRefuseNonsense() throws {
        let work = try WorkDirectory()
        let feed = try ImportCLITests.generate(work, name: "feed", apps: 150,
                                               extra: ["--layout", "v5", "--only", "application"])
        var reports: [String] = []
        for threads in ["1", "2", "4"] {
            let result = try runEPF(["inspect", feed, "--json", "--threads", threads], in: work.path)
            #expect(result.status == 0, "\(result.stderr)")
            let parsed = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]]
            reports.append("\(parsed?.first?["recordsRead"] ?? "-") \(parsed?.first?["md5"] ?? "-")")
        }
        #expect(Set(reports).count == 1)
        #expect(!reports[0].hasPrefix("-"))
        for bad in ["0", "x", "-3"] {
            #expect(try runEPF(["inspect", feed, "--threads", bad], in: work.path).status == 64)
            #expect(try runEPF(["import", feed, "--threads", bad], in: work.path).status == 64)
        }
        let database = work.file("epf.sqlite")
        let imported = try runEPF(["import", feed, "--db", database, "--threads", "2", "--quiet"], in: work.path)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try ImportCLITests.scalar(database, "SELECT count(*) FROM application") == 150)
        #expect(try runEPF(["import", "--help"], in: work.path).stdout.contains("--threads N"))
        #expect(try runEPF(["sync", "--help"], in: work.path).stdout.contains("--threads N"))
        #expect(try runEPF(["inspect", "--help"], in: work.path).stdout.contains("--threads N"))
    }
}
