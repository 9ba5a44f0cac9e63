import EPFSQLite
import EPFTestSupport
import Foundation
import Testing

/// v5's popularity: four app charts (free and paid, iPhone and iPad) and `key_value` instead of v3's one
/// `application_popularity_per_genre`, generated, imported by their real names and read by `epf genres`.
@Suite struct ChartTablesCLITests {
    @Test func aV5ExportHasFourChartsThatImportByTheirRealNames() throws {
        let work = try WorkDirectory(prefix: "epf-charts")
        let feed = try ImportCLITests.generate(work, name: "v5", apps: 400, extra: ["--layout", "v5"])
        let charts = ["free_application_popularity_per_genre", "paid_application_popularity_per_genre",
                      "free_ipad_application_popularity_per_genre", "paid_ipad_application_popularity_per_genre"]
        for chart in charts {
            #expect(FileManager.default.fileExists(atPath: "\(feed)/popularity20260105/\(chart).tbz"), "\(chart)")
        }
        #expect(!FileManager.default.fileExists(
            atPath: "\(feed)/popularity20260105/application_popularity_per_genre.tbz"))
        #expect(FileManager.default.fileExists(atPath: "\(feed)/itunes20260105/key_value.tbz"))

        let database = work.file("epf.sqlite")
        let imported = try runEPF(["import", feed, "--db", database, "--quiet"], in: work.path)
        #expect(imported.status == 0, "\(imported.stderr)")
        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        func count(_ sql: String) throws -> Int64 {
            guard case .integer(let value)? = try connection.scalar(sql) else { return -1 }
            return value
        }
        for chart in charts {
            #expect(try count("SELECT count(*) FROM \(chart)") > 0, "\(chart)")
            // The real header's key: one rank per app, genre and storefront; ranks 1, 2, ... without gaps.
            #expect(try count("""
                SELECT count(*) FROM (SELECT storefront_id, genre_id, count(*) AS n, max(application_rank) AS top
                FROM \(chart) GROUP BY 1, 2) WHERE n != top
                """) == 0)
        }
        // Free charts rank free apps only, paid charts paid ones (US prices); iPad charts apps that run on iPad.
        let usPrice = "(SELECT retail_price FROM application_price p WHERE p.application_id = c.application_id "
            + "AND p.storefront_id = 143441)"
        #expect(try count("SELECT count(*) FROM free_application_popularity_per_genre c "
                          + "WHERE c.storefront_id = 143441 AND CAST(\(usPrice) AS REAL) != 0") == 0)
        #expect(try count("SELECT count(*) FROM paid_application_popularity_per_genre c "
                          + "WHERE c.storefront_id = 143441 AND CAST(\(usPrice) AS REAL) = 0") == 0)
        #expect(try count("""
            SELECT count(*) FROM free_ipad_application_popularity_per_genre c WHERE NOT EXISTS (
                SELECT 1 FROM application_device_type d JOIN device_type t USING (device_type_id)
                WHERE d.application_id = c.application_id AND t.name LIKE 'iPad%')
            """) == 0)
        #expect(try count("SELECT count(*) FROM key_value WHERE key_ = 'export_mode' AND value_ = 'FULL'") == 1)

        // epf genres ranks by the export's chart: v5's free iPhone chart.
        let genres = try runEPF(["genres", "6014", "--country", "us", "--json", "--db", database], in: work.path)
        #expect(genres.status == 0, "\(genres.stderr)")
        let answer = try JSONSerialization.jsonObject(with: Data(genres.stdout.utf8)) as? [String: Any]
        let apps = answer?["apps"] as? [[String: Any]] ?? answer?["results"] as? [[String: Any]] ?? []
        let top = try count("SELECT application_id FROM free_application_popularity_per_genre WHERE storefront_id = "
                            + "143441 AND genre_id = 6014 AND application_rank = 1")
        let first = apps.first.flatMap { ($0["id"] as? Int64) ?? ($0["trackId"] as? Int64) }
        #expect(first == top, "\(genres.stdout.prefix(400))")
    }

    /// A database that followed the feed from v3 to v5 keeps v3's chart as it last was: status does not count it
    /// as behind (v5's four charts replaced it), so the data is as of the v5 full and not mixed.
    @Test func v3sChartReplacedByV5sIsNotBehind() throws {
        let work = try WorkDirectory(prefix: "epf-charts")
        let v3 = try ImportCLITests.generate(work, name: "v3", apps: 100)
        let v5 = try ImportCLITests.generate(work, name: "v5", apps: 100, extra: ["--layout", "v5", "--week", "1"])
        let database = work.file("epf.sqlite")
        for feed in [v3, v5] {
            let imported = try runEPF(["import", feed, "--db", database, "--quiet"], in: work.path)
            #expect(imported.status == 0, "\(imported.stderr)")
        }
        let status = try runEPF(["status", "--json", "--db", database], in: work.path)
        let claims = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        #expect(claims?["mixed"] as? Bool == false, "\(status.stdout.prefix(1500))")
        #expect(claims?["mixedExports"] is NSNull, "\(status.stdout.prefix(1500))")
        #expect((claims?["exportDate"] as? String)?.hasPrefix("2026-01-12") == true, "\(status.stdout.prefix(600))")
        let tables = claims?["tables"] as? [[String: Any]] ?? []
        let old = tables.first { $0["name"] as? String == "application_popularity_per_genre" }
        #expect((old?["exportDate"] as? String)?.hasPrefix("2026-01-05") == true, "\(String(describing: old))")
        // epf genres ranks by v5's chart now, not by the v3 chart left from before.
        let genres = try runEPF(["genres", "6014", "--country", "us", "--json", "--db", database], in: work.path)
        let answer = try JSONSerialization.jsonObject(with: Data(genres.stdout.utf8)) as? [String: Any]
        let apps = answer?["apps"] as? [[String: Any]] ?? []
        let top = try ImportCLITests.scalar(database, "SELECT application_id FROM free_application_popularity_per_genre "
                                            + "WHERE storefront_id = 143441 AND genre_id = 6014 AND application_rank = 1")
        #expect(apps.first?["trackId"] as? Int64 == top, "\(genres.stdout.prefix(400))")
    }

    @Test func aV3ExportKeepsItsOneChart() throws {
        let work = try WorkDirectory(prefix: "epf-charts")
        let feed = try ImportCLITests.generate(work, name: "v3", apps: 100)
        #expect(FileManager.default.fileExists(atPath: "\(feed)/popularity20260105/application_popularity_per_genre"))
        #expect(!FileManager.default.fileExists(
            atPath: "\(feed)/popularity20260105/free_application_popularity_per_genre"))
        #expect(!FileManager.default.fileExists(atPath: "\(feed)/itunes20260105/key_value"))
    }
}
