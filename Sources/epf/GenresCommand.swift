import EPFQuery

/// `epf genres`: the genre tree, or the apps of one genre with their popularity rank.
enum GenresCommand: Command {
    static let name = "genres"
    static let summary = "The genre tree, or the apps of one genre ranked by popularity"
    static let help = """
    USAGE: epf genres [GENRE_ID] [--country CC] [--limit N] [--json] [--db FILE]

    Without GENRE_ID: every genre, indented under its parent. With GENRE_ID: the genre's apps, ranked
    by the popularity feed in the storefront of --country when present (v3's
    application_popularity_per_genre, or v5's free iPhone chart, free_application_popularity_per_genre),
    then unranked apps by ID. Apps ranked in a genre count as its members (genre 36, the
    App Store itself, ranks apps overall).

    OPTIONS:
    \(optionsHelp(declaredOptions))

    EXAMPLES:
      epf genres
      epf genres 6014 --country gb --limit 10
    """

    static let country = TextOption("country", "CC", "Storefront whose ranks are shown (ISO 3166 alpha-2).",
                                    shownDefault: QueryEngine.defaultCountry)
    static let limit = IntOption("limit", default: 50, range: 1...100_000, "At most N apps, 1 to 100000.")
    static let json = CommonOptions.json("Tree: [{\"genreId\", \"parentId\", \"name\", \"depth\"}]; with GENRE_ID: "
        + "{\"genre\", \"country\", \"total\", \"apps\": [{\"trackId\", \"trackName\", \"rank\", \"isPrimary\"}]}.")

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let path = try databasePath(&arguments)
        let country = try arguments.read(Self.country)
        let limit = try arguments.read(Self.limit)
        let json = arguments.read(Self.json)
        let positionals = try arguments.finish()
        guard positionals.count <= 1 else { throw UsageError("give at most one genre id") }
        let width = terminalWidth()
        if let text = positionals.first {
            guard let id = Int64(text), id >= 0 else { throw UsageError("'\(text)' is not a genre id") }
            let answer = try QueryCLI.run {
                try QueryEngine(databasePath: path).catalogue.genreApps(id: id, country: country, limit: limit)
            }
            guard let answer else {
                if json {
                    // As prices does for an unknown id: an answer beside the message and exit status 1.
                    QueryCLI.writeJSON(.object([("id", .int(id)), ("found", .bool(false)), ("genre", .null),
                                                ("country", country.map { .string($0) } ?? .null),
                                                ("total", .int(0)), ("apps", .array([]))]))
                    Output.shared.flush()
                }
                printError("epf genres: no genre \(id)")
                return .notFound
            }
            if json {
                QueryCLI.writeJSON(answer.json)
                return .ok
            }
            let ranks = answer.country.map { " ranked in \($0)" } ?? ""
            let heading = "\(answer.genre.id)  \(answer.genre.name): \(answer.total) apps\(ranks)"
            say(TerminalText.bold(TerminalText.truncate(heading, to: width)))
            printTable(header: ["RANK", "ID", "PRIMARY", "TITLE"], rows: answer.apps.map {
                [$0.rank.map { String($0) } ?? "-", String($0.id), $0.isPrimary ? "yes" : "", $0.title ?? ""]
            }, width: width, rightAligned: [0, 1], boldHeader: true)
            return .ok
        }
        let genres = try QueryCLI.run { try QueryEngine(databasePath: path).catalogue.genres() }
        if json {
            QueryCLI.writeJSON(.array(genres.map(\.json)))
            return .ok
        }
        guard !genres.isEmpty else {
            printError("epf genres: the database has no genres (genre table absent or empty)")
            return .notFound
        }
        let idWidth = genres.map { String($0.id).count }.max() ?? 1
        for genre in genres {
            let id = String(genre.id)
            let line = String(repeating: " ", count: idWidth - id.count) + id + "  "
                + String(repeating: "  ", count: genre.depth) + TerminalText.oneLine(genre.name)
            say(TerminalText.truncate(line, to: width))
        }
        return .ok
    }
}
