import EPFConcurrency
import EPFFormat
import EPFImport
import EPFPostgres
import EPFPostgresStore
import EPFQuery
import EPFSchema
import EPFSQLite
import EPFStore
import Foundation
import JSONText

/// Shows import progress: a live line per table on a terminal, a plain log line every few seconds otherwise.
/// The import calls `report` from a `@Sendable` callback: the time of the last log line is behind a Mutex.
final class ProgressPrinter: Sendable {
    private let live = isTerminal(STDERR_FILENO)
    private let lastLog = Mutex(Date.distantPast)
    private let quiet: Bool

    init(quiet: Bool) { self.quiet = quiet }

    func report(_ progress: ImportProgress) {
        guard !quiet else { return }
        let megabytes = Double(progress.bytes) / 1_000_000
        let rate = progress.elapsed > 0 ? megabytes / progress.elapsed : 0
        var text = "\(progress.table): \(progress.records) rows, "
            + String(format: "%.1f MB, %.1f MB/s", megabytes, rate)
        if progress.inputTotal > 0 && !progress.finished {
            let fraction = min(1, Double(progress.inputRead) / Double(progress.inputTotal))
            text += String(format: ", %.0f%%", fraction * 100)
            if fraction > 0.01 {
                let remaining = progress.elapsed / fraction - progress.elapsed
                text += String(format: ", ETA %.0fs", remaining)
            }
        }
        if live {
            let line = progress.finished ? "\r\u{1B}[K" + text + "\n" : "\r\u{1B}[K" + text
            FileHandle.standardError.write(Data(line.utf8))
        } else if lastLog.withLock({ lastLog in
            guard progress.finished || Date().timeIntervalSince(lastLog) >= 5 else { return false }
            lastLog = Date()
            return true
        }) {
            let stamp = ISO8601DateFormatter().string(from: Date())
            FileHandle.standardError.write(Data("\(stamp) \(text)\n".utf8))
        }
    }
}

/// Shared by `import` and `sync`: options, running, and the summary.
enum ImportRunner {
    /// The options `import` and `sync` share, each declared once.
    enum Options {
        static let only = TextOption("only", "REGEX", "Only tables whose name matches.")
        static let skip = TextOption("skip", "REGEX", "Skip tables whose name matches.")
        static let dryRun = Flag("dry-run", "Read and check everything; write nothing.")
        static let force = Flag("force", "Re-apply files the ledger says are already applied.")
        static let allowCountMismatch = Flag("allow-count-mismatch",
                                             "Accept tables whose rows differ from #recordsWritten (with a warning).")
        static let maxRejects = IntOption("max-rejects", default: 1000, range: 0...Int.max,
                                          "Refuse a table with more than N rejected rows.")
        static let rejectsDirectory = TextOption(
            "rejects-dir", "DIR", "Where rejects files go (created when needed). Default: <database>.rejects next to "
                + "a SQLite database; epf-<schema>.rejects in the current directory for PostgreSQL.")
        static let badValues = TextOption(
            "bad-values", "null|reject", default: BadValuePolicy.null.rawValue,
            "A value not of its column's type (junk like [123] in an integer column, a date it cannot read): "
                + "null stores NULL, keeps the row and lists the repair in the rejects file; reject rejects the row. "
                + "Junk in a key or export_date always rejects.")
        /// The older name of `--bad-values` (which now covers integers and decimals too); not listed in `--help`.
        static let badDates = TextOption("bad-dates", "null|reject", "The older name of --bad-values.")
        static let checkpointRecords = IntOption("checkpoint-records", default: 250_000, range: 1...100_000_000,
                                                 "Commit a full load every N records so a killed import resumes.")
        static let pageSize = IntOption("page-size", default: ImportOptions.defaultPageSize, range: 512...65536,
                                        "Page size of a database this import creates: 4096, 8192, 16384, 32768 "
                                            + "or 65536.")
        static let noDocuments = Flag("no-documents",
                                      "Do not rebuild the stored lookup documents (about 3 KB per app) after the "
                                          + "tables changed; app lookups then read the tables (slower, same answers).")
        static let noReadAhead = Flag("no-read-ahead",
                                      "Do not decompress the next .tbz while a table's indexes are built (read-ahead "
                                          + "keeps up to 16 MB in memory and, in the database's directory, a spill "
                                          + "file no bigger than that input).")
        static let noSpaceCheck = Flag("no-space-check",
                                       "Do not refuse (exit 73) when the database's filesystem has less free space "
                                           + "than the import is estimated to need (uncompressed input x 3, see "
                                           + "docs/import.md).")
        static let storefronts = TextOption(
            "storefronts", "LIST",
            "Keep only these storefronts' rows in every price and popularity table: ISO codes (us, gbr) or EPF "
                + "storefront ids (143441), comma-separated; 'all' keeps every storefront. Rows of other storefronts "
                + "are left out while parsing. The database remembers the selection: later imports apply it, and "
                + "one giving another is refused unless --force reloads a full export (docs/import.md).")
        static let languages = TextOption(
            "languages", "LIST",
            "Keep only these languages' rows in application_detail and the *_translation tables (en keeps EN, "
                + "en_GB ...), comma-separated; 'all' keeps every language. Remembered like --storefronts.")
        static let history = TextOption(
            "history", "prices|ranks|prices,ranks|none",
            "prices: record every actual price change (old and new price, storefront, export) in "
                + "epf_price_history, for epf prices --history and epf changes --kind price; ranks: record each "
                + "day's charts (every popularity table, storefront and genre); both comma-separated; each kind "
                + "asked is remembered by the database (a later --history adds to it) until --history none "
                + "(docs/import.md).")
        static let json = CommonOptions.json("Print the summary as JSON.")
        static let quiet = Flag("quiet", "No progress lines.")

        /// In the order `--help` lists them.
        static let listed: [any DeclaredOption] = [
            CommonOptions.importDatabase, CommonOptions.schema, only, skip, dryRun, force, allowCountMismatch,
            maxRejects, rejectsDirectory, badValues, storefronts, languages, history, checkpointRecords, pageSize, CommonOptions.decompressionThreads,
            noReadAhead, noDocuments, noSpaceCheck, json, quiet,
        ]
    }

    static func options(_ arguments: inout Arguments) throws -> ImportOptions {
        var options = ImportOptions()
        options.only = try arguments.read(Options.only)
        options.skip = try arguments.read(Options.skip)
        options.dryRun = arguments.read(Options.dryRun)
        options.force = arguments.read(Options.force)
        options.allowCountMismatch = arguments.read(Options.allowCountMismatch)
        options.maxRejects = try arguments.read(Options.maxRejects)
        if let directory = try arguments.read(Options.rejectsDirectory) {
            guard !directory.isEmpty else { throw UsageError("--rejects-dir needs a directory") }
            options.rejectsDirectory = directory
        }
        options.readOptions.decompressionThreads = try arguments.read(CommonOptions.decompressionThreads)
        options.checkpointRecords = try arguments.read(Options.checkpointRecords)
        if arguments.read(Options.noReadAhead) { options.readAhead = nil }
        if arguments.read(Options.noSpaceCheck) { options.spaceCheck = false }
        let pageSizes = [4096, 8192, 16384, 32768, 65536]
        options.pageSize = try arguments.read(Options.pageSize)
        guard pageSizes.contains(options.pageSize) else {
            throw UsageError("--page-size must be one of \(pageSizes.map(String.init).joined(separator: ", "))")
        }
        for option in [Options.badValues, Options.badDates] {
            guard let text = try arguments.read(option) else { continue }
            guard let policy = BadValuePolicy(rawValue: text) else {
                throw UsageError("--\(option.help.name) must be 'null' or 'reject', got '\(text)'")
            }
            options.badValues = policy
        }
        do {
            options.selectionRequest = try RowSelection.Request(storefronts: try arguments.read(Options.storefronts),
                                                                languages: try arguments.read(Options.languages))
            options.historyRequest = try PriceRecording.request(try arguments.read(Options.history))
        } catch let error as ImportError {
            throw UsageError(error.description)
        }
        return options
    }

    /// What `import` and `sync` both take: the database, the import options, the derived data to keep up to date
    /// (the lookup documents unless `--no-documents`) and how to print.
    struct Settings {
        var database: String
        /// The PostgreSQL schema (`--schema`), used when `database` is a postgresql:// URL.
        var schema: String
        var options: ImportOptions
        var derived: [any DerivedDataBuilder]
        var json: Bool
        var quiet: Bool
        /// Called with the report of a run that finished (sync's `--metrics-file` reads the rows per table).
        var observeReport: ((ImportReport) -> Void)?
    }

    static func settings(_ arguments: inout Arguments) throws -> Settings {
        Settings(database: try databasePath(&arguments, allowPostgres: true),
                 schema: try arguments.read(CommonOptions.schema) ?? PostgresTarget.defaultSchema,
                 options: try options(&arguments),
                 derived: arguments.read(Options.noDocuments) ? [] : [LookupDocuments()],
                 json: arguments.read(Options.json), quiet: arguments.read(Options.quiet))
    }

    static func run(paths: [String], settings: Settings) throws -> ExitCode {
        if PostgresURL.isPostgres(settings.database) {
            return try PostgresCLI.runImport(paths: paths, settings: settings)
        }
        let database = settings.database
        try DatabaseLocation.requireDirectory(forImportInto: database)
        return try runImporter(settings) { progress in
            let importer = try Importer(databasePath: database, options: settings.options, derived: settings.derived,
                                        progress: progress)
            return { try importer.run(paths: paths) }
        } storeFailure: { error in
            guard let sqlite = error as? SQLiteError else { return nil }
            // A file that is not a database, or one this user may not open: the code every command gives it, and
            // the error's own words, which name the file.
            if let code = ExitCode.forDatabaseFile(sqlite) {
                return CommandFailure(code, sqlite.path == nil ? "\(database): \(sqlite)" : "\(sqlite)")
            }
            return CommandFailure(.cannotCreate, "\(database): \(sqlite)")
        }
    }

    /// Runs an importer of either store with progress lines and the summary: `make` opens it (an `ImportError`
    /// there is a usage error) and returns its run; `storeFailure` names the store's own errors.
    static func runImporter(_ settings: Settings,
                            make: (@escaping @Sendable (ImportProgress) -> Void) throws -> () throws -> ImportReport,
                            storeFailure: (Error) -> CommandFailure?) throws -> ExitCode {
        let printer = ProgressPrinter(quiet: settings.quiet || settings.json && !isTerminal(STDERR_FILENO))
        let run: () throws -> ImportReport
        do {
            run = try make { printer.report($0) }
        } catch let error as ImportError {
            throw UsageError(error.description)
        }
        let report: ImportReport
        do {
            report = try run()
        } catch let error as ImportError {
            throw failure(error)
        } catch {
            throw storeFailure(error) ?? error
        }
        settings.observeReport?(report)
        return try finish(report, json: settings.json)
    }

    /// The CLI error for an import that could not run: 75 locked, 66 missing input, 64 usage, 73 I/O, 77 a
    /// database this user may not write.
    static func failure(_ error: ImportError) -> any Error {
        switch error {
        case .locked: return CommandFailure(.tempFail, error.description)
        case .missingInput, .noTables: return CommandFailure(.noInput, error.description)
        // Found once the database is open (a --storefronts the database contradicts): the message says what to
        // do, the usage text would bury it.
        case .badOption: return CommandFailure(.usage, error.description)
        case .io, .noSpace: return CommandFailure(.cannotCreate, error.description)
        // As every command answers a database this user may not read or write (`ExitCode.forDatabaseFile`).
        case .noPermission: return CommandFailure(.noPermission, error.description)
        }
    }

    /// Prints the report (JSON or the summary) and returns the exit status.
    static func finish(_ report: ImportReport, json: Bool) throws -> ExitCode {
        if json {
            ReportJSON.write(ReportJSON.importReport(report))
        } else {
            printSummary(report)
        }
        if let stop = report.stopped {
            printError("error: \(stop.message)")
            return .cannotCreate
        }
        return report.succeeded ? .ok : .dataError
    }

    /// "phases: reading 1.2 s, inserting 3.4 s, ...": reading and inserting always (every applied table has
    /// them), the other phases only when they took time (0.05 s or more), so an import without price or rank
    /// history, lookup documents or index builds does not name them (the history phases are timed only around
    /// a recorder, so without one they are 0).
    static func phasesLine(_ phases: PhaseTimes) -> String {
        let optional: [(String, Double)] = [
            ("indexes", phases.indexes), ("committing", phases.committing), ("search index", phases.searchIndex),
            ("lookup documents", phases.lookupDocuments), ("checkpoint", phases.checkpoint),
        ]
        let parts = [("reading", phases.reading), ("inserting", phases.inserting)]
            + optional.filter { $0.1 >= 0.05 } + [("other", phases.other)]
        var line = "phases: " + parts.map { String(format: "%@ %.1f s", $0.0, $0.1) }.joined(separator: ", ")
        let history = [("price history", phases.priceHistory), ("rank history", phases.rankHistory)]
            .filter { $0.1 >= 0.05 }
        if !history.isEmpty {
            line += " (" + history.map { String(format: "%@ %.1f s", $0.0, $0.1) }.joined(separator: ", ")
                + " of committing)"
        }
        return line
    }

    /// At most this many input files the ledger shows applied are named one per line; more are one line.
    static let namedUnchangedSources = 3

    /// The lines for the input files the ledger shows applied: each named when few, else one line that counts
    /// them, so a nightly run with nothing to do says so in a line (`--json` lists them all).
    static func unchangedLines(_ sources: [String]) -> [String] {
        if sources.count > namedUnchangedSources {
            return ["unchanged  \(sources.count) files already applied (--force applies them again)"]
        }
        return sources.map { "unchanged  \($0) (already applied; --force applies it again)" }
    }

    static func printSummary(_ report: ImportReport) {
        for line in unchangedLines(report.unchangedSources) { say(line) }
        let rows = report.outcomes.map { outcome -> [String] in
            [outcome.status.rawValue, outcome.table, outcome.mode ?? "-", "\(outcome.records)", "\(outcome.rows)",
             "\(outcome.rejects)", "\(outcome.repaired)", "\(outcome.duplicates)",
             String(format: "%.2f", outcome.seconds),
             outcome.records > 0 ? String(format: "%.0f", outcome.rowsPerSecond) : "-"]
        } + report.failedFiles.map { file in
            ["failed", file.path, "-", "-", "-", "-", "-", "-", "-", "-"]
        }
        if !rows.isEmpty {
            printTable(header: ["status", "table", "mode", "records", "rows", "rejects", "repaired", "dupes",
                                "seconds", "rows/s"],
                       rows: rows, rightAligned: [3, 4, 5, 6, 7, 8, 9],
                       priorities: [0, 0, 1, 3, 0, 1, 2, 3, 2, 4])
        }
        for outcome in report.outcomes where outcome.leftOut > 0 {
            say("left out  \(outcome.table): \(outcome.leftOut) records of storefronts or languages the database "
                + "does not keep")
        }
        for outcome in report.outcomes {
            for warning in outcome.warnings { printError("warning: \(outcome.table): \(warning)") }
            if let file = outcome.rejectsFile {
                var counts = ["\(outcome.rejects) rejected"]
                if outcome.repaired > 0 { counts.append("\(outcome.repaired) repaired (values stored as NULL)") }
                printError("rejects: \(outcome.table): \(counts.joined(separator: ", ")) in \(file)")
            }
            if outcome.status == .unchanged || outcome.status == .superseded, let message = outcome.message {
                printError("note: \(outcome.table) not applied, \(message)")
            }
            if outcome.status == .failed, outcome.noRoom == nil {
                let kept = outcome.heldNothing == true ? "the database holds none of it yet"
                    : "previous data kept"
                printError("error: \(outcome.table) NOT applied, \(kept): \(outcome.message ?? "")")
            }
        }
        for derived in report.derived {
            say(String(format: "rebuilt  %@: %d items in %.1f s", derived.name, derived.items, derived.seconds))
        }
        for error in report.fileErrors { printError("error: \(error)") }
        if report.outcomes.contains(where: { $0.status == .applied }) { say(phasesLine(report.phases)) }
        let applied = report.outcomes.filter { $0.status == .applied }.count
        let failed = report.outcomes.filter { $0.status == .failed }.count + report.fileErrors.count
        let unchanged = report.unchangedSources.count + report.outcomes.filter { $0.status == .unchanged }.count
        let superseded = report.outcomes.filter { $0.status == .superseded }.count
        say(String(format: "%d applied, %d failed, %d unchanged", applied, failed, unchanged)
            + (superseded > 0 ? ", \(superseded) superseded" : "")
            + String(format: " in %.1f s -> %@", report.seconds, report.database))
    }
}
