import EPFFormat
import JSONText

/// One chart an app can be ranked in: the chart, the storefront and the genre.
package struct RankedChartPlace: Hashable, Sendable {
    /// `free`, `paid`, `free-ipad`, `paid-ipad` (v5's four tables), or `apps`: v3's one chart of every app, ranked as
    /// the feed ships it (not split by price).
    package let chart: String
    /// EPF storefront id.
    package let storefrontId: Int64
    /// ISO 3166 alpha-2 lowercase, nil when neither the data nor Apple's list knows the storefront.
    package let country: String?
    /// The genre; 36 is the App Store itself (the overall chart).
    package let genreId: Int64
}

/// An app's ranks in one chart over the days the chart's table was recorded.
package struct AppRankSeries: Sendable {
    package let place: RankedChartPlace
    /// The genre's name, nil when the genre table does not know it.
    package let genreName: String?
    /// The days the chart's table holds data for (its popularity was imported and recorded), oldest first, in
    /// milliseconds since 1970 UTC. A day not listed is "no data", never "not in the chart".
    package let recordedDays: [Int64]
    /// The app's rank on each recorded day it was in the chart; a recorded day missing here: not in the chart.
    package let ranks: [Int64: Int]

    package init(place: RankedChartPlace, genreName: String?, recordedDays: [Int64], ranks: [Int64: Int]) {
        self.place = place
        self.genreName = genreName
        self.recordedDays = recordedDays
        self.ranks = ranks
    }

    /// The days the app was in the chart, oldest first.
    package var rankedDays: [Int64] { recordedDays.filter { ranks[$0] != nil } }
    /// The rank on the last recorded day, nil when the app was not in the chart then.
    package var latest: Int? { recordedDays.last.flatMap { ranks[$0] } }
    /// The best (lowest) rank and the first day it was reached.
    package var best: (rank: Int, day: Int64)? {
        var best: (rank: Int, day: Int64)?
        for day in recordedDays {
            if let rank = ranks[day], rank < (best?.rank ?? Int.max) { best = (rank, day) }
        }
        return best
    }
    /// Recorded days the app ranked `top` or better.
    package func days(inTop top: Int) -> Int { ranks.values.filter { $0 <= top }.count }
    /// The first and the last day the app was in the chart.
    package var firstSeen: Int64? { rankedDays.first }
    package var lastSeen: Int64? { rankedDays.last }

    /// `{"chart", "country", "storefrontId", "genreId", "genreName", "rank", "best", "bestDate", "daysInTop10",
    /// "daysInTop100", "firstSeen", "lastSeen", "daysRecorded"}` and, with `days`, `"days": [{"date", "rank"}]`
    /// (rank null: recorded, not in the chart).
    package func json(days: Bool) -> JSONValue {
        let date = { (day: Int64?) -> JSONValue in
            day.map { .string(EPFValues.isoTimestamp(milliseconds: $0)) } ?? .null
        }
        var pairs: [(String, JSONValue)] = [
            ("chart", .string(place.chart)), ("country", place.country.map { .string($0) } ?? .null),
            ("storefrontId", .int(place.storefrontId)), ("genreId", .int(place.genreId)),
            ("genreName", genreName.map { .string($0) } ?? .null),
            ("rank", latest.map { .int(Int64($0)) } ?? .null), ("best", best.map { .int(Int64($0.rank)) } ?? .null),
            ("bestDate", date(best?.day)), ("daysInTop10", .int(Int64(self.days(inTop: 10)))),
            ("daysInTop100", .int(Int64(self.days(inTop: 100)))), ("firstSeen", date(firstSeen)),
            ("lastSeen", date(lastSeen)), ("daysRecorded", .int(Int64(recordedDays.count))),
        ]
        if days {
            pairs.append(("days", .array(recordedDays.map { day in
                .object([("date", date(day)), ("rank", ranks[day].map { .int(Int64($0)) } ?? .null)])
            })))
        }
        return .object(pairs)
    }
}

/// An app's ranks: today's from the chart tables, or each recorded day's from the rank history.
package struct AppRanks: Sendable {
    /// The app's Apple ID.
    package let id: Int64
    /// The app's name, nil when the catalogue lacks the app.
    package let title: String?
    /// Whether the days come from the rank history (false: only the chart tables' current day).
    package let fromHistory: Bool
    /// The first day asked for (milliseconds), nil for every day held.
    package let since: Int64?
    /// One series per chart the app was in on a day asked for, by storefront, chart and genre.
    package let series: [AppRankSeries]

    package init(id: Int64, title: String?, fromHistory: Bool, since: Int64?, series: [AppRankSeries]) {
        self.id = id
        self.title = title
        self.fromHistory = fromHistory
        self.since = since
        self.series = series
    }

    /// `{"id", "trackName", "history", "since", "resultCount", "charts": [series...]}`; with `days` each series
    /// lists its recorded days.
    package func json(days: Bool) -> JSONValue {
        .object([
            ("id", .int(id)), ("trackName", title.map { .string($0) } ?? .null), ("history", .bool(fromHistory)),
            ("since", since.map { .string(EPFValues.isoTimestamp(milliseconds: $0)) } ?? .null),
            ("resultCount", .int(Int64(series.count))), ("charts", .array(series.map { $0.json(days: days) })),
        ])
    }
}
