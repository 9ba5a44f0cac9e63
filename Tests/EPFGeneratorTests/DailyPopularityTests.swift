import EPFFormat
@testable import EPFGenerator
import EPFTestSupport
import Testing

/// Every day's charts: a FULL snapshot in each incremental, moving a little from day to day.
@Suite struct DailyPopularityTests {
    /// The top of one chart (genre 36 in the US) on a day, app ids best first.
    static func top(_ model: FeedModel, day: Int, table: String = "application_popularity_per_genre")
        throws -> [String] {
        try model.rows(table, throughDay: day)
            .filter { $0[1] == "143441" && $0[2] == "36" }
            .sorted { Int($0[4] ?? "") ?? 0 < Int($1[4] ?? "") ?? 0 }
            .compactMap { $0[3] }
    }

    @Test func ranksMoveALittleAppsEnterAndLeaveAndNewAppsAppear() throws {
        var options = smallOptions(apps: 600)
        options.layout = .v5
        let model = FeedModel(options)
        let table = "free_application_popularity_per_genre"
        let day0 = try Self.top(model, day: 0, table: table)
        let day1 = try Self.top(model, day: 1, table: table)
        let day3 = try Self.top(model, day: 3, table: table)
        #expect(day0.count == day1.count && day0.count > 50)
        #expect(day0 != day1 && day1 != day3)
        // Most apps of both days moved by a few places at most; some did move.
        let common = day1.filter(day0.contains)
        let moves = common.compactMap { id in
            day0.firstIndex(of: id).flatMap { old in day1.firstIndex(of: id).map { abs($0 - old) } }
        }
        #expect(moves.filter { $0 <= 10 }.count * 10 >= moves.count * 8, "\(moves)")
        #expect(moves.contains { $0 > 0 })
        // Some entered and left; apps added by the incrementals appear.
        #expect(common.count < day0.count)
        let added = Set(try model.rows("application", throughDay: 3).compactMap { $0[1] })
            .subtracting(try model.rows("application").compactMap { $0[1] })
        #expect(!added.isDisjoint(with: day3))
        // Deterministic: the same options give the same day.
        #expect(try Self.top(FeedModel(options), day: 3, table: table) == day3)
    }

    @Test func theDayFileIsAFullSnapshotInEveryIncremental() throws {
        let directory = try TemporaryDirectory()
        let model = FeedModel(smallOptions())
        let feed = try FeedGenerator.write(model.incrementalOptions(day: 2), to: directory.url)
        let chart = try #require(feed.table("application_popularity_per_genre"))
        #expect(chart.path == directory.file("popularity20260107", "application_popularity_per_genre"))
        let records = splitRecords(try readBytes(chart.path))
        #expect(records[3].text == "#exportMode:FULL")
        let data: [[String?]] = records.filter { !$0.isMetadata }.map { $0.strings }
        #expect(data.allSatisfy { $0[0] == "1767744000000" })
        #expect(data == (try model.rows("application_popularity_per_genre", throughDay: 2)))
    }
}
