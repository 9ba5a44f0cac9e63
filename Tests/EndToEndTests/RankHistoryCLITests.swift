import EPFSchema
import EPFSQLite
import Foundation
import Testing

/// End to end on generated v5 feeds with dirt: `--history ranks` records each day's charts exactly as the chart
/// tables hold them after each import (read here from the tables themselves), remembers it, keeps only the
/// storefronts `--storefronts` keeps, and `epf status` says so.
@Suite struct RankHistoryCLITests {
    static let charts = ["free_application_popularity_per_genre", "paid_ipad_application_popularity_per_genre"]

    /// A chart table as it stands: chart key -> entries ordered by rank, then id (rows without one left out).
    static func table(_ connection: SQLiteConnection, _ chart: RankChart) throws -> [RankChartKey: [RankedEntry]] {
        var charts: [RankChartKey: [RankedEntry]] = [:]
        for row in try connection.query("""
            SELECT storefront_id, genre_id, \(chart.rankColumn), \(chart.idColumn) FROM \(chart.table)
            WHERE storefront_id IS NOT NULL AND genre_id IS NOT NULL AND \(chart.rankColumn) IS NOT NULL
                AND \(chart.idColumn) IS NOT NULL
            ORDER BY 1, 2, 3, 4
            """) {
            guard case .integer(let storefront) = row[0], case .integer(let genre) = row[1],
                  case .integer(let rank) = row[2], case .integer(let id) = row[3] else { continue }
            charts[RankChartKey(chart: chart, storefrontID: storefront, genreID: genre), default: []]
                .append(RankedEntry(rank: Int(rank), id: id))
        }
        return charts
    }

    /// The `popularity<date>` folder `epf generate` wrote into `out`.
    static func popularityFeed(in out: String) throws -> String {
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: out)
            .first { $0.hasPrefix("popularity") })
        return "\(out)/\(name)"
    }

    @Test func eachDaysChartsAreRecordedAsTheTablesHoldThem() throws {
        let work = try WorkDirectory()
        let database = work.file("epf.sqlite")
        var feeds: [String] = []
        for day in 0...2 {
            let out = work.file("day\(day)")
            var arguments = ["generate", out, "--layout", "v5", "--apps", "600", "--dirt",
                             "--only", Self.charts.joined(separator: ",")]
            if day > 0 { arguments += ["--incremental", "--day", "\(day)"] }
            #expect(try runEPF(arguments, in: work.path).status == 0)
            feeds.append(try Self.popularityFeed(in: out))
        }
        var expected: [Int64: [RankChartKey: [RankedEntry]]] = [:]
        for (index, feed) in feeds.enumerated() {
            // The first import asks; the next ones remember.
            let history = index == 0 ? ["--history", "ranks"] : []
            let run = try runEPF(["import", feed, "--db", database, "--quiet"] + history, in: work.path)
            #expect(run.status == 0, "\(run.stderr)")
            let connection = try SQLiteConnection(path: database, mode: .readOnly)
            for name in Self.charts {
                let chart = try #require(RankChart(table: name))
                guard case .integer(let day)? = try connection.scalar("SELECT max(export_date) FROM \(name)") else {
                    Issue.record("\(name) holds no export date")
                    continue
                }
                expected[day, default: [:]].merge(try Self.table(connection, chart)) { $1 }
            }
        }
        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        let history = try #require(try RankHistoryRead(connection))
        #expect(try history.recordedDays() == expected.keys.sorted())
        #expect(try history.recordedDays(chart: .paidIPad) == expected.keys.sorted())
        #expect(try history.recordedDays(chart: .paid).isEmpty)
        var ranks: [Int64: [RankHistoryPoint]] = [:]
        for (day, charts) in expected {
            for (key, entries) in charts {
                #expect(try history.chart(key, on: day) == entries)
                for entry in entries {
                    ranks[entry.id, default: []].append(RankHistoryPoint(day: day, key: key, rank: entry.rank))
                }
            }
            #expect(try history.depths(chart: .free, on: day) == charts.filter { $0.key.chart == .free }
                .mapValues(\.count))
        }
        for id in ranks.keys.sorted().prefix(40) {
            let expected = ranks[id, default: []].sorted { ($0.day, $0.key) < ($1.day, $1.key) }
            #expect(try history.history(of: id) == expected)
        }
        let status = try runEPF(["status", "--db", database], in: work.path)
        #expect(status.stdout.contains("rank history: recorded, 3 days, newest "
                                       + EPFValuesShim.isoDate(expected.keys.max() ?? 0)))
    }

    /// A v3 `popularity<date>/application_popularity_per_genre` of `rows` (`storefront genre app rank`).
    static func writeV3(_ work: WorkDirectory, date: String, rows: [String]) throws -> String {
        let day = "\(date.prefix(4))-\(date.dropFirst(4).prefix(2))-\(date.suffix(2))"
        let milliseconds = Int64(try #require(ISO8601DateFormatter().date(from: "\(day)T00:00:00Z"))
            .timeIntervalSince1970) * 1000
        var text = "#export_date\u{01}storefront_id\u{01}genre_id\u{01}application_id\u{01}application_rank\u{02}\n"
        text += "#primaryKey:storefront_id\u{01}genre_id\u{01}application_id\u{02}\n"
        text += "#dbTypes:BIGINT\u{01}INTEGER\u{01}INTEGER\u{01}INTEGER\u{01}INTEGER\u{02}\n"
        text += "#exportMode:FULL\u{02}\n"
        for row in rows {
            text += "\(milliseconds)\u{01}" + row.split(separator: " ").joined(separator: "\u{01}") + "\u{02}\n"
        }
        text += "#recordsWritten:\(rows.count)\u{02}\n"
        try work.write("popularity\(date)/application_popularity_per_genre", Array(text.utf8))
        return work.file("popularity\(date)")
    }

    @Test(arguments: ["null", "reject"])
    func dirtIsRecordedAsTheTableHoldsItAfterTheLoad(badValues: String) throws {
        let work = try WorkDirectory()
        let database = work.file("epf.sqlite")
        // A key twice (the later row wins), ranks twice and a gap, a junk rank (NULL, or the row rejected).
        let first = try Self.writeV3(work, date: "20260105", rows: [
            "143441 36 11 1", "143441 36 12 2", "143441 36 11 3", "143441 36 13 3", "143441 36 14 7",
            "143441 36 15 [4]", "143441 6014 11 1", "143444 36 16 1",
        ])
        let second = try Self.writeV3(work, date: "20260106", rows: ["143441 36 12 1", "143441 36 17 2"])
        for feed in [first, second] {
            let run = try runEPF(["import", feed, "--db", database, "--quiet", "--history", "ranks",
                                  "--bad-values", badValues], in: work.path)
            #expect(run.status == 0 || run.status == 65, "\(run.stderr)")
            let connection = try SQLiteConnection(path: database, mode: .readOnly)
            let history = try #require(try RankHistoryRead(connection))
            let day = try #require(try history.recordedDays(chart: .apps).last)
            let table = try Self.table(connection, .apps)
            #expect(try history.depths(chart: .apps, on: day) == table.mapValues(\.count))
            for (key, entries) in table { #expect(try history.chart(key, on: day) == entries) }
        }
        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        let history = try #require(try RankHistoryRead(connection))
        let key = RankChartKey(chart: .apps, storefrontID: 143441, genreID: 36)
        let days = try history.recordedDays()
        #expect(days.count == 2)
        #expect(try history.chart(key, on: days[0])?.map(\.rank) == [2, 3, 3, 7])
        #expect(try history.chart(RankChartKey(chart: .apps, storefrontID: 143444, genreID: 36), on: days[1]) == [])
        #expect(try history.history(of: 11).map(\.rank) == [3, 1])
    }

    @Test func anOlderDayIsRecordedInItsPlaceAndTheTableKeepsItsNewerDay() throws {
        let work = try WorkDirectory()
        var feeds: [String] = []
        for day in 0...2 {
            let out = work.file("day\(day)")
            var arguments = ["generate", out, "--layout", "v5", "--apps", "300", "--only", Self.charts[0]]
            if day > 0 { arguments += ["--incremental", "--day", "\(day)"] }
            #expect(try runEPF(arguments, in: work.path).status == 0)
            feeds.append(try Self.popularityFeed(in: out))
        }
        // Day 1 on its own: what its chart table holds.
        let alone = work.file("alone.sqlite")
        #expect(try runEPF(["import", feeds[1], "--db", alone, "--quiet"], in: work.path).status == 0)
        let chart = try #require(RankChart(table: Self.charts[0]))
        let dayOne = try Self.table(try SQLiteConnection(path: alone, mode: .readOnly), chart)
        // Rank changes need rank history: said so, not an empty list.
        let changes = try runEPF(["changes", "--kind", "rank", "--country", "us", "--since", "2026-01-01", "--db",
                                  alone], in: work.path)
        #expect(changes.status == 1 && changes.stderr.contains("rank changes need rank history"), "\(changes.stderr)")
        let database = work.file("epf.sqlite")
        for feed in [feeds[0], feeds[2]] {
            #expect(try runEPF(["import", feed, "--db", database, "--quiet", "--history", "ranks"],
                               in: work.path).status == 0)
        }
        let before = try Self.table(try SQLiteConnection(path: database, mode: .readOnly), chart)
        // Day 1 after day 2: skipped as superseded for the table, recorded in its place in the history; imported
        // again, skipped without loading; with --force, recorded again, and the table still keeps day 2.
        for (attempt, extra) in [[], [], ["--force"]].enumerated() {
            let run = try runEPF(["import", feeds[1], "--db", database] + extra, in: work.path)
            #expect(run.status == 0, "\(run.stderr)")
            switch attempt {
            case 0: #expect(run.stderr.contains("its ranks recorded in their place"), "\(run.stderr)")
            case 1: #expect(run.stderr.contains("not applied, superseded") && !run.stderr.contains("recorded"),
                            "\(run.stderr)")
            default: #expect(run.stderr.contains("its ranks recorded again in their place (--force)"), "\(run.stderr)")
            }
        }
        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        #expect(try Self.table(connection, chart) == before)
        let history = try #require(try RankHistoryRead(connection))
        let days = try history.recordedDays()
        #expect(days.count == 3)
        guard days.count == 3 else { return }
        #expect(try history.depths(chart: chart, on: days[1]) == dayOne.mapValues(\.count))
        for (key, entries) in dayOne { #expect(try history.chart(key, on: days[1]) == entries) }
        for (key, entries) in before { #expect(try history.chart(key, on: days[2]) == entries) }
    }

    /// `epf status --json` parsed.
    static func status(_ database: String, in directory: String) throws -> [String: Any] {
        let run = try runEPF(["status", "--db", database, "--json"], in: directory)
        return try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
    }

    @Test func onlyTheKeptStorefrontsAreRecordedAKindAddsAndNoneTurnsItOff() throws {
        let work = try WorkDirectory()
        let database = work.file("epf.sqlite")
        let out = work.file("feed")
        #expect(try runEPF(["generate", out, "--layout", "v5", "--apps", "300", "--only", Self.charts[0]],
                           in: work.path).status == 0)
        let feed = try Self.popularityFeed(in: out)
        // `--history ranks`, then `--history prices`: the second adds prices and keeps recording ranks.
        let run = try runEPF(["import", feed, "--db", database, "--quiet", "--history", "ranks",
                              "--storefronts", "us,gb"], in: work.path)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try runEPF(["import", feed, "--db", database, "--quiet", "--history", "prices"],
                           in: work.path).status == 0)
        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        let history = try #require(try RankHistoryRead(connection))
        let day = try #require(try history.recordedDays().first)
        #expect(Set(try history.depths(chart: .free, on: day).keys.map(\.storefrontID)) == [143441, 143444])
        // A storefront the selection left out is said to be, not shown as an empty chart.
        for command in [["charts", "--country", "jp"], ["ranks", "1", "--country", "jp"]] {
            let left = try runEPF(command + ["--db", database], in: work.path)
            #expect(left.status == 64 && left.stderr.contains("'jp' is not kept in this database")
                    && left.stderr.contains("--storefronts us,gb"), "\(command): \(left.stderr)")
        }
        // Chart names read in any case, as countries do.
        #expect(try runEPF(["charts", "--country", "GB", "--chart", "Free", "--db", database], in: work.path).status
                == 0)
        let json = try Self.status(database, in: work.path)
        #expect(json["priceHistory"] as? Bool == true && json["rankHistory"] as? Bool == true)
        #expect(json["rankDays"] as? Int == 1 && json["rankNewestDay"] as? String != nil)
        #expect(try runEPF(["import", feed, "--db", database, "--quiet", "--history", "none", "--force"],
                           in: work.path).status == 0)
        let off = try Self.status(database, in: work.path)
        #expect(off["priceHistory"] as? Bool == false && off["rankHistory"] as? Bool == false)
        #expect(off["rankDays"] as? Int == 1)
        let bad = try runEPF(["import", feed, "--db", database, "--history", "ranks,volumes"], in: work.path)
        #expect(bad.status == 64 && bad.stderr.contains("--history takes"))
    }

    /// A chart table's load killed after a checkpoint records nothing, and run again records the day as the table
    /// then holds it, the rows the killed run wrote included (the rerun writes only the rest).
    @Test func aKilledLoadRunAgainRecordsTheWholeTable() throws {
        let work = try WorkDirectory()
        let database = work.file("epf.sqlite")
        let out = work.file("feed")
        #expect(try runEPF(["generate", out, "--layout", "v5", "--apps", "2000", "--only", Self.charts[0]],
                           in: work.path).status == 0)
        let arguments = ["import", try Self.popularityFeed(in: out), "--db", database, "--history", "ranks",
                         "--checkpoint-records", "3000"]
        let (process, _, _) = try startEPF(arguments + ["--quiet"], in: work.path)
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline && process.isRunning {
            let done = try? SQLiteConnection(path: database, mode: .readOnly)
                .scalar("SELECT coalesce(max(records_done), 0) FROM epf_progress")
            if case .integer(let records)? = done, records >= 3000 { break }
            usleep(2_000)
        }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        let killed = process.terminationReason == .uncaughtSignal
        if killed {
            // Read-write: the first build's rollback journal is hot after the kill (rolled back on open, as the
            // rerun's open would).
            let connection = try SQLiteConnection(path: database, mode: .readWrite)
            #expect(try RankHistoryRead(connection)?.recordedDays().isEmpty ?? true, "a killed load records nothing")
        }
        let rerun = try runEPF(arguments, in: work.path)
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(!killed || rerun.stderr.contains("resuming"), "the rerun continues from the checkpoint")
        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        let chart = try #require(RankChart(table: Self.charts[0]))
        let table = try Self.table(connection, chart)
        #expect(table.values.reduce(0) { $0 + $1.count } > 3000)
        let history = try #require(try RankHistoryRead(connection))
        let day = try #require(try history.recordedDays().first)
        #expect(try history.depths(chart: chart, on: day) == table.mapValues(\.count))
        for (key, entries) in table { #expect(try history.chart(key, on: day) == entries) }
    }
}

/// The day as `epf status` writes it (`YYYY-MM-DD`, UTC).
enum EPFValuesShim {
    static func isoDate(_ milliseconds: Int64) -> String {
        let formatter = DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }
}
