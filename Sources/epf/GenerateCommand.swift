import EPFFormat
import EPFGenerator
import Foundation

/// `epf generate`: writes a deterministic synthetic EPF feed for tests and benchmarks.
enum GenerateCommand: Command {
    static let name = "generate"
    static let summary = "Write a synthetic, deterministic EPF feed (tests, benchmarks)"
    static let help = """
    USAGE: epf generate OUT_DIR [options]

    Writes the itunes, pricing and popularity feeds of one export into OUT_DIR, named as Apple names
    them (itunes20260105/application, pricing20260105/application_price, ...). The same options always
    give the same bytes. Apps 0-7 have fixed titles ("Café Olé Lite", "日本語のゲーム", ...).

    OPTIONS:
    \(optionsHelp(declaredOptions))

    EXAMPLES:
      epf generate feed
      epf generate feed --apps 1000000                          # ~GBs of plain v3 files, for benchmarks
      epf generate feed --incremental --day 2                   # the incremental two days after the full
      epf generate feed --week 1                                # the next weekly full (removals)
      epf generate feed --layout v5 --dirt --only application,application_price
      epf generate feed --layout v5 --scale 1/16                # ~1/16 of Apple's weekly full, as .tbz
      epf generate feed --layout v5 --scale 1/16 --incremental --day 1
    """

    /// Every option of `epf generate`, declared once; the defaults shown are the generator's.
    enum Options {
        private static let defaults = GeneratorOptions()

        static let apps = IntOption("apps", default: defaults.apps, range: 100...10_000_000,
                                    "Apps in the full export, 100 ... 10000000.")
        static let scale = TextOption("scale", "F",
                                      "A fraction of Apple's real weekly export (1/16, 0.0625 or 6.25%): "
                                          + "2,000,000 x F apps, each priced in Apple's 175 real storefronts (real "
                                          + "ids, ISO codes, currencies), ~3 application_detail rows per app, "
                                          + "popularity in every storefront, no music tables (gone since 2025); "
                                          + "incrementals change 3% of apps and of prices per day. Not with --apps "
                                          + "or --price-storefronts.")
        static let seed = TextOption("seed", "S", default: String(defaults.seed), "Seed of every random choice.")
        static let layout = TextOption("layout", "L", default: defaults.layout.rawValue,
                                       "v3 (plain files), v3-archive (itunes<date>.tbz + .md5) or v5 (one "
                                           + "<table>.tbz + .md5 per table).",
                                       choices: FeedLayout.allCases.map(\.rawValue))
        static let incremental = Flag("incremental",
                                      "Write the incremental export --day days after the full (cumulative).")
        static let day = IntOption("day", default: defaults.day, range: 1...366, "Incremental day, 1 ... 366.")
        static let week = IntOption("week", default: defaults.week, range: 0...52,
                                    "A later full export, N weeks after the first (0 ... 52): apps changed and added "
                                        + "up to then, ~1% of the apps removed each week.")
        static let exportDate = TextOption("export-date", "YYYY-MM-DD",
                                           default: String(EPFValues.isoTimestamp(
                                               milliseconds: defaults.fullExportDate).prefix(10)),
                                           "Date of the full export.")
        static let priceStorefronts = IntOption("price-storefronts", default: defaults.priceStorefronts,
                                                range: 1...Reference.storefronts.count,
                                                "Storefronts each app has a price in.")
        static let dirt = Flag("dirt", "Inject the damage of real feeds at known places; writes dirt<date>.json.")
        static let match = Flag("match", "Also write the match feed (match<date>: UPCs, ISRCs, AMG ids).")
        static let only = TextOption("only", "TABLE,...", "Write only these tables.")
        static let gzip = Flag("gzip", "Gzip each table file (v3 only).")
        static let threads = IntOption("threads", default: defaults.threads, range: 1...64,
                                       "Tables written at once, 1 ... 64; the output is identical.")
        static let json = CommonOptions.json("Print a JSON report instead of a table.")

        /// In the order `--help` lists them.
        static let listed: [any DeclaredOption] = [
            apps, scale, seed, layout, incremental, day, week, exportDate, priceStorefronts, dirt, match, only, gzip,
            threads, json,
        ]
    }

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        var options = GeneratorOptions()
        // --scale sets the apps and storefronts itself, so those two are read only when given.
        let appsGiven = try arguments.option(Options.apps.help.name)
        if let appsGiven {
            options.apps = try Options.apps.value(appsGiven)
        }
        let priceStorefronts = try arguments.option(Options.priceStorefronts.help.name)
        if let text = try arguments.read(Options.scale) {
            guard let fraction = GeneratorOptions.fraction(text) else {
                throw UsageError("--scale must be a fraction like 1/16, 0.0625 or 6.25%, got '\(text)'")
            }
            guard appsGiven == nil, priceStorefronts == nil else {
                throw UsageError("--scale sets the apps and storefronts; leave out --apps and --price-storefronts")
            }
            options.setScale(fraction)
        }
        if let seed = try arguments.read(Options.seed) {
            guard let value = UInt64(seed) else {
                throw UsageError("--seed must be a whole number >= 0, got '\(seed)'")
            }
            options.seed = value
        }
        if let layout = try arguments.read(Options.layout) {
            guard let value = FeedLayout(rawValue: layout) else {
                throw UsageError("--layout must be v3, v3-archive or v5, got '\(layout)'")
            }
            options.layout = value
        }
        if arguments.read(Options.incremental) { options.mode = .incremental }
        options.day = try arguments.read(Options.day)
        options.week = try arguments.read(Options.week)
        if options.week > 0 && options.mode == .incremental { throw UsageError("--week is for full exports") }
        if let date = try arguments.read(Options.exportDate) {
            guard let milliseconds = GeneratorOptions.milliseconds(date: date) else {
                throw UsageError("--export-date must be a date like 2026-01-05, got '\(date)'")
            }
            options.fullExportDate = milliseconds
        }
        if let priceStorefronts {
            options.priceStorefronts = try Options.priceStorefronts.value(priceStorefronts)
        }
        options.dirt = arguments.read(Options.dirt)
        options.gzip = arguments.read(Options.gzip)
        options.match = arguments.read(Options.match)
        options.threads = try arguments.read(Options.threads)
        if let only = try arguments.read(Options.only) {
            let names = Set(only.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            for name in names where GeneratedTables.named(name) == nil {
                throw UsageError("--only: unknown table '\(name)'; known: "
                    + GeneratedTables.all.map(\.name).joined(separator: ", "))
            }
            options.tables = names
        }
        let json = arguments.read(Options.json)
        let positionals = try arguments.finish()
        guard positionals.count == 1, let output = positionals.first else {
            throw UsageError("expected exactly one OUT_DIR, got \(positionals.count) arguments")
        }
        do {
            try options.validate()
        } catch let error as GeneratorError {
            throw UsageError(error.description)
        }
        let feed: GeneratedFeed
        do {
            feed = try FeedGenerator.write(options, to: URL(fileURLWithPath: output))
        } catch let error as GeneratorError {
            throw CommandFailure(.cannotCreate, error.description)
        }
        if json { try printJSON(feed) } else { printTable(feed) }
        return .ok
    }

    private static func megabytes(_ bytes: Int64) -> String { String(format: "%.1f", Double(bytes) / 1_000_000) }

    private static func printTable(_ feed: GeneratedFeed) {
        let options = feed.options
        say("\(options.mode == .full ? "full" : "incremental day \(options.day)") export \(options.dateStamp), "
            + "\(options.apps) apps, seed \(options.seed), layout \(options.layout.rawValue)")
        for table in feed.tables {
            let name = table.table.padding(toLength: 34, withPad: " ", startingAt: 0)
            let rows = String(table.rows).leftPadded(12)
            say("  \(name)\(rows) rows \(megabytes(table.bytes).leftPadded(10)) MB  \(table.member ?? table.path)")
        }
        for file in feed.files where file.table == nil || file.md5 != nil {
            say("  wrote \(file.path) (\(megabytes(file.bytes)) MB)")
        }
        if let manifest = feed.manifest { say("  dirt: \(feed.dirt.count) entries in \(manifest.path)") }
        let seconds = max(feed.seconds, 0.000_001)
        let rate = Double(feed.uncompressedBytes) / 1_000_000 / seconds
        say("total \(feed.tables.reduce(0) { $0 + $1.rows }) rows, \(megabytes(feed.uncompressedBytes)) MB "
            + "uncompressed in \(String(format: "%.2f", feed.seconds)) s (\(String(format: "%.0f", rate)) MB/s)")
    }

    private static func printJSON(_ feed: GeneratedFeed) throws {
        ReportJSON.write(ReportJSON.generatedFeed(feed))
    }
}

private extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
