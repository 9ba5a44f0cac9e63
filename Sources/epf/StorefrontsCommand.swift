import EPFQuery

/// `epf storefronts`: the storefront list with EPF ids, ISO codes and names.
enum StorefrontsCommand: Command {
    static let name = "storefronts"
    static let summary = "List storefronts: EPF id, ISO country codes, name"
    static let help = """
    USAGE: epf storefronts [--json] [--db FILE]

    OPTIONS:
    \(optionsHelp(declaredOptions))

    EXAMPLES:
      epf storefronts
      epf storefronts --json
    """

    static let json = CommonOptions.json("Print [{\"storefrontId\", \"country\", \"countryCode\", \"name\"}] "
                                             + "(country: ISO alpha-2, countryCode: the feed's ISO alpha-3).")

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let path = try databasePath(&arguments)
        let json = arguments.read(Self.json)
        guard try arguments.finish().isEmpty else { throw UsageError("storefronts takes no arguments") }
        let (rows, present) = try QueryCLI.run {
            let engine = try QueryEngine(databasePath: path)
            return (try engine.catalogue.storefronts(), engine.hasTable("storefront"))
        }
        if json {
            QueryCLI.writeJSON(.array(rows.map(\.json)))
            return .ok
        }
        guard present else {
            printError("epf storefronts: the database has no storefront table; "
                       + "import the itunes feed's storefront file")
            return .notFound
        }
        printTable(header: ["ID", "CC", "ISO3", "NAME"],
                   rows: rows.map { [String($0.storefrontId), $0.country ?? "?", $0.countryCode, $0.name] },
                   width: terminalWidth(), rightAligned: [0], boldHeader: true)
        return .ok
    }
}
