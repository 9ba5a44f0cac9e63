import EPFFormat
import EPFQuery
import JSONText

/// `epf changes`: the Apple IDs the exports since a date removed from the store, added or updated.
enum ChangesCommand: Command {
    static let name = "changes"
    static let summary = "List the ids removed, added or updated by the exports since a date"
    static let help = """
    USAGE: epf changes --since YYYY-MM-DD [--kind KIND] [--country CC] [--drops] [--json | --csv] [--db FILE]
           epf changes --since YYYY-MM-DD --kind rank --country CC [--chart C] [--genre ID] [--top N] [--moved N]

    EPF never says that an item left the store: it is only missing from the next full export. epf compares
    each full export of application, collection, song, video and artist with the table it replaces and
    records the ids that disappeared (removed) and appeared (added); an incremental records the ids it
    inserted (added) or changed (updated). The first load of a table is the baseline and records nothing.

    --kind price lists the price changes instead (recorded by imports run with --history prices): every
    storefront's price that changed, appeared or disappeared, with the old and new price; --country keeps one
    storefront, --drops only the prices that went down. The feed price-drop alerts need.

    --kind rank lists what changed in one chart (recorded by imports run with --history ranks): --country's
    storefront (required), --chart (default free) and --genre (default 36, the overall chart). Each recorded
    day from --since on is compared with the chart's recorded day before: the apps that entered the top N
    (--top; default every place), left it, or moved within it by --moved places or more (default 5). A day
    without data is skipped, never read as an empty chart.

    OPTIONS:
    \(optionsHelp(declaredOptions))

    Without --json or --csv, prints a table: export date, change, kind, id (and for prices the storefront, old
    and new price). Changes are listed by export date, then in the order they were recorded.

    EXAMPLES:
      epf changes --since 2026-01-06
      epf changes --since 2026-01-12 --kind app --csv > changes.csv
      epf changes --since 2026-01-06 --kind price --country us --drops
      epf changes --since 2026-01-06 --kind rank --country us --top 10
    """

    static let since = TextOption("since", "DATE", "List the changes of exports dated DATE (UTC) or later. Required.")
    static let kind = TextOption("kind", "KIND", "Only one kind: app, collection (albums and books), song, video "
                                    + "or artist; or price, the price changes; or rank, a chart's changes. software, "
                                    + "album and book are accepted too.",
                                 choices: Vocabulary.changeKinds + ["price", "rank"])
    static let country = TextOption("country", "CC", "With --kind price: only this storefront (us, gbr); with --kind "
                                        + "rank: the chart's storefront (required).")
    static let chart = TextOption("chart", "free|paid|free-ipad|paid-ipad", "With --kind rank: which chart.",
                                  shownDefault: "free")
    static let genre = IntOption("genre", "ID", default: Int(ChartQueries.allApps), range: 0...Int(Int32.max),
                                 "With --kind rank: the chart's genre (36 is the overall chart).")
    static let top = TextOption("top", "N", "With --kind rank: only the top N places (1 to 200): entered, left, "
                                    + "moved within them.", shownDefault: "every place")
    static let moved = IntOption("moved", default: ChartQueries.defaultMoved, range: 1...ChartQueries.maximumLimit,
                                 "With --kind rank: list apps that moved by at least N places.")
    static let drops = Flag("drops", "With --kind price: only prices that went down.")
    static let json = CommonOptions.json("One JSON array of {\"id\", \"kind\", \"change\", \"exportDate\"} objects "
                                             + "(price changes add storefrontId, country, currency, oldPrice, "
                                             + "newPrice and their formatted texts; rank changes add previousDate, "
                                             + "chart, country, storefrontId, genreId, oldRank, newRank and "
                                             + "trackName).")
    static let csv = Flag("csv", "RFC 4180 CSV with a header row (CRLF line ends), for scripts.")

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let path = try databasePath(&arguments)
        let since = try arguments.read(Self.since)
        let kind = try arguments.read(Self.kind).map(Vocabulary.changeKind)
        let country = try arguments.read(Self.country)
        let drops = arguments.read(Self.drops)
        let chart = try arguments.read(Self.chart)
        let genre = try arguments.optionalInt(Self.genre)
        let top = try arguments.optionalInt(Self.top, range: 1...ChartQueries.maximumLimit)
        let moved = try arguments.optionalInt(Self.moved)
        let json = arguments.read(Self.json)
        let csv = arguments.read(Self.csv)
        let positionals = try arguments.finish()
        guard positionals.isEmpty else { throw UsageError("unexpected argument '\(positionals[0])'") }
        guard !(csv && json) else { throw UsageError("choose one of --csv and --json") }
        guard let since else { throw UsageError("--since DATE is required (YYYY-MM-DD)") }
        let rankOptions = [("--chart", chart != nil), ("--genre", genre != nil), ("--top", top != nil),
                           ("--moved", moved != nil)]
        if kind == "rank" {
            guard !drops else { throw UsageError("--drops goes with --kind price") }
            guard let country else { throw UsageError("--kind rank needs --country (the chart's storefront, e.g. us)") }
            let name = chart ?? "free"
            guard let chartKind = ChartKind(rawValue: name.lowercased()) else {
                let words = ChartKind.allCases.map(\.rawValue)
                throw UsageError("--chart must be one of \(words.joined(separator: ", ")), got '\(name)'"
                                 + Nearest.hint(for: name.lowercased(), among: words))
            }
            return try RankChangesListing.run(since: since, country: country, chart: chartKind,
                                              genre: Int64(genre ?? Int(ChartQueries.allApps)), top: top,
                                              moved: moved ?? ChartQueries.defaultMoved, json: json, csv: csv,
                                              path: path)
        }
        if let given = rankOptions.first(where: \.1) { throw UsageError("\(given.0) goes with --kind rank") }
        if kind == "price" {
            return try PriceChangesListing.run(since: since, country: country, drops: drops, json: json, csv: csv,
                                               path: path)
        }
        guard country == nil, !drops else { throw UsageError("--country and --drops go with --kind price") }
        _ = try QueryCLI.run { try ChangeQueries.changesSince(since, kind: kind) }
        let fields = { (change: ChangeRecord) -> [String] in
            [EPFValues.isoDate(milliseconds: change.exportDate), change.change, change.kind, String(change.id)]
        }
        let listing = ChangeListing<ChangeRecord>(
            csvHeader: ["export_date", "change", "kind", "id"], tableHeader: ["EXPORT", "CHANGE", "KIND", "ID"],
            rightAligned: [3], json: \.json, csvFields: fields, tableFields: fields)
        try listing.write(json: json, csv: csv, path: path) { engine, cursor in
            let page = try engine.changes.page(since: since, kind: kind, limit: ChangeQueries.maximumChangesPage,
                                               cursor: cursor)
            return (page.changes, page.nextCursor)
        }
        return .ok
    }
}

/// Writes every page of a changes listing as JSON (one array, streamed), CSV or a table.
struct ChangeListing<Item> {
    let csvHeader: [String]
    let tableHeader: [String]
    let rightAligned: Set<Int>
    let json: (Item) -> JSONValue
    let csvFields: (Item) -> [String]
    let tableFields: (Item) -> [String]

    init(csvHeader: [String], tableHeader: [String], rightAligned: Set<Int>, json: @escaping (Item) -> JSONValue,
         csvFields: @escaping (Item) -> [String], tableFields: @escaping (Item) -> [String]) {
        self.csvHeader = csvHeader
        self.tableHeader = tableHeader
        self.rightAligned = rightAligned
        self.json = json
        self.csvFields = csvFields
        self.tableFields = tableFields
    }

    /// Follows the cursors of `page` (given the engine and the cursor, nil first) to the last page.
    func write(json asJSON: Bool, csv: Bool, path: String,
               page: (QueryEngine, String?) throws -> ([Item], String?)) throws {
        var rows: [[String]] = []
        var first = true
        if asJSON { Output.shared.write("[") }
        if csv { Output.shared.write(csvHeader.joined(separator: ",") + "\r\n") }
        try QueryCLI.run {
            let engine = try QueryEngine(databasePath: path)
            var cursor: String?
            repeat {
                let (items, next) = try page(engine, cursor)
                for item in items {
                    if asJSON {
                        var bytes = json(item).serialized()
                        bytes.insert(contentsOf: Array((first ? "\n" : ",\n").utf8), at: 0)
                        Output.shared.write(String(decoding: bytes, as: UTF8.self))
                    } else if csv {
                        Output.shared.write(csvFields(item).map(SQLCommand.csvField).joined(separator: ",") + "\r\n")
                    } else {
                        rows.append(tableFields(item))
                    }
                    first = false
                }
                cursor = next
            } while cursor != nil
        }
        if asJSON {
            Output.shared.write(first ? "]\n" : "\n]\n")
        } else if !csv {
            printTable(header: tableHeader, rows: rows, rightAligned: rightAligned, boldHeader: true)
        }
    }
}

/// `epf changes --kind price`: the price changes since a date, all pages, as a table, JSON or CSV.
enum PriceChangesListing {
    static func run(since: String, country: String?, drops: Bool, json: Bool, csv: Bool, path: String) throws
        -> ExitCode {
        _ = try QueryCLI.run { try ChangeQueries.changesSince(since, kind: nil) }
        let prices = FormattedPrices()
        let listing = ChangeListing<PriceChange>(
            csvHeader: ["export_date", "change", "kind", "id", "storefront_id", "country", "currency", "old_price",
                        "new_price"],
            tableHeader: ["EXPORT", "CHANGE", "KIND", "ID", "CC", "OLD", "NEW"], rightAligned: [3, 5, 6],
            json: { change in
                change.json(old: prices.of(change.oldPrice, in: change), new: prices.of(change.newPrice, in: change))
            }) { change in
            [EPFValues.isoDate(milliseconds: change.exportDate), change.change, change.kind, String(change.id),
             String(change.storefrontId), change.country ?? "", change.currency ?? "",
             prices.of(change.oldPrice, in: change)?.number ?? "", prices.of(change.newPrice, in: change)?.number ?? ""]
        } tableFields: { change in
            [EPFValues.isoDate(milliseconds: change.exportDate), change.change, change.kind, String(change.id),
             change.country ?? "?", prices.of(change.oldPrice, in: change)?.text ?? "-",
             prices.of(change.newPrice, in: change)?.text ?? "-"]
        }
        try listing.write(json: json, csv: csv, path: path) { engine, cursor in
            let page = try engine.changes.pricePage(since: since, country: country, drops: drops,
                                                    limit: ChangeQueries.maximumChangesPage, cursor: cursor)
            return (page.changes, page.nextCursor)
        }
        return .ok
    }
}

/// `epf changes --kind rank`: one chart's changes from day to day since a date, all pages, as a table, JSON or CSV.
enum RankChangesListing {
    static func run(since: String, country: String, chart: ChartKind, genre: Int64, top: Int?, moved: Int,
                    json: Bool, csv: Bool, path: String) throws -> ExitCode {
        _ = try QueryCLI.run { try ChangeQueries.changesSince(since, kind: nil) }
        let rank = { (rank: Int?) in rank.map(String.init) ?? "" }
        let listing = ChangeListing<RankChange>(
            csvHeader: ["export_date", "previous_date", "change", "id", "chart", "country", "genre_id", "old_rank",
                        "new_rank", "title"],
            tableHeader: ["EXPORT", "CHANGE", "ID", "OLD", "NEW", "TITLE"], rightAligned: [2, 3, 4], json: \.json
        ) { change in
            [EPFValues.isoDate(milliseconds: change.exportDate), EPFValues.isoDate(milliseconds: change.previousDate),
             change.change, String(change.id), change.chart, change.country, String(change.genreId),
             rank(change.oldRank), rank(change.newRank), change.title ?? ""]
        } tableFields: { change in
            [EPFValues.isoDate(milliseconds: change.exportDate), change.text, String(change.id),
             change.oldRank.map(String.init) ?? "-", change.newRank.map(String.init) ?? "-",
             TerminalText.oneLine(change.title ?? "")]
        }
        do {
            try listing.write(json: json, csv: csv, path: path) { engine, cursor in
                let page = try engine.charts.rankPage(since: since, country: country, kind: chart, genre: genre,
                                                      top: top, moved: moved, limit: ChangeQueries.maximumChangesPage,
                                                      cursor: cursor)
                return (page.changes, page.nextCursor)
            }
        } catch let error as ChartUnavailable {
            printError("epf changes: \(error.description)")
            return .notFound
        }
        return .ok
    }
}
