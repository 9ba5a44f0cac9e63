import EPFTestSupport
import Foundation
import Testing

/// End to end: `epf charts` over v5's four charts and v3's one, and the day's charts in an incremental.
@Suite struct ChartsCLITests {
    @Test func aV5ChartInItsRankOrderAndAnAppsRanksToday() throws {
        let work = try WorkDirectory(prefix: "epf-charts-cli")
        let feed = try ImportCLITests.generate(work, name: "v5", apps: 300, extra: [
            "--layout", "v5", "--only", "application,genre,storefront,application_price,free_application_popularity_"
                + "per_genre,paid_application_popularity_per_genre,free_ipad_application_popularity_per_genre,"
                + "paid_ipad_application_popularity_per_genre",
        ])
        let database = work.file("epf.sqlite")
        let imported = try runEPF(["import", feed, "--db", database, "--quiet"], in: work.path)
        #expect(imported.status == 0, "\(imported.stderr)")

        let json = try runEPF(["charts", "--country", "us", "--chart", "paid-ipad", "--limit", "5", "--json",
                               "--db", database], in: work.path)
        #expect(json.status == 0, "\(json.stderr)")
        let answer = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let ids = (answer?["results"] as? [[String: Any]] ?? []).compactMap { $0["trackId"] as? Int64 }
        var expected: [Int64] = []
        for rank in 1...5 {
            expected.append(try ImportCLITests.scalar(database, """
                SELECT application_id FROM paid_ipad_application_popularity_per_genre
                WHERE storefront_id = 143441 AND genre_id = 36 AND application_rank = \(rank)
                """))
        }
        #expect(ids == expected, "\(json.stdout.prefix(600))")
        #expect(answer?["source"] as? String == "paid_ipad_application_popularity_per_genre")

        let text = try runEPF(["charts", "--country", "us", "--limit", "3", "--db", database], in: work.path)
        #expect(text.status == 0, "\(text.stderr)")
        let lines = text.stdout.split(separator: "\n")
        #expect(lines.first?.hasPrefix("us  free  36 App Store: top 3 of ") == true, "\(text.stdout)")
        #expect(lines.count == 5 && lines[1].hasPrefix("RANK"), "\(text.stdout)")

        // The top app's ranks without rank history: today's, from the chart tables, the same places.
        let top = try #require(ids.first)
        let ranks = try runEPF(["ranks", String(top), "--country", "us", "--chart", "paid-ipad", "--json",
                                "--db", database], in: work.path)
        #expect(ranks.status == 0, "\(ranks.stderr)")
        let ranked = try JSONSerialization.jsonObject(with: Data(ranks.stdout.utf8)) as? [String: Any]
        let places = ranked?["charts"] as? [[String: Any]] ?? []
        #expect(ranked?["history"] as? Bool == false)
        #expect(places.contains { $0["genreId"] as? Int == 36 && $0["rank"] as? Int == 1 }, "\(ranks.stdout)")
        #expect(places.allSatisfy { $0["country"] as? String == "us" && $0["chart"] as? String == "paid-ipad" })
        let rankText = try runEPF(["ranks", String(top), "--country", "us", "--genre", "36", "--db", database],
                                  in: work.path)
        #expect(rankText.stdout.contains("the charts of 2026-01-05"), "\(rankText.stdout)")
        #expect(rankText.stdout.split(separator: "\n").contains { $0.hasPrefix("us  paid-ipad  36 App Store") },
                "\(rankText.stdout)")
        let unknown = try runEPF(["ranks", "1", "--db", database], in: work.path)
        #expect(unknown.status == 1 && unknown.stderr.contains("not found"), "\(unknown.stderr)")
        let badChart = try runEPF(["ranks", String(top), "--chart", "fre", "--db", database], in: work.path)
        #expect(badChart.status == 64 && badChart.stderr.contains("did you mean 'free'"), "\(badChart.stderr)")

        // Without rank history there is no past day's chart.
        let past = try runEPF(["charts", "--country", "us", "--date", "2026-01-05", "--db", database], in: work.path)
        #expect(past.status == 1 && past.stderr.contains("--history ranks"), "\(past.stderr)")
        for (arguments, words) in [(["--chart", "top"], "--chart"),
                                   (["--country", "zz"], "zz"), ([String](), "--country is required")] {
            let country = arguments.contains("--country") ? [] : ["--country", "us"]
            let refused = try runEPF(["charts"] + (words == "--country is required" ? [] : country) + arguments
                                     + ["--db", database], in: work.path)
            #expect(refused.status == 64, "\(arguments): \(refused.stderr)")
            #expect(refused.stderr.contains(words), "\(arguments): \(refused.stderr)")
        }
    }

    /// A day that brings only its charts (v3's popularity feed alone) is that day's incremental, not a full: sync
    /// applies it after the full, and the chart is that day's.
    @Test func aDayOfChartsAloneIsAnIncrementalOfTheMirror() throws {
        let work = try WorkDirectory(prefix: "epf-charts-cli")
        let mirror = try ImportCLITests.generate(work, name: "mirror", apps: 150)
        let day = try runEPF(["generate", work.file("mirror/incremental/20260107"), "--apps", "150", "--seed", "3",
                              "--price-storefronts", "10", "--incremental", "--day", "2",
                              "--only", "application_popularity_per_genre"], in: work.path)
        #expect(day.status == 0, "\(day.stderr)")
        let plan = try runEPF(["sync", mirror, "--plan"], in: work.path)
        #expect(plan.stdout.contains("full 20260105: "), "\(plan.stdout)")
        #expect(plan.stdout.contains("incremental 20260107: "), "\(plan.stdout)")
        let database = work.file("epf.sqlite")
        let synced = try runEPF(["sync", mirror, "--db", database, "--quiet"], in: work.path)
        #expect(synced.status == 0, "\(synced.stderr)")
        let chart = try runEPF(["charts", "--country", "us", "--chart", "paid", "--json", "--db", database],
                               in: work.path)
        #expect(chart.status == 0, "\(chart.stderr)")
        let answer = try JSONSerialization.jsonObject(with: Data(chart.stdout.utf8)) as? [String: Any]
        #expect(answer?["exportDate"] as? String == "2026-01-07T00:00:00Z", "\(chart.stdout.prefix(400))")
        #expect(answer?["splitByPrice"] as? Bool == true)
        let iPad = try runEPF(["charts", "--country", "us", "--chart", "free-ipad", "--db", database], in: work.path)
        #expect(iPad.status == 1 && iPad.stderr.contains("iPad"), "\(iPad.stderr)")
    }
}
