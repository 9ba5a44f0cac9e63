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
      --apps N                 apps in the full export, 100 ... 10000000 (default 300)
      --scale F                a fraction of Apple's real weekly export (1/16, 0.0625 or 6.25%):
                               2,000,000 x F apps, each priced in Apple's 175 real storefronts
                               (real ids, ISO codes, currencies), ~3 application_detail rows per
                               app, popularity in every storefront, no music tables (gone since
                               2025); incrementals change 3% of apps and of prices per day.
                               Not with --apps or --price-storefronts.
      --seed S                 seed of every random choice (default 1)
      --layout L               v3 (plain files, default), v3-archive (itunes<date>.tbz + .md5),
                               v5 (one <table>.tbz + .md5 per table)
      --incremental            write the incremental export --day days after the full (cumulative)
      --day N                  incremental day, 1 ... 366 (default 1)
      --week N                 a later full export, N weeks after the first (0 ... 52): apps changed
                               and added up to then, ~1% of the apps removed each week
      --export-date YYYY-MM-DD date of the full export (default 2026-01-05)
      --price-storefronts N    storefronts each app has a price in (default 20)
      --dirt                   inject the damage of real feeds at known places; writes dirt<date>.json
      --only TABLE,...         write only these tables
      --gzip                   gzip each table file (v3 only)
      --threads N              tables written at once, 1 ... 64 (default 2; output is identical)
      --json                   print a JSON report instead of a table

    EXAMPLES:
      epf generate /tmp/feed
      epf generate /tmp/feed --apps 1000000                     # ~GBs of plain v3 files, for benchmarks
      epf generate /tmp/feed --incremental --day 2              # the incremental two days after the full
      epf generate /tmp/feed --week 1                           # the next weekly full (removals)
      epf generate /tmp/feed --layout v5 --dirt --only application,application_price
      epf generate /tmp/feed --layout v5 --scale 1/16           # ~1/16 of Apple's weekly full, as .tbz
      epf generate /tmp/feed --layout v5 --scale 1/16 --incremental --day 1
    """

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        var options = GeneratorOptions()
        let appsGiven = try arguments.option("apps")
        if let appsGiven {
            guard let count = Int(appsGiven), (100...10_000_000).contains(count) else {
                throw UsageError("--apps must be a whole number from 100 to 10000000, got '\(appsGiven)'")
            }
            options.apps = count
        }
        let priceStorefronts = try arguments.option("price-storefronts")
        if let text = try arguments.option("scale") {
            guard let fraction = GeneratorOptions.fraction(text) else {
                throw UsageError("--scale must be a fraction like 1/16, 0.0625 or 6.25%, got '\(text)'")
            }
            guard appsGiven == nil, priceStorefronts == nil else {
                throw UsageError("--scale sets the apps and storefronts; leave out --apps and --price-storefronts")
            }
            options.setScale(fraction)
        }
        if let seed = try arguments.option("seed") {
            guard let value = UInt64(seed) else {
                throw UsageError("--seed must be a whole number >= 0, got '\(seed)'")
            }
            options.seed = value
        }
        if let layout = try arguments.option("layout") {
            guard let value = FeedLayout(rawValue: layout) else {
                throw UsageError("--layout must be v3, v3-archive or v5, got '\(layout)'")
            }
            options.layout = value
        }
        if arguments.flag("incremental") { options.mode = .incremental }
        options.day = try arguments.intOption("day", default: 1, range: 1...366)
        options.week = try arguments.intOption("week", default: 0, range: 0...52)
        if options.week > 0 && options.mode == .incremental { throw UsageError("--week is for full exports") }
        if let date = try arguments.option("export-date") {
            guard let milliseconds = GeneratorOptions.milliseconds(date: date) else {
                throw UsageError("--export-date must be a date like 2026-01-05, got '\(date)'")
            }
            options.fullExportDate = milliseconds
        }
        if let priceStorefronts {
            let range = 1...Reference.storefronts.count
            guard let count = Int(priceStorefronts), range.contains(count) else {
                throw UsageError("--price-storefronts must be a whole number from 1 to \(range.upperBound), "
                                 + "got '\(priceStorefronts)'")
            }
            options.priceStorefronts = count
        }
        options.dirt = arguments.flag("dirt")
        options.gzip = arguments.flag("gzip")
        options.threads = try arguments.intOption("threads", default: 2, range: 1...64)
        if let only = try arguments.option("only") {
            let names = Set(only.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            for name in names where TableSchema.named(name) == nil {
                throw UsageError("--only: unknown table '\(name)'; known: "
                    + TableSchema.all.map(\.name).joined(separator: ", "))
            }
            options.tables = names
        }
        let json = arguments.flag("json")
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
        struct Report: Encodable {
            let exportDate: Int64
            let mode: String
            let layout: String
            let apps: Int
            let seed: UInt64
            let scale: Double?
            let seconds: Double
            let uncompressedBytes: Int64
            let tables: [GeneratedTable]
            let files: [GeneratedFile]
            let dirtManifest: String?
            let dirt: [DirtEntry]
        }
        let report = Report(exportDate: feed.options.exportDate, mode: feed.options.mode.rawValue,
                            layout: feed.options.layout.rawValue, apps: feed.options.apps, seed: feed.options.seed,
                            scale: feed.options.scale, seconds: feed.seconds, uncompressedBytes: feed.uncompressedBytes, tables: feed.tables,
                            files: feed.files, dirtManifest: feed.manifest?.path, dirt: feed.dirt)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        say(String(decoding: try encoder.encode(report), as: UTF8.self))
    }
}

private extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
