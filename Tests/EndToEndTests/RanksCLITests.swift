import EPFSQLite
import EPFTestSupport
import Foundation
import Testing

/// A v5 export's four charts over five days with one missing (2026-01-08), imported with `--history ranks`: each
/// day's chart as the table held it after that day's import is the truth the readers are checked against.
final class RankDaysFixture: @unchecked Sendable {
    static let shared: Result<RankDaysFixture, any Error> = Result { try RankDaysFixture() }

    static let charts = "free_application_popularity_per_genre,paid_application_popularity_per_genre,"
        + "free_ipad_application_popularity_per_genre,paid_ipad_application_popularity_per_genre"
    /// The days imported (the full of 2026-01-05, then incremental days 1, 2 and 4): 2026-01-08 is missing.
    static let days = ["2026-01-05", "2026-01-06", "2026-01-07", "2026-01-09"]

    let work: WorkDirectory
    let database: String
    /// The us free overall chart (genre 36) of each day: the app ids, best first.
    var snapshots: [String: [Int64]] = [:]

    private init() throws {
        work = try WorkDirectory(prefix: "epf-rank-history")
        database = work.file("epf.sqlite")
        let common = ["--apps", "300", "--seed", "3", "--price-storefronts", "10", "--layout", "v5"]
        let full = try runEPF(["generate", work.file("full")] + common
                              + ["--only", "application,genre,storefront,application_price," + Self.charts],
                              in: work.path)
        guard full.status == 0 else { throw RankDaysFixtureError(description: "generate: \(full.stderr)") }
        try importAndSnapshot(["import", work.file("full/itunes20260105"), work.file("full/pricing20260105"),
                               work.file("full/popularity20260105"), "--history", "ranks"], day: Self.days[0])
        for (day, date) in [(1, Self.days[1]), (2, Self.days[2]), (4, Self.days[3])] {
            let compact = date.replacingOccurrences(of: "-", with: "")
            let feed = try runEPF(["generate", work.file("day\(day)")] + common
                                  + ["--incremental", "--day", "\(day)", "--only", Self.charts], in: work.path)
            guard feed.status == 0 else { throw RankDaysFixtureError(description: "generate: \(feed.stderr)") }
            try importAndSnapshot(["import", work.file("day\(day)/popularity\(compact)")], day: date)
        }
    }

    private func importAndSnapshot(_ arguments: [String], day: String) throws {
        let imported = try runEPF(arguments + ["--db", database, "--quiet"], in: work.path)
        guard imported.status == 0 else { throw RankDaysFixtureError(description: "import: \(imported.stderr)") }
        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        snapshots[day] = try connection.query("""
            SELECT application_id FROM free_application_popularity_per_genre
            WHERE storefront_id = 143441 AND genre_id = 36 ORDER BY application_rank
            """).compactMap { row in
            if case .integer(let id) = row.first { return id }
            return nil
        }
    }

    /// The rank of `id` in the snapshot of `day`, nil when it is not in the chart.
    func rank(of id: Int64, on day: String) -> Int? {
        snapshots[day]?.firstIndex(of: id).map { $0 + 1 }
    }

    func run(_ arguments: [String]) throws -> RunResult {
        try runEPF(arguments + ["--db", database], in: work.path)
    }

    func json(_ arguments: [String]) throws -> [String: Any] {
        let result = try run(arguments + ["--json"])
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] ?? [:]
    }
}

/// A day as every `--json` writes it: the ISO 8601 instant of its midnight UTC.
func instant(_ day: String) -> String { day + "T00:00:00Z" }

struct RankDaysFixtureError: Error, CustomStringConvertible {
    let description: String
}

/// End to end: `epf charts --date`, `epf ranks` and `epf changes --kind rank` read the recorded days, and the HTTP
/// routes say the same.
@Suite struct RanksCLITests {
    @Test func aPastDaysChartWithEachEntrysMove() throws {
        let fixture = try RankDaysFixture.shared.get()
        // 2026-01-09 moves since 2026-01-07: the day before is missing, so the recorded day before is two back.
        for (day, before) in [("2026-01-06", "2026-01-05"), ("2026-01-09", "2026-01-07")] {
            let chart = try fixture.json(["charts", "--country", "us", "--date", day, "--limit", "200"])
            #expect(chart["exportDate"] as? String == instant(day))
            #expect(chart["movesSince"] as? String == instant(before))
            let results = chart["results"] as? [[String: Any]] ?? []
            #expect(results.compactMap { $0["trackId"] as? Int64 } == fixture.snapshots[day], "\(day)")
            for result in results {
                let id = result["trackId"] as? Int64 ?? 0
                let rank = result["rank"] as? Int ?? 0
                let previous = fixture.rank(of: id, on: before)
                #expect(result["previousRank"] as? Int == previous, "\(day) \(id)")
                let expected = previous.map { $0 > rank ? "up" : $0 < rank ? "down" : "same" } ?? "new"
                #expect(result["move"] as? String == expected, "\(day) \(id)")
                if let previous, previous != rank { #expect(result["places"] as? Int == abs(previous - rank)) }
            }
        }
        // The first day recorded has no day before; today's chart moves since the day before.
        let first = try fixture.json(["charts", "--country", "us", "--date", "2026-01-05", "--limit", "3"])
        #expect(first["movesSince"] is NSNull && (first["results"] as? [[String: Any]])?.first?["move"] == nil)
        let today = try fixture.json(["charts", "--country", "us", "--limit", "3"])
        #expect(today["movesSince"] as? String == instant("2026-01-07"))
        #expect(today["exportDate"] as? String == instant("2026-01-09"))
        let text = try fixture.run(["charts", "--country", "us", "--date", "2026-01-06", "--limit", "3"])
        #expect(text.stdout.contains("as of 2026-01-06, moves since 2026-01-05"), "\(text.stdout)")
        #expect(text.stdout.split(separator: "\n").dropFirst().first?.hasPrefix("RANK  MOVE") == true, "\(text.stdout)")
        // A day without data says so and names the nearest recorded days; a bad date is a usage error.
        let missing = try fixture.run(["charts", "--country", "us", "--date", "2026-01-08"])
        #expect(missing.status == 1, "\(missing.stderr)")
        #expect(missing.stderr.contains("no data") && missing.stderr.contains("2026-01-07, 2026-01-09"),
                "\(missing.stderr)")
        let bad = try fixture.run(["charts", "--country", "us", "--date", "8 Jan"])
        #expect(bad.status == 64 && bad.stderr.contains("--date"), "\(bad.stderr)")
    }

    @Test func anAppsRanksOverTheRecordedDays() throws {
        let fixture = try RankDaysFixture.shared.get()
        // An app that moved: in the chart on the first day, at another rank on the last.
        let last = RankDaysFixture.days[3]
        let id = try #require(fixture.snapshots["2026-01-05"]?.first { id in
            fixture.rank(of: id, on: last).map { $0 != fixture.rank(of: id, on: "2026-01-05") } ?? false
        })
        let answer = try fixture.json(["ranks", String(id), "--country", "us", "--chart", "free", "--genre", "36"])
        #expect(answer["history"] as? Bool == true)
        let charts = answer["charts"] as? [[String: Any]] ?? []
        #expect(charts.count == 1, "\(charts)")
        let series = try #require(charts.first)
        let days = series["days"] as? [[String: Any]] ?? []
        #expect(days.compactMap { $0["date"] as? String } == RankDaysFixture.days.map(instant))
        let ranks = RankDaysFixture.days.map { fixture.rank(of: id, on: $0) }
        #expect(days.map { $0["rank"] as? Int } == ranks)
        let known = ranks.compactMap { $0 }
        #expect(series["best"] as? Int == known.min())
        #expect(series["rank"] as? Int == ranks.last ?? nil)
        #expect(series["daysInTop10"] as? Int == known.filter { $0 <= 10 }.count)
        #expect(series["daysInTop100"] as? Int == known.filter { $0 <= 100 }.count)
        #expect(series["firstSeen"] as? String == instant("2026-01-05"))
        // --since narrows the days; the text lists each recorded day (none for the missing 2026-01-08).
        let since = try fixture.json(["ranks", String(id), "--country", "us", "--chart", "free", "--genre", "36",
                                      "--since", "2026-01-07"])
        let narrowed = ((since["charts"] as? [[String: Any]])?.first?["days"] as? [[String: Any]]) ?? []
        #expect(narrowed.compactMap { $0["date"] as? String } == ["2026-01-07", "2026-01-09"].map(instant))
        let text = try fixture.run(["ranks", String(id), "--country", "us", "--chart", "free", "--genre", "36"])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("4 days recorded, 2026-01-05 to 2026-01-09"), "\(text.stdout)")
        #expect(!text.stdout.contains("2026-01-08"), "\(text.stdout)")
        // Every chart the app was in: more than one, all of them recorded days.
        let every = try fixture.json(["ranks", String(id)])
        #expect((every["charts"] as? [[String: Any]])?.count ?? 0 > 1)
    }

    /// A chart table imported from a file whose header lacks `export_date` (dirt seen in hand-made feeds): `epf
    /// ranks` says its ranks have no day, rather than failing on SQL.
    @Test func aChartTableWithoutExportDateIsSaidSo() throws {
        let work = try WorkDirectory()
        let field = "\u{1}"
        let end = "\u{2}\n"
        let file = "#storefront_id\(field)genre_id\(field)application_id\(field)application_rank\(end)"
            + "#primaryKey:storefront_id\(field)genre_id\(field)application_id\(end)"
            + "#dbTypes:INTEGER\(field)INTEGER\(field)BIGINT\(field)INTEGER\(end)#exportMode:FULL\(end)"
            + "143441\(field)36\(field)284882215\(field)1\(end)#recordsWritten:1\(end)"
        try work.write("application_popularity_per_genre", Array(file.utf8))
        let database = work.file("epf.sqlite")
        #expect(try runEPF(["import", work.file("application_popularity_per_genre"), "--db", database, "--quiet"],
                           in: work.path).status == 0)
        let run = try runEPF(["ranks", "284882215", "--db", database], in: work.path)
        #expect(run.status == 1 && run.stderr.contains("has no export_date column"), "\(run.stderr)")
    }

    @Test func aChartsChangesFromDayToDay() throws {
        let fixture = try RankDaysFixture.shared.get()
        let result = try fixture.run(["changes", "--since", "2026-01-06", "--kind", "rank", "--country", "us",
                                      "--top", "20", "--moved", "2", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let listed = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]] ?? []
        var expected: [String] = []
        for (day, before) in [("2026-01-06", "2026-01-05"), ("2026-01-07", "2026-01-06"),
                              ("2026-01-09", "2026-01-07")] {
            let now = Array((fixture.snapshots[day] ?? []).prefix(20))
            let then = Array((fixture.snapshots[before] ?? []).prefix(20))
            for id in now {
                let rank = fixture.rank(of: id, on: day) ?? 0
                if let old = fixture.rank(of: id, on: before), old <= 20 {
                    if abs(old - rank) >= 2 { expected.append("\(day) moved \(id) \(old) \(rank)") }
                } else {
                    expected.append("\(day) entered \(id) \(fixture.rank(of: id, on: before).map(String.init) ?? "-") "
                                    + "\(rank)")
                }
            }
            for id in then where !now.contains(id) {
                expected.append("\(day) left \(id) \(fixture.rank(of: id, on: before) ?? 0) "
                                + (fixture.rank(of: id, on: day).map(String.init) ?? "-"))
            }
        }
        let actual = listed.map { change in
            "\((change["exportDate"] as? String ?? "").prefix(10)) \(change["change"] as? String ?? "") "
                + "\(change["id"] as? Int64 ?? 0) \((change["oldRank"] as? Int).map(String.init) ?? "-") "
                + ((change["newRank"] as? Int).map(String.init) ?? "-")
        }
        #expect(actual == expected)
        #expect(!expected.isEmpty && expected.contains { $0.contains(" moved ") })
        let usage = try fixture.run(["changes", "--since", "2026-01-06", "--kind", "rank"])
        #expect(usage.status == 64 && usage.stderr.contains("--country"), "\(usage.stderr)")
        let misplaced = try fixture.run(["changes", "--since", "2026-01-06", "--top", "5"])
        #expect(misplaced.status == 64 && misplaced.stderr.contains("--top goes with --kind rank"),
                "\(misplaced.stderr)")
    }

    /// The HTTP routes answer what the CLI does: an app's days, a past chart, the changes paged.
    @Test func theSameOverHTTP() throws {
        let fixture = try RankDaysFixture.shared.get()
        let served = try ServedEPF(database: fixture.database, in: fixture.work.path)
        defer { served.stop() }
        let id = try #require(fixture.snapshots["2026-01-09"]?.first)
        let ranks = try served.get("/v1/apps/\(id)/ranks?country=us&chart=free&genre=36&history=1&since=2026-01-06")
        #expect(ranks.status == 200)
        let series = ((ranks.json as? [String: Any])?["charts"] as? [[String: Any]])?.first
        let days = series?["days"] as? [[String: Any]] ?? []
        #expect(days.compactMap { $0["date"] as? String } == RankDaysFixture.days.dropFirst().map(instant))
        let expected = RankDaysFixture.days.dropFirst().map { fixture.rank(of: id, on: $0) }
        #expect(days.map { $0["rank"] as? Int } == expected)
        // Without history=1, today's ranks: read from the history's spans, as the chart table has them.
        let today = try served.get("/v1/apps/\(id)/ranks?country=us&chart=free")
        let places = (today.json as? [String: Any])?["charts"] as? [[String: Any]] ?? []
        #expect(places.first { $0["genreId"] as? Int == 36 }?["rank"] as? Int == fixture.rank(of: id, on: "2026-01-09"))
        #expect(places.allSatisfy { $0["days"] == nil && $0["firstSeen"] as? String == instant("2026-01-09") })
        let chart = try served.get("/v1/charts/us/free?date=2026-01-07&limit=5")
        let results = (chart.json as? [String: Any])?["results"] as? [[String: Any]] ?? []
        let top = Array((fixture.snapshots["2026-01-07"] ?? []).prefix(5))
        #expect(results.compactMap { $0["trackId"] as? Int64 } == top)
        #expect((chart.json as? [String: Any])?["movesSince"] as? String == instant("2026-01-06"))
        #expect(try served.get("/v1/charts/us/free?date=2026-01-08").status == 404)
        // Paged two at a time, the changes are the CLI's.
        let cli = try fixture.run(["changes", "--since", "2026-01-06", "--kind", "rank", "--country", "us", "--top",
                                   "10", "--json"])
        let whole = try JSONSerialization.jsonObject(with: Data(cli.stdout.utf8)) as? [[String: Any]] ?? []
        var paged: [[String: Any]] = []
        var cursor: String?
        repeat {
            let page = try served.get("/v1/changes?kind=rank&country=us&top=10&since=2026-01-06&limit=2"
                                      + (cursor.map { "&cursor=\($0)" } ?? ""))
            #expect(page.status == 200)
            let object = page.json as? [String: Any] ?? [:]
            paged += object["changes"] as? [[String: Any]] ?? []
            cursor = object["nextCursor"] as? String
        } while cursor != nil && paged.count < 1000
        #expect(paged.map { "\($0["exportDate"] ?? "") \($0["id"] ?? "") \($0["change"] ?? "")" }
                == whole.map { "\($0["exportDate"] ?? "") \($0["id"] ?? "") \($0["change"] ?? "")" })
        #expect(!whole.isEmpty)
        #expect(try served.get("/v1/changes?kind=rank&since=2026-01-06").status == 400)
        #expect(try served.get("/v1/changes?kind=app&since=2026-01-06&top=3").status == 400)
    }
}
