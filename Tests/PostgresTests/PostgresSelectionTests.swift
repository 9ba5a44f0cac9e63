import EPFPostgres
import EPFTestSupport
import Foundation
import Testing

/// `--storefronts` and `--languages` on PostgreSQL, through the CLI: the same rows kept as on SQLite, the selection
/// remembered in the schema's `epf_settings`, another one refused, and `epf status --json` reporting it.
@Suite struct PostgresSelectionTests {
    @Test func theSelectionKeepsTheSameRowsAsOnSQLiteAndIsRemembered() throws {
        let url = try TestCluster.get().database()
        let scratch = try TemporaryDirectory()
        var options = feedOptions(apps: 150)
        options.priceStorefronts = 8
        let paths = try generate(options, in: scratch.path, name: "feed")
        let selection = ["--storefronts", "us,jpn,143444", "--languages", "EN"]
        let pg = try BuiltEPF.run(["import"] + paths + selection + ["--db", url, "--schema", "chosen", "--quiet",
                                                                    "--rejects-dir", scratch.file("pg.rejects")],
                                  in: scratch.path)
        #expect(pg.status == 0, "\(pg.stderr)")
        let sqlite = scratch.file("epf.sqlite")
        let local = try BuiltEPF.run(["import"] + paths + selection + ["--db", sqlite, "--quiet"], in: scratch.path)
        #expect(local.status == 0, "\(local.stderr)")

        #expect(try dump(url, "SELECT DISTINCT storefront_id FROM chosen.application_price")
                    == ["143441", "143444", "143462"])
        #expect(try dump(url, "SELECT DISTINCT language_code FROM chosen.application_detail") == ["EN"])
        for table in ["application_price", "application_popularity_per_genre", "application_detail"] {
            let count = try dump(url, "SELECT count(*) FROM chosen.\(table)")
            let counted = try BuiltEPF.run(["sql", "SELECT count(*) FROM \(table)", "--db", sqlite, "--csv"],
                                           in: scratch.path)
            #expect(counted.stdout.components(separatedBy: "\r\n").filter { !$0.isEmpty }.last == count.first,
                    "\(table): PostgreSQL \(count), SQLite \(counted.stdout)")
        }

        let status = try BuiltEPF.run(["status", "--db", url, "--schema", "chosen", "--json"], in: scratch.path)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        let kept = (json["selection"] as? [String: Any])?["storefronts"] as? [[String: Any]] ?? []
        #expect(kept.compactMap { $0["country"] as? String } == ["us", "gb", "jp"])

        let other = try BuiltEPF.run(["import"] + paths + ["--db", url, "--schema", "chosen", "--quiet",
                                                           "--languages", "all"], in: scratch.path)
        #expect(other.status == 64)
        #expect(other.stderr.contains("--languages all (it keeps en)"), "\(other.stderr)")
        let again = try BuiltEPF.run(["import"] + paths + ["--db", url, "--schema", "chosen", "--quiet", "--force",
                                                           "--rejects-dir", scratch.file("pg.rejects")],
                                     in: scratch.path)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try dump(url, "SELECT DISTINCT storefront_id FROM chosen.application_price")
                    == ["143441", "143444", "143462"])
    }

    /// A dry run against a schema that keeps a selection leaves out what the import would and is refused as the
    /// import would be, writing nothing; against a server that does not answer it still runs, from its options.
    @Test func aDryRunAppliesTheSelectionTheSchemaKeeps() throws {
        let url = try TestCluster.get().database()
        let scratch = try TemporaryDirectory()
        var options = feedOptions(apps: 120)
        options.priceStorefronts = 6
        options.tables = ["application_price"]
        let paths = try generate(options, in: scratch.path, name: "feed")
        func leftOut(_ stdout: String) -> Int? {
            let report = (try? JSONSerialization.jsonObject(with: Data(stdout.utf8))) as? [String: Any]
            let outcomes = report?["outcomes"] as? [[String: Any]] ?? []
            return outcomes.first { $0["table"] as? String == "application_price" }?["leftOut"] as? Int
        }
        let first = try BuiltEPF.run(["import"] + paths + ["--db", url, "--schema", "dry", "--storefronts", "us",
                                                           "--json"], in: scratch.path)
        #expect(first.status == 0, "\(first.stderr)")
        let wanted = try #require(leftOut(first.stdout))
        #expect(wanted > 0)
        let settings = try dump(url, "SELECT name, value FROM dry.epf_settings ORDER BY name")

        let dry = try BuiltEPF.run(["import"] + paths + ["--db", url, "--schema", "dry", "--dry-run", "--force",
                                                         "--json"], in: scratch.path)
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(leftOut(dry.stdout) == wanted)
        let other = try BuiltEPF.run(["import"] + paths + ["--db", url, "--schema", "dry", "--dry-run",
                                                           "--storefronts", "gb", "--quiet"], in: scratch.path)
        #expect(other.status == 64, "\(other.stderr)")
        #expect(try dump(url, "SELECT name, value FROM dry.epf_settings ORDER BY name") == settings)

        let unreachable = try BuiltEPF.run(["import"] + paths + ["--db", "postgresql://127.0.0.1:1/none",
                                                                 "--dry-run", "--json"], in: scratch.path)
        #expect(unreachable.status == 0, "\(unreachable.stderr)")
        #expect(leftOut(unreachable.stdout) == 0)
    }
}
