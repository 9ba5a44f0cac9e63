import EPFFormat
import EPFQuery
import JSONText

/// `epf charts`: a storefront's top apps in one chart and genre, as the last popularity feed imported ranks them.
enum ChartsCommand: Command {
    static let name = "charts"
    static let summary = "A storefront's top free or paid apps, overall or in a genre"
    static let help = """
    USAGE: epf charts --country CC [--chart free|paid|free-ipad|paid-ipad] [--genre ID] [--date YYYY-MM-DD]
                      [--limit N] [--json] [--db FILE]

    The chart as the last popularity feed imported ranks it: v5's table of the chart (free_, paid_,
    free_ipad_ or paid_ipad_application_popularity_per_genre), else v3's one chart of every app
    (application_popularity_per_genre) split by price: the apps priced 0 in the storefront make the
    free chart, the others the paid one, in v3's order numbered again from 1 (v3 has no iPad charts).
    Genre 36, the App Store itself, is the overall chart.

    With rank history (imports run with --history ranks), --date D shows the chart as it stood on D, and
    each entry's move since the chart's recorded day before: new, up N, down N or same (without --date,
    the last chart imported gets the MOVE column when the history holds its day before). A date whose
    popularity was not recorded is "no data": epf says so, naming the nearest recorded days, and exits 1.

    OPTIONS:
    \(optionsHelp(declaredOptions))

    EXAMPLES:
      epf charts --country us
      epf charts --country gb --chart paid --genre 6014 --limit 10
      epf charts --country us --date 2026-01-06 --limit 10
    """

    static let country = TextOption("country", "CC", "Storefront (ISO 3166 alpha-2 or alpha-3); required.")
    static let chart = TextOption("chart", "free|paid|free-ipad|paid-ipad", default: "free", "Which chart.")
    static let genre = IntOption("genre", "ID", default: Int(ChartQueries.allApps), range: 0...Int(Int32.max),
                                 "Genre id; 36 (the default) is the overall chart, 6014 Games.")
    static let limit = IntOption("limit", default: 25, range: 1...ChartQueries.maximumLimit,
                                 "At most N apps, 1 to \(ChartQueries.maximumLimit) (Apple ranks up to 200).")
    static let date = TextOption("date", "YYYY-MM-DD", "The chart as it stood that day (needs rank history).")
    static let json = CommonOptions.json("{\"country\", \"storefrontId\", \"chart\", \"genreId\", \"genreName\", "
        + "\"source\", \"exportDate\", \"depth\", \"movesSince\", \"resultCount\", \"results\": [{\"rank\", "
        + "\"move\", \"places\", \"previousRank\", \"trackId\", \"trackName\", \"artistName\", \"formattedPrice\", "
        + "...}]}; move (new, up, down, same) only when movesSince is a day.")

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let path = try databasePath(&arguments)
        let country = try arguments.read(Self.country)
        let chartName = try arguments.read(Self.chart) ?? "free"
        let genre = try arguments.read(Self.genre)
        let limit = try arguments.read(Self.limit)
        let date = try arguments.read(Self.date)
        let json = arguments.read(Self.json)
        let positionals = try arguments.finish()
        guard positionals.isEmpty else { throw UsageError("unexpected argument '\(positionals[0])'") }
        guard let country else { throw UsageError("--country is required (e.g. --country us)") }
        guard let kind = ChartKind(rawValue: chartName.lowercased()) else {
            throw UsageError("--chart must be free, paid, free-ipad or paid-ipad, got '\(chartName)'")
        }
        let answer: Chart
        do {
            answer = try QueryCLI.run {
                try QueryEngine(databasePath: path).charts.chart(country: country, kind: kind, genre: Int64(genre),
                                                                  limit: limit, date: date)
            }
        } catch let error as ChartUnavailable {
            printError("epf charts: \(error.description)")
            return .notFound
        }
        if json {
            QueryCLI.writeJSON(answer.json)
            return answer.entries.isEmpty ? .notFound : .ok
        }
        let width = terminalWidth()
        let genreName = answer.genreName.map { " \($0)" } ?? ""
        let asOf = answer.exportDate.map { ", as of " + EPFValues.isoDate(milliseconds: $0) } ?? ""
        let split = answer.splitByPrice ? ", split by price" : ""
        let moves = answer.movesSince.map { ", moves since " + EPFValues.isoDate(milliseconds: $0) } ?? ""
        let heading = "\(answer.country)  \(kind.rawValue)  \(answer.genreId)\(genreName): top \(answer.entries.count) "
            + "of \(answer.depth)\(asOf)\(moves) (\(answer.source)\(split))"
        say(TerminalText.bold(TerminalText.truncate(heading, to: width)))
        guard !answer.entries.isEmpty else {
            printError("epf charts: the \(kind.rawValue) chart ranks no apps in genre \(genre) in \(answer.country)")
            return .notFound
        }
        let moved = answer.movesSince != nil
        printTable(header: ["RANK"] + (moved ? ["MOVE"] : []) + ["ID", "PRICE", "TITLE", "ARTIST"],
                   rows: answer.entries.map { entry in
            [String(entry.rank)] + (moved ? [entry.move?.text ?? ""] : [])
                + [String(entry.id), entry.field("formattedPrice")?.stringValue ?? "",
                   TerminalText.oneLine(entry.field("trackName")?.stringValue ?? ""),
                   TerminalText.oneLine(entry.field("artistName")?.stringValue ?? "")]
        }, width: width, rightAligned: moved ? [0, 2] : [0, 1], boldHeader: true)
        return .ok
    }
}
