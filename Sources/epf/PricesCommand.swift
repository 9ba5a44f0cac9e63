import EPFQuery

/// `epf prices`: an item's price in every storefront, in each storefront's own currency.
enum PricesCommand: Command {
    static let name = "prices"
    static let summary = "Price of an app (or album, song, video) in every storefront"
    static let help = """
    USAGE: epf prices ID_OR_LINK [--json] [--db FILE]

    Lists the price in every storefront that sells the item: country, storefront, currency and the
    price formatted in that currency ("Free", "$0.99", "0,99 €", "¥120"); never converted.

    OPTIONS:
    \(optionsHelp([json, CommonOptions.database]))

    Exit status 1 when the ID is in no table.

    EXAMPLES:
      epf prices 364709193
      epf prices https://apps.apple.com/us/app/ibooks/id364709193 --json
    """

    static let json = CommonOptions.json("Print {\"id\", \"kind\", \"title\", \"prices\": [{\"storefrontId\", "
                                             + "\"country\", \"currency\", \"price\", \"formattedPrice\", ...}]}.")

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let path = try databasePath(&arguments)
        let json = arguments.read(Self.json)
        let items = try arguments.finish()
        guard items.count == 1 else { throw UsageError("give exactly one Apple ID or store link") }
        guard let link = StoreLink.parse(items[0]) else {
            throw UsageError("'\(items[0])' is not an Apple ID or store link")
        }
        let list = try QueryCLI.run {
            try QueryEngine(databasePath: path).catalogue.prices(id: link.id)
        }
        guard let list else {
            printError("epf prices: not found: \(items[0])")
            return .notFound
        }
        if json {
            QueryCLI.writeJSON(list.json)
            return .ok
        }
        let width = terminalWidth()
        let heading = TerminalText.oneLine("\(list.id)  \(list.title ?? "")  (\(list.kind.rawValue))")
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
}
