import EPFFormat
import EPFPostgres
import EPFQuery
import EPFStore
import Foundation
import JSONText

/// Shows import progress: a live line per table on a terminal, a plain log line every few seconds otherwise.
final class ProgressPrinter: @unchecked Sendable {
    private let live = isTerminal(STDERR_FILENO)
    private var lastLog = Date.distantPast
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
        } else if progress.finished || Date().timeIntervalSince(lastLog) >= 5 {
            lastLog = Date()
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
        static let pageSize = IntOption("page-size", default: StoreDatabase.defaultPageSize, range: 512...65536,
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
        static let json = CommonOptions.json("Print the summary as JSON.")
        static let quiet = Flag("quiet", "No progress lines.")

        /// In the order `--help` lists them.
        static let listed: [any DeclaredOption] = [
            CommonOptions.importDatabase, CommonOptions.schema, only, skip, dryRun, force, allowCountMismatch,
            maxRejects, rejectsDirectory, badValues, checkpointRecords, pageSize, CommonOptions.decompressionThreads,
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
        return try runImporter(settings) { progress in
            let importer = try Importer(databasePath: database, options: settings.options, derived: settings.derived,
                                        progress: progress)
            return { try importer.run(paths: paths) }
        } storeFailure: { error in
            (error as? SQLiteError).map { CommandFailure(.cannotCreate, "\(database): \($0)") }
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
        return try finish(report, json: settings.json)
    }

    /// The CLI error for an import that could not run: 75 locked, 66 missing input, 64 usage, 73 I/O.
    static func failure(_ error: ImportError) -> any Error {
        switch error {
        case .locked: return CommandFailure(.tempFail, error.description)
        case .missingInput, .noTables: return CommandFailure(.noInput, error.description)
        case .badOption: return UsageError(error.description)
        case .io, .noSpace: return CommandFailure(.cannotCreate, error.description)
        }
    }

    /// Prints the report (JSON or the summary) and returns the exit status.
    static func finish(_ report: ImportReport, json: Bool) throws -> ExitCode {
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let data = try encoder.encode(report)
            Output.shared.write(String(decoding: data, as: UTF8.self) + "\n")
        } else {
            printSummary(report)
        }
        if let stop = report.stopped {
            printError("error: \(stop.message)")
            return .cannotCreate
        }
        return report.succeeded ? .ok : .dataError
    }

    static func printSummary(_ report: ImportReport) {
        for source in report.unchangedSources {
            say("unchanged  \(source) (already applied; --force to apply again)")
        }
        let rows = report.outcomes.map { outcome -> [String] in
            [outcome.status.rawValue, outcome.table, outcome.mode ?? "-", "\(outcome.records)", "\(outcome.rows)",
             "\(outcome.rejects)", "\(outcome.repaired)", "\(outcome.duplicates)",
             String(format: "%.2f", outcome.seconds),
             outcome.records > 0 ? String(format: "%.0f", outcome.rowsPerSecond) : "-"]
        }
        if !rows.isEmpty {
            printTable(header: ["status", "table", "mode", "records", "rows", "rejects", "repaired", "dupes",
                                "seconds", "rows/s"],
                       rows: rows, rightAligned: [3, 4, 5, 6, 7, 8, 9])
        }
        for outcome in report.outcomes {
            for warning in outcome.warnings { printError("warning: \(outcome.table): \(warning)") }
            if let file = outcome.rejectsFile {
                var counts = ["\(outcome.rejects) rejected"]
                if outcome.repaired > 0 { counts.append("\(outcome.repaired) repaired (values stored as NULL)") }
                printError("rejects: \(outcome.table): \(counts.joined(separator: ", ")) in \(file)")
            }
            if outcome.status == .failed, outcome.noRoom == nil {
                printError("error: \(outcome.table) NOT applied, previous data kept: \(outcome.message ?? "")")
            }
        }
        for derived in report.derived {
            say(String(format: "rebuilt  %@: %d items in %.1f s", derived.name, derived.items, derived.seconds))
        }
        for error in report.fileErrors { printError("error: \(error)") }
        let phases = report.phases
        if report.outcomes.contains(where: { $0.status == .applied }) {
            say(String(format: "phases: reading %.1f s, inserting %.1f s, indexes %.1f s, committing %.1f s, "
                       + "search index %.1f s, lookup documents %.1f s, checkpoint %.1f s, other %.1f s",
                       phases.reading, phases.inserting, phases.indexes, phases.committing, phases.searchIndex,
                       phases.lookupDocuments, phases.checkpoint, phases.other))
        }
        let applied = report.outcomes.filter { $0.status == .applied }.count
        let failed = report.outcomes.filter { $0.status == .failed }.count + report.fileErrors.count
        say(String(format: "%d applied, %d failed, %d unchanged in %.1f s -> %@", applied, failed,
                   report.unchangedSources.count + report.outcomes.filter { $0.status == .unchanged }.count,
                   report.seconds, report.database))
    }
}

/// `epf import`: applies feed files to the database.
enum ImportCommand: Command {
    static let name = "import"
    static let summary = "Load EPF files (full or incremental) into the database, verified and atomic"
    static let help = """
    USAGE: epf import PATH... [--db FILE] [options]

    Applies each PATH (a table file, .gz, .tbz archive, or a v3/v4/v5 feed directory) in export-date order, full
    exports before incrementals. A FULL table is built aside and swapped in atomically; an INCREMENTAL upserts by
    primary key and never replaces a row with an older export_date. A table whose row count differs from
    #recordsWritten, whose file is truncated or whose .md5 does not match is not applied: the old data stays.
    Bad rows go to <db>.rejects/. A killed import resumes from its last checkpoint when run again; re-running a
    finished import is a no-op.

    OPTIONS:
    \(optionsHelp(ImportRunner.Options.listed))

    EXIT STATUS:
      0 all applied; 65 some tables not applied (the rest were); 66 missing input; 64 usage; 73 not enough space
      (refused before writing, or stopped at the first write that found no room: the table being written keeps
      its previous data; run again once there is space); 75 another import is running on the database.

    EXAMPLES:
      epf import feeds/itunes20260105 feeds/pricing20260105 --db epf.sqlite
      epf import /mirror/20260105/itunes20260105.tbz --only '^application'
      epf import feeds/incremental/20260106/itunes20260106 --json
      epf import feeds/itunes20260105 --dry-run
    """

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let settings = try ImportRunner.settings(&arguments)
        let paths = try arguments.finish()
        guard !paths.isEmpty else { throw UsageError("give at least one PATH to import") }
        return try ImportRunner.run(paths: paths, settings: settings)
    }
}

/// `epf sync`: applies what is missing from a local mirror of Apple's EPF tree.
enum SyncCommand: Command {
    static let name = "sync"
    static let summary = "Apply the newest full export and its incrementals from a mirror (for cron)"
    static let help = """
    USAGE: epf sync ROOT [--db FILE] [options]

    ROOT is a local mirror of Apple's EPF tree: dated full exports (YYYYMMDD/ directories holding
    itunesYYYYMMDD.tbz and the other feeds, or itunesYYYYMMDD entries directly in ROOT) with incremental/YYYYMMDD/
    below. sync finds the newest full export and the incrementals after it, skips what the ledger shows applied,
    applies the rest in order, and prints what it did. Safe to run every hour.

    OPTIONS:
    \(optionsHelp([planOnly] + ImportRunner.Options.listed))

    EXAMPLES:
      epf sync /srv/epf-mirror --db /srv/epf/epf.sqlite
      epf sync /srv/epf-mirror --plan
    """

    static let planOnly = Flag("plan", "Only print what would be applied, in order.")

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let settings = try ImportRunner.settings(&arguments)
        let planOnly = arguments.read(Self.planOnly)
        let positionals = try arguments.finish()
        guard positionals.count == 1, let root = positionals.first else { throw UsageError("give exactly one ROOT") }
        let plan: SyncPlan
        do {
            plan = try SyncPlan.read(root: root)
        } catch let error as ImportError {
            // A mirror without a full export, or unreadable, is missing input either way.
            throw CommandFailure(.noInput, error.description)
        }
        if planOnly || !settings.quiet {
            say("full \(plan.fullDate): \(plan.fullPaths.joined(separator: ", "))")
            for incremental in plan.incrementals {
                say("incremental \(incremental.date): \(incremental.paths.joined(separator: ", "))")
            }
        }
        if planOnly { return .ok }
        return try ImportRunner.run(paths: plan.orderedPaths, settings: settings)
    }
}

/// `epf status`: what the database holds.
enum StatusCommand: Command {
    static let name = "status"
    static let summary = "Tables, row counts, export dates, last imports, database size"
    static let help = """
    USAGE: epf status [--db FILE|URL] [--schema NAME] [--json] [--imports N]

    With a postgresql:// URL, reports the tables and ledger of the schema (default epf).

    OPTIONS:
    \(optionsHelp([CommonOptions.importDatabase, CommonOptions.schema, json, imports]))

    EXAMPLES:
      epf status
      epf status --db /srv/epf/epf.sqlite --json
      epf status --db postgresql://epf@db.internal/analytics --schema epf
    """

    static let json = CommonOptions.json("Print the status as JSON (the same keys as /v1/status).")
    static let imports = IntOption("imports", default: 10, range: 0...10_000, "List the last N imports.")

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let database = try databasePath(&arguments, allowPostgres: true)
        let schema = try arguments.read(CommonOptions.schema) ?? PostgresTarget.defaultSchema
        let json = arguments.read(Self.json)
        let count = try arguments.read(imports)
        _ = try arguments.finish()
        if PostgresURL.isPostgres(database) {
            let status = try PostgresCLI.status(url: database, schema: schema, lastImports: count)
            return try show(status, json: json)
        }
        guard FileManager.default.fileExists(atPath: database) else {
            throw CommandFailure(.noInput, "\(database): no database here. Create it with: "
                                 + "epf import <feed directory or file> --db \(database)")
        }
        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        let status = try StoreStatus.read(connection, databasePath: database, lastImports: count)
        return try show(status, json: json)
    }

    /// Prints a status (the same for SQLite and PostgreSQL).
    static func show(_ status: StoreStatus, json: Bool) throws -> ExitCode {
        let database = status.database
        if status.tables.isEmpty {
            throw CommandFailure(.noInput, "\(database) holds no EPF tables. Load some with: "
                                 + "epf import <feed directory or file> --db \(database)")
        }
        if json {
            Output.shared.write(status.json().prettyText + "\n")
            return .ok
        }
        say("database: \(database) (\(String(format: "%.1f", Double(status.sizeBytes) / 1_000_000)) MB)")
        if let exportDate = status.exportDate {
            say("data as of: \(EPFValues.isoTimestamp(milliseconds: exportDate))")
        }
        say()
        printTable(header: ["table", "rows", "export date", "mode", "updated"], rows: status.tables.map { table in
            [table.name, "\(table.rows)", table.exportDate.map { EPFValues.isoTimestamp(milliseconds: $0) } ?? "-",
             table.mode ?? "-", table.updated ?? "-"]
        }, rightAligned: [1])
        if let mixed = status.mixedExports {
            say()
            for line in mixed.lines { say(line) }
            say()
        }
        for derived in status.derived {
            let state = derived.current ? "current" : "stale (tables changed since; rebuilt by the next epf import)"
            say("\(derived.name.replacingOccurrences(of: "_", with: " ")): \(state), built \(derived.built ?? "-")")
        }
        if !status.lastImports.isEmpty {
            say()
            say("last imports:")
            printTable(header: ["finished", "outcome", "table", "mode", "rows", "rejects", "repaired", "dupes",
                                "location"],
                       rows: status.lastImports.map { entry in
                [entry.finished ?? "-", entry.outcome, entry.table, entry.mode ?? "-", "\(entry.rows)",
                 "\(entry.rejects)", "\(entry.repaired)", "\(entry.duplicates)", entry.location]
            }, rightAligned: [4, 5, 6, 7])
        }
        return .ok
    }
}
