import EPFPostgresStore

// The options each command reads, in the order `--help` lists them: the one list that `--help`, the man pages
// (`epf help --man DIR`) and the shell completions (`epf completions bash|zsh`) are rendered from. A command whose
// help text still writes its OPTIONS block by hand declares them here for the man page and completions; a test
// compares every list with the options `epf COMMAND --help` shows.

extension InspectCommand {
    static var declaredOptions: [any DeclaredOption] { [json, samples, CommonOptions.decompressionThreads] }
}

extension ImportCommand {
    static var declaredOptions: [any DeclaredOption] { ImportRunner.Options.listed }
}

extension FetchCommand {
    static var declaredOptions: [any DeclaredOption] { Options.listed + [JobMetrics.fileOption] }
}

extension SyncCommand {
    static var declaredOptions: [any DeclaredOption] {
        [planOnly] + ImportRunner.Options.listed + [JobMetrics.fileOption]
    }
}

extension StatusCommand {
    static var declaredOptions: [any DeclaredOption] {
        [CommonOptions.importDatabase, CommonOptions.schema, json, imports]
    }
}

extension LookupCommand {
    static var declaredOptions: [any DeclaredOption] { [country, language, json, CommonOptions.database] }
}

extension ChangesCommand {
    static var declaredOptions: [any DeclaredOption] {
        [since, kind, country, drops, chart, genre, top, moved, json, csv, CommonOptions.database]
    }
}

extension SearchCommand {
    static var declaredOptions: [any DeclaredOption] { [entity, country, limit, json, CommonOptions.database] }
}

extension PricesCommand {
    static var declaredOptions: [any DeclaredOption] { [history, country, since, json, CommonOptions.database] }
}

extension GenresCommand {
    static var declaredOptions: [any DeclaredOption] { [country, limit, json, CommonOptions.database] }
}

extension ChartsCommand {
    static var declaredOptions: [any DeclaredOption] {
        [country, chart, genre, limit, date, json, CommonOptions.database]
    }
}

extension RanksCommand {
    static var declaredOptions: [any DeclaredOption] { [country, chart, genre, since, json, CommonOptions.database] }
}

extension StorefrontsCommand {
    static var declaredOptions: [any DeclaredOption] { [json, CommonOptions.database] }
}

extension SQLCommand {
    static var declaredOptions: [any DeclaredOption] { [csv, json, CommonOptions.database] }
}

extension ServeCommand {
    static var declaredOptions: [any DeclaredOption] { Options.listed }
}

extension GenerateCommand {
    static var declaredOptions: [any DeclaredOption] { Options.listed }
}
