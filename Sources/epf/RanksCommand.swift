import EPFFormat
import EPFQuery
import JSONText

/// `epf ranks`: an app's places in the charts, today's and, with rank history, each recorded day's.
enum RanksCommand: Command {
    static let name = "ranks"
    static let summary = "An app's ranks in the charts, today and over the recorded days"
    static let help = """
    USAGE: epf ranks ID_OR_LINK [--country CC] [--chart free|paid|free-ipad|paid-ipad|apps] [--genre ID]
                     [--since YYYY-MM-DD] [--json] [--db FILE]

    Where the app stands in every chart, storefront and genre that ranks it. Without rank history, today's
    ranks: those of the chart tables the last popularity feed imported. With rank history (imports run with
    --history ranks), each recorded day's from --since on (default: the last 90 days recorded), and per chart
    a summary: the rank on the last day, the best rank and its day, the days in the top 10 and the top 100,
    the first and the last day seen. The day table follows (from the first day the app was in each chart; "out"
    on a recorded day it was not). A day whose popularity was not imported is "no data", never "not in the
    chart": the day table skips it and the chart draws it as a gap. On a terminal (without NO_COLOR) a chart
    follows, one line per chart: a block per day, the taller the better the rank, "·" where the app was out.

    Charts: v5's four (free, paid, free-ipad, paid-ipad) and v3's one chart of every app, "apps", ranked as
    the feed ships it (epf charts splits it by price; epf ranks does not).

    OPTIONS:
    \(optionsHelp(declaredOptions))

    Exit status 1 when neither the catalogue nor any chart knows the ID.

    EXAMPLES:
      epf ranks 293406864
      epf ranks 293406864 --country us --genre 36 --json
      epf ranks https://apps.apple.com/us/app/dragon-battle-tracker/id293406864 --since 2026-01-06
    """

    static let country = TextOption("country", "CC", "Only this storefront (us, gbr).")
    static let chart = TextOption("chart", "free|paid|free-ipad|paid-ipad|apps", "Only this chart.",
                                  choices: RankQueries.chartWords)
    static let genre = TextOption("genre", "ID", "Only this genre (36, the App Store itself, is the overall chart).")
    static let since = TextOption("since", "DATE", "With rank history: only days from DATE (UTC) on.",
                                  shownDefault: "the last \(RankQueries.defaultDays) days recorded")
    static let json = CommonOptions.json("{\"id\", \"trackName\", \"history\", \"since\", \"resultCount\", "
        + "\"charts\": [{\"chart\", \"country\", \"storefrontId\", \"genreId\", \"genreName\", \"rank\", \"best\", "
        + "\"bestDate\", \"daysInTop10\", \"daysInTop100\", \"firstSeen\", \"lastSeen\", \"daysRecorded\", "
        + "\"days\": [{\"date\", \"rank\"}]}]}; rank null: out of the chart that day.")

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let path = try databasePath(&arguments)
        let country = try arguments.read(Self.country)
        let chart = try arguments.read(Self.chart)
        let genreText = try arguments.read(Self.genre)
        let since = try arguments.read(Self.since)
        let json = arguments.read(Self.json)
        let items = try arguments.finish()
        guard items.count == 1 else { throw UsageError("give exactly one Apple ID or store link") }
        guard let link = StoreLink.parse(items[0]) else {
            throw UsageError(StoreLink.notAnIDMessage(items))
        }
        guard link.kind == nil || link.kind == .software else {
            throw UsageError("'\(items[0])' is not an app: the charts rank apps")
        }
        if let chart, !RankQueries.chartWords.contains(chart) {
            throw UsageError("--chart must be one of \(RankQueries.chartWords.joined(separator: ", ")), got '\(chart)'"
                             + Nearest.hint(for: chart.lowercased(), among: RankQueries.chartWords))
        }
        var genre: Int64?
        if let genreText {
            guard let number = Int64(genreText), (0...Int64(Int32.max)).contains(number) else {
                throw UsageError("--genre must be a genre id (a whole number such as 36 or 6014), got '\(genreText)'")
            }
            genre = number
        }
        let answer: AppRanks
        do {
            answer = try QueryCLI.run {
                try QueryEngine(databasePath: path).ranks.ranks(id: link.id, country: country, chart: chart,
                                                                genre: genre, since: since)
            }
        } catch let error as ChartUnavailable {
            printError("epf ranks: \(error.description)")
            return .notFound
        }
        let known = answer.title != nil || !answer.series.isEmpty
        if json {
            QueryCLI.writeJSON(answer.json(days: answer.fromHistory))
            return known ? .ok : .notFound
        }
        guard known else {
            printError("epf ranks: not found: \(items[0]) (no app and no chart holds this id)")
            return .notFound
        }
        RankListing(answer: answer, width: terminalWidth()).write()
        return .ok
    }
}

/// `epf ranks` as text: a heading, a summary per chart, the ranks of each recorded day, and the chart.
struct RankListing {
    let answer: AppRanks
    let width: Int?

    func write() {
        let days = Set(answer.series.flatMap(\.recordedDays)).sorted()
        var heading = "\(answer.id)  \(answer.title ?? "(not in the catalogue)")"
        if answer.fromHistory, let first = days.first, let last = days.last {
            heading += ": \(days.count) day\(days.count == 1 ? "" : "s") recorded, \(Self.date(first)) to "
                + Self.date(last)
        } else if let last = days.last {
            heading += ": the charts of \(Self.date(last))"
        }
        say(TerminalText.bold(TerminalText.truncate(TerminalText.oneLine(heading), to: width)))
        guard !answer.series.isEmpty else {
            say(answer.fromHistory ? "in no chart on the days recorded" : "in no chart today")
            return
        }
        guard answer.fromHistory else {
            printTable(header: ["CC", "CHART", "GENRE", "RANK"], rows: answer.series.map { series in
                [series.place.country ?? String(series.place.storefrontId), series.place.chart, Self.genre(series),
                 series.latest.map(String.init) ?? "out"]
            }, width: width, rightAligned: [3], boldHeader: true)
            return
        }
        let summary = answer.series.map { series -> [String] in
            let best = series.best
            return [series.place.country ?? String(series.place.storefrontId), series.place.chart,
                    Self.genre(series), series.latest.map(String.init) ?? "out", best.map { String($0.rank) } ?? "-",
                    best.map { Self.date($0.day) } ?? "-", String(series.days(inTop: 10)),
                    String(series.days(inTop: 100)), series.firstSeen.map(Self.date) ?? "-",
                    series.lastSeen.map(Self.date) ?? "-"]
        }
        printTable(header: ["CC", "CHART", "GENRE", "RANK", "BEST", "BEST DAY", "TOP 10", "TOP 100", "FIRST SEEN",
                            "LAST SEEN"],
                   rows: summary, width: width, rightAligned: [3, 4, 6, 7], boldHeader: true)
        say()
        var rows: [[String]] = []
        for series in answer.series {
            var previous: Int?
            // From the first day the app was in the chart: the days before would all say "out".
            for day in series.recordedDays where day >= series.firstSeen ?? Int64.max {
                let rank = series.ranks[day]
                rows.append([Self.date(day), series.place.country ?? String(series.place.storefrontId),
                             series.place.chart, Self.genre(series), rank.map(String.init) ?? "out",
                             Self.move(from: previous, to: rank, first: day == series.recordedDays.first)])
                previous = rank
            }
        }
        printTable(header: ["DAY", "CC", "CHART", "GENRE", "RANK", "MOVE"], rows: rows, width: width,
                   rightAligned: [4], boldHeader: true)
        if colorAllowed {
            say()
            for line in RankChart.lines(answer.series, days: days) { say(line) }
        }
    }

    static func date(_ day: Int64) -> String { EPFValues.isoDate(milliseconds: day) }

    static func genre(_ series: AppRankSeries) -> String {
        TerminalText.oneLine(series.genreName.map { "\(series.place.genreId) \($0)" } ?? String(series.place.genreId))
    }

    /// The move since the chart's recorded day before: new (it was out), out (it left), up N, down N, same.
    static func move(from previous: Int?, to rank: Int?, first: Bool) -> String {
        if first { return "" }
        switch (previous, rank) {
        case (nil, nil): return ""
        case (nil, _?): return "new"
        case (_?, nil): return "left"
        case (let old?, let new?): return ChartMove(from: old, to: new).text
        }
    }
}

/// A small chart of ranks over time: one line per chart, one column per calendar day from the first recorded day to
/// the last; a block as tall as the rank is good (█ at the series' best, ▁ at its worst), "·" on a recorded day
/// the app was out of the chart, a space on a day without data.
enum RankChart {
    static let blocks: [Character] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]
    /// Most charts drawn (the rest are in the tables above).
    static let maximumLines = 12
    /// Most days drawn: the last ones.
    static let maximumDays = 90
    static let dayMilliseconds: Int64 = 86_400_000

    static func lines(_ series: [AppRankSeries], days: [Int64]) -> [String] {
        guard let first = days.first, let last = days.last else { return [] }
        let start = max(first, last - Int64(maximumDays - 1) * dayMilliseconds)
        let columns = Array(stride(from: start, through: last, by: Int(dayMilliseconds)))
        let shown = Array(series.prefix(maximumLines))
        let labels = shown.map { one in
            "\(one.place.country ?? String(one.place.storefrontId)) \(one.place.chart) \(one.place.genreId)"
        }
        let labelWidth = labels.map(\.count).max() ?? 0
        var lines: [String] = []
        for (one, label) in zip(shown, labels) {
            let recorded = Set(one.recordedDays)
            let ranks = one.ranks.values
            guard let best = ranks.min(), let worst = ranks.max() else { continue }
            let bars = String(columns.map { day -> Character in
                guard recorded.contains(day) else { return " " }
                guard let rank = one.ranks[day] else { return "·" }
                guard worst > best else { return blocks[blocks.count - 1] }
                let height = Double(worst - rank) / Double(worst - best) * Double(blocks.count - 1)
                return blocks[min(blocks.count - 1, Int(height + 0.5))]
            })
            let now = one.latest.map { "#\($0)" } ?? "out"
            let padded = label.padding(toLength: labelWidth, withPad: " ", startingAt: 0)
            lines.append("\(padded) \(bars)  \(now), best #\(best)")
        }
        if series.count > maximumLines { lines.append("… and \(series.count - maximumLines) more charts") }
        return lines
    }
}
