import EPFQuery
import JSONText

/// `epf prices`: an item's price in every storefront, in each storefront's own currency.
enum PricesCommand: Command {
    static let name = "prices"
    static let summary = "Price of an app (or album, song, video) in every storefront"
    static let help = """
    USAGE: epf prices ID_OR_LINK [--history [--country CC] [--since YYYY-MM-DD]] [--json] [--db FILE]

    Lists the price in every storefront that sells the item: country, storefront, currency and the
    price formatted in that currency ("Free", "$0.99", "0,99 €", "¥120"); never converted.

    With --history, the price over time instead: one line per recorded change (export date, storefront, old and
    new price; a storefront where the item appeared or disappeared), from a database whose imports ran with
    --history prices. On a terminal (without NO_COLOR) a small chart follows: the price per storefront over the
    changes, in Unicode blocks.

    OPTIONS:
    \(optionsHelp(declaredOptions))

    Exit status 1 when the ID is in no table; one the changes table says left the store is reported as
    "removed from the store in the export of DATE", as epf lookup says it.

    EXAMPLES:
      epf prices 293406864
      epf prices https://apps.apple.com/us/app/dragon-battle-tracker/id293406864 --json
      epf prices 285423078 --history --country us --since 2026-01-01
    """

    static let json = CommonOptions.json("Print {\"id\", \"found\", \"kind\", \"title\", \"prices\": "
                                             + "[{\"storefrontId\", \"country\", \"currency\", \"price\", "
                                             + "\"formattedPrice\", ...}]}; an id in no table prints found false "
                                             + "(and \"removed\": {\"id\", \"kind\", \"removedInExport\"} when "
                                             + "it left the store).")

    static let history = Flag("history", "The price over time: one line per recorded change (needs imports with "
                                  + "--history prices).")
    static let country = TextOption("country", "CC", "With --history: only this storefront (us, gbr).")
    static let since = TextOption("since", "DATE", "With --history: only changes of exports dated DATE (UTC) or later.")

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let path = try databasePath(&arguments)
        let json = arguments.read(Self.json)
        let history = arguments.read(Self.history)
        let country = try arguments.read(Self.country)
        let since = try arguments.read(Self.since)
        let items = try arguments.finish()
        guard items.count == 1 else { throw UsageError("give exactly one Apple ID or store link") }
        guard let link = StoreLink.parse(items[0]) else {
            throw UsageError(StoreLink.notAnIDMessage(items))
        }
        if history {
            return try PriceHistoryCommand.run(link: link, argument: items[0], country: country, since: since,
                                               json: json, path: path)
        }
        guard country == nil, since == nil else { throw UsageError("--country and --since go with --history") }
        let found: (list: PriceList?, removed: RemovedItem?) = try QueryCLI.run {
            let engine = try QueryEngine(databasePath: path)
            guard let list = try engine.catalogue.prices(id: link.id) else {
                return (nil, try engine.changes.removal(of: link, argument: items[0]))
            }
            return (list, nil)
        }
        let removed = found.removed
        guard let list = found.list else {
            if json {
                // As lookup's JSON does, an answer for the id not found (with lookup's fact of its removal),
                // beside the message and exit status 1.
                var pairs: [(String, JSONValue)] = [("id", .int(link.id)), ("found", .bool(false)), ("kind", .null),
                                                    ("title", .null), ("prices", .array([]))]
                if let removed { pairs.append(("removed", removed.json)) }
                QueryCLI.writeJSON(.object(pairs))
                Output.shared.flush()
            }
            printError(removed.map { QueryCLI.removedMessage(Self.name, $0) }
                       ?? "epf prices: not found: \(items[0])")
            return .notFound
        }
        if json {
            QueryCLI.writeJSON(foundJSON(list.json))
            return .ok
        }
        let width = terminalWidth()
        let heading = TerminalText.oneLine("\(list.id)  \(list.title ?? "")  (\(list.kind.word))")
        say(TerminalText.bold(TerminalText.truncate(heading, to: width)))
        if list.rows.isEmpty {
            say("no prices in any storefront")
            return .ok
        }
        let rows = list.rows.map { row in
            [row.country ?? "?", String(row.storefrontId), row.storefrontName ?? "", row.currency, row.formattedPrice]
        }
        printTable(header: ["CC", "STOREFRONT", "NAME", "CURRENCY", "PRICE"], rows: rows, width: width,
                   rightAligned: [1, 4], boldHeader: true)
        return .ok
    }

    /// The prices' JSON with `"found": true` after the id, the member a not-found answer has as false.
    private static func foundJSON(_ value: JSONValue) -> JSONValue {
        guard case .object(var pairs) = value else { return value }
        pairs.insert(("found", .bool(true)), at: min(1, pairs.count))
        return .object(pairs)
    }
}
