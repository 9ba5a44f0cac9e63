import EPFQuery

/// `epf search`: full-text search over titles and artist/seller names.
enum SearchCommand: Command {
    static let name = "search"
    static let summary = "Search titles and artist/seller names (prefix, accent- and case-insensitive)"
    static let help = """
    USAGE: epf search TERM... [--entity KIND] [--country CC] [--limit N] [--json] [--db FILE]

    Finds apps, books, albums, songs, videos and artists whose title or artist/seller name holds every
    word of TERM; the last word may be a prefix. Case and accents do not matter ("cafe ole" finds
    "Café Olé"); Chinese, Japanese and Korean words are found as phrases. Exact titles come first,
    then the best matches (bm25). Needs the search index the importer builds.

    OPTIONS:
    \(optionsHelp(declaredOptions))

    Exit status 0 when something was found, 1 when nothing was.

    EXAMPLES:
      epf search dragon battle
      epf search tracker --entity album --limit 5
      epf search 日本語 --country jp --json
    """

    static let entity = TextOption("entity", "KIND", "Only one kind: app, book, album, song, video or artist "
                                       + "(software and ebook are accepted too).",
                                   choices: EntityKind.words)
    static let country = TextOption("country", "CC", "Storefront for the prices shown (ISO 3166 alpha-2).",
                                    shownDefault: QueryEngine.defaultCountry)
    static let limit = IntOption("limit", default: 20, range: 1...1000, "At most N results, 1 to 1000.")
    static let json = CommonOptions.json("Print {\"resultCount\", \"results\"} shaped like Apple's Search API.")

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let path = try databasePath(&arguments)
        let entityText = try arguments.read(Self.entity)
        let country = try arguments.read(Self.country)
        let limit = try arguments.read(Self.limit)
        let json = arguments.read(Self.json)
        let words = try arguments.finish()
        guard !words.isEmpty else { throw UsageError("give a search term") }
        var entity: EntityKind?
        if let entityText { entity = try Vocabulary.entity(entityText) }
        let term = words.joined(separator: " ")
        let (result, indexed) = try QueryCLI.run {
            let engine = try QueryEngine(databasePath: path)
            return (try engine.search.matches(term: term, entity: entity, country: country, limit: limit),
                    engine.hasTable("epf_search"))
        }
        if json {
            QueryCLI.writeJSON(result.searchJSON)
        } else if !result.items.isEmpty {
            let rows = result.items.map { item -> [String] in
                let value = item.value
                let title = value["trackName"]?.stringValue ?? value["collectionName"]?.stringValue
                    ?? value["artistName"]?.stringValue ?? ""
                let by = item.kind == .artist ? "" : value["artistName"]?.stringValue ?? ""
                return [String(item.id), item.kind.word, value["formattedPrice"]?.stringValue ?? "", title, by]
            }
            printTable(header: ["ID", "KIND", "PRICE", "TITLE", "BY"], rows: rows, width: terminalWidth(),
                       rightAligned: [0, 2], boldHeader: true)
        }
        if result.items.isEmpty {
            Output.shared.flush()
            printError(indexed ? "epf search: nothing matches '\(term)'"
                : "epf search: the database has no search index (epf_search); re-run 'epf import' to build it")
            return .notFound
        }
        return .ok
    }
}
