import EPFSQLite
import EPFTestSupport
import Foundation
import Testing

/// End to end: without rank history, an app's ranks today are read from the chart tables' rows by app
/// (`ChartAppLists`, made by each full load of a chart table), the same as the tables say; a table changed after
/// them, or a database from before them, is read from the table itself.
@Suite struct TodayRanksCLITests {
    static let charts = ["free": "free_application_popularity_per_genre",
                         "paid": "paid_application_popularity_per_genre",
                         "free-ipad": "free_ipad_application_popularity_per_genre",
                         "paid-ipad": "paid_ipad_application_popularity_per_genre"]

    /// Every app's places in the four tables: "chart storefront genre rank".
    static func truth(_ database: String) throws -> [Int64: Set<String>] {
        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        var places: [Int64: Set<String>] = [:]
        for (word, table) in charts {
            for row in try connection.query("SELECT application_id, storefront_id, genre_id, application_rank FROM "
                                            + table) {
                guard case .integer(let id) = row[0], case .integer(let storefront) = row[1],
                      case .integer(let genre) = row[2], case .integer(let rank) = row[3] else { continue }
                places[id, default: []].insert("\(word) \(storefront) \(genre) \(rank)")
            }
        }
        return places
    }

    static func places(_ answer: Any?) -> Set<String> {
        let charts = (answer as? [String: Any])?["charts"] as? [[String: Any]] ?? []
        return Set(charts.map { chart in
            "\(chart["chart"] ?? "") \(chart["storefrontId"] ?? "") \(chart["genreId"] ?? "") \(chart["rank"] ?? "")"
        })
    }

    static func ranks(_ id: Int64, _ database: String, in work: WorkDirectory, _ extra: [String] = []) throws
        -> Set<String> {
        let run = try runEPF(["ranks", String(id), "--json", "--db", database] + extra, in: work.path)
        #expect(run.status == 0 || run.status == 1, "\(run.stderr)")
        return places(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)))
    }

    @Test func anAppsRanksTodayAreTheTablesRowsReadByApp() throws {
        let work = try WorkDirectory(prefix: "epf-today-ranks")
        let only = ["--only", RankDaysFixture.charts, "--layout", "v5"]
        let feed = try ImportCLITests.generate(work, name: "full", apps: 300, extra: only)
        let database = work.file("epf.sqlite")
        let imported = try runEPF(["import", feed + "/popularity20260105", "--db", database, "--quiet"],
                                  in: work.path)
        #expect(imported.status == 0, "\(imported.stderr)")
        for table in Self.charts.values {
            #expect(try ImportCLITests.scalar(database, "SELECT entries FROM epf_chart_app_stamps "
                                              + "WHERE table_name = '\(table)'")
                    == ImportCLITests.scalar(database, "SELECT count(*) FROM \(table)"), "\(table)")
        }
        var truth = try Self.truth(database)
        let byCharts = truth.sorted { ($0.value.count, $0.key) > ($1.value.count, $1.key) }
        let sample = [byCharts[0].key, byCharts[byCharts.count / 2].key, byCharts[byCharts.count - 1].key]
        for id in sample { #expect(try Self.ranks(id, database, in: work) == truth[id], "\(id)") }
        #expect(try Self.ranks(1, database, in: work).isEmpty)
        let top = sample[0]
        let narrowed = try Self.ranks(top, database, in: work, ["--country", "us", "--genre", "36"])
        #expect(narrowed == (truth[top] ?? []).filter { $0.contains(" 143441 36 ") } && !narrowed.isEmpty)
        let served = try ServedEPF(database: database, in: work.path)
        defer { served.stop() }
        let http = try served.get("/v1/apps/\(top)/ranks")
        #expect(http.status == 200 && Self.places(http.json) == truth[top])

        // A row changed without a load: the lists still answer (they are what is read). A later applied load of the
        // table (an incremental, an epf that makes no lists) makes the table the answer.
        let (word, storefront, genre) = try #require(truth[top]?.sorted().first.map { place in
            let parts = place.split(separator: " ")
            return (String(parts[0]), String(parts[1]), String(parts[2]))
        })
        let table = try #require(Self.charts[word])
        let writer = try SQLiteConnection(path: database, mode: .readWrite)
        try writer.execute("UPDATE \(table) SET application_rank = 999 WHERE application_id = \(top) "
                           + "AND storefront_id = \(storefront) AND genre_id = \(genre)")
        #expect(try Self.ranks(top, database, in: work) == truth[top])
        try writer.execute("INSERT INTO epf_ledger (source, location, table_name, outcome) "
                           + "VALUES ('elsewhere', 'elsewhere', '\(table)', 'applied')")
        #expect(try Self.ranks(top, database, in: work).contains("\(word) \(storefront) \(genre) 999"))

        // A database from before the lists reads the tables, and the next full load of a table makes them again.
        try writer.execute("DROP TABLE epf_chart_app_lists; DROP TABLE epf_chart_app_stamps")
        truth = try Self.truth(database)
        #expect(try Self.ranks(top, database, in: work) == truth[top])
        let day = try runEPF(["generate", work.file("day1"), "--apps", "300", "--seed", "3",
                              "--price-storefronts", "10", "--incremental", "--day", "1"] + only, in: work.path)
        #expect(day.status == 0, "\(day.stderr)")
        let next = try runEPF(["import", work.file("day1/popularity20260106"), "--db", database, "--quiet"],
                              in: work.path)
        #expect(next.status == 0, "\(next.stderr)")
        #expect(try ImportCLITests.scalar(database, "SELECT count(*) FROM epf_chart_app_stamps") == 4)
        truth = try Self.truth(database)
        for id in sample { #expect(try Self.ranks(id, database, in: work) == (truth[id] ?? []), "\(id)") }
    }

    /// A chart file without a column the lists need (here export_date) still imports: the table has no lists.
    @Test func aChartWithoutAColumnTheListsNeedImportsWithoutThem() throws {
        let work = try WorkDirectory(prefix: "epf-today-ranks")
        let folder = work.file("popularity20260105")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let lines = ["#storefront_id\u{1}genre_id\u{1}application_id\u{1}application_rank",
                     "#primaryKey:storefront_id\u{1}genre_id\u{1}application_id",
                     "#dbTypes:INTEGER\u{1}INTEGER\u{1}BIGINT\u{1}INTEGER", "#exportMode:FULL",
                     "143441\u{1}36\u{1}284882215\u{1}1", "143441\u{1}36\u{1}5\u{1}2", "#recordsWritten:2"]
        try Data(lines.map { $0 + "\u{2}\n" }.joined().utf8)
            .write(to: URL(fileURLWithPath: folder + "/application_popularity_per_genre"))
        let database = work.file("epf.sqlite")
        let imported = try runEPF(["import", folder, "--db", database, "--quiet"], in: work.path)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try ImportCLITests.scalar(database, "SELECT count(*) FROM application_popularity_per_genre") == 2)
        #expect(try ImportCLITests.scalar(database, "SELECT count(*) FROM epf_chart_app_stamps") == 0)
    }
}
