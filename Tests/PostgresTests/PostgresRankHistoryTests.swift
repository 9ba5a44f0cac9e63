import EPFPostgres
import EPFSchema
import EPFSQLite
import EPFTestSupport
import Foundation
import Testing

/// `--history ranks` on PostgreSQL through the CLI: days in order, a day out of order (recorded in its place while
/// the table keeps its newer day) and days applied again (`--force`: they replace themselves) leave the view
/// `epf_rank_history` with exactly the ranks SQLite's history reads.
@Suite struct PostgresRankHistoryTests {
    static let charts = "free_application_popularity_per_genre,paid_ipad_application_popularity_per_genre"

    /// Every recorded rank of SQLite's history as `export_date|chart|storefront|genre|rank|id`.
    static func sqliteRanks(_ database: String) throws -> [String] {
        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        let history = try #require(try RankHistoryRead(connection))
        var lines: [String] = []
        for day in try history.recordedDays() {
            for chart in try history.recordedCharts(on: day) {
                for key in try history.depths(chart: chart, on: day).keys {
                    for entry in try history.chart(key, on: day) ?? [] {
                        lines.append("\(day)|\(chart.rawValue)|\(key.storefrontID)|\(key.genreID)|\(entry.rank)|"
                                     + "\(entry.id)")
                    }
                }
            }
        }
        return lines.sorted()
    }

    @Test func theViewHoldsTheRanksSQLiteRecords() throws {
        let url = try TestCluster.get().database()
        let scratch = try TemporaryDirectory()
        var feeds: [String] = []
        for day in 0...2 {
            let out = scratch.file("day\(day)")
            var arguments = ["generate", out, "--layout", "v5", "--apps", "400", "--only", Self.charts]
            if day > 0 { arguments += ["--incremental", "--day", "\(day)"] }
            #expect(try BuiltEPF.run(arguments, in: scratch.path).status == 0)
            let name = try #require(try FileManager.default.contentsOfDirectory(atPath: out)
                .first { $0.hasPrefix("popularity") })
            feeds.append("\(out)/\(name)")
        }
        let sqlite = scratch.file("epf.sqlite")
        func importing(_ feed: String, _ extra: [String]) throws {
            let pg = try BuiltEPF.run(["import", feed, "--db", url, "--schema", "ranks", "--quiet"] + extra,
                                      in: scratch.path)
            #expect(pg.status == 0, "\(pg.stderr)")
            let local = try BuiltEPF.run(["import", feed, "--db", sqlite, "--quiet"] + extra, in: scratch.path)
            #expect(local.status == 0, "\(local.stderr)")
        }
        try importing(feeds[0], ["--history", "ranks"])
        try importing(feeds[2], [])
        // Older than the table's day: recorded in its place, the table kept; then forced over it and back.
        try importing(feeds[1], [])
        #expect(try dump(url, "SELECT count(DISTINCT export_date) FROM ranks.epf_rank_days") == ["3"])
        try importing(feeds[1], ["--force"])
        try importing(feeds[2], ["--force"])
        let postgres = try dump(url, "SELECT export_date, chart, storefront_id, genre_id, rank, id "
                                + "FROM ranks.epf_rank_history")
        let local = try Self.sqliteRanks(sqlite)
        #expect(postgres.count > 1000)
        #expect(postgres == local)
        #expect(try dump(url, "SELECT count(DISTINCT export_date) FROM ranks.epf_rank_days") == ["3"])
        let status = try BuiltEPF.run(["status", "--db", url, "--schema", "ranks", "--json"], in: scratch.path)
        #expect(status.stdout.contains("\"rankHistory\": true") || status.stdout.contains("\"rankHistory\":true"))
    }
}
