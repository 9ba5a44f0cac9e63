import EPFFormat
import EPFImport
import EPFPostgres
import EPFPostgresStore
import EPFQuery
import EPFSQLite
import EPFStore
import Foundation
import JSONText

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
      epf status --db epf.sqlite --json
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
            throw CommandFailure(.noInput, QueryCLI.message(.databaseMissing(path: database)))
        }
        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        let status = try StoreStatus.read(connection, databasePath: database, lastImports: count)
        return try show(status, json: json)
    }

    /// Prints a status (the same for SQLite and PostgreSQL).
    static func show(_ status: StoreStatus, json: Bool) throws -> ExitCode {
        let database = status.database
        if status.tables.isEmpty {
            // Still say what the ledger holds (refused imports) to a script reading --json, then fail as before.
            if json { Output.shared.write(status.json().prettyText + "\n") }
            if !status.failures.isEmpty {
                printError("\(status.failures.count) failed file\(status.failures.count == 1 ? "" : "s") not "
                           + "applied since:")
                for failure in status.failures.prefix(10) { printError(failure.line) }
            }
            if status.importRunning { throw QueryCLI.importRunning(database) }
            throw CommandFailure(.noInput, QueryCLI.message(.databaseEmpty(path: database)))
        }
        if json {
            Output.shared.write(status.json().prettyText + "\n")
            return .ok
        }
        say("database: \(database) (\(String(format: "%.1f", Double(status.sizeBytes) / 1_000_000)) MB)")
        if let asOf = status.dataAsOf {
            let line = "data as of: \(EPFValues.isoTimestamp(milliseconds: asOf))"
            var notes: [String] = []
            if let newest = status.exportDate, newest != asOf {
                notes.append("some tables at \(EPFValues.isoTimestamp(milliseconds: newest)); held back by what is "
                             + "listed below")
            }
            if !status.missing.isEmpty {
                notes.append("incomplete: nothing held yet of \(status.missing.joined(separator: ", ")); see the "
                             + "failures below")
            }
            if !status.incrementalOnly.isEmpty {
                let names = status.incrementalOnly
                notes.append("partial: \(names.joined(separator: ", ")) hold\(names.count == 1 ? "s" : "") only what "
                             + "incrementals changed (applied with --force, no full export)")
            }
            say(line + (notes.isEmpty ? "" : " (\(notes.joined(separator: "; ")))"))
        }
        if status.importRunning {
            say("import running: an import holds the lock now; the tables below are what it has committed so far")
        }
        say()
        printTable(header: ["table", "rows", "export date", "mode", "updated"], rows: status.tables.map { table in
            [table.name, "\(table.rows)", table.exportDate.map { EPFValues.isoTimestamp(milliseconds: $0) } ?? "-",
             table.mode ?? "-", table.updated ?? "-"]
        }, rightAligned: [1], priorities: [0, 0, 0, 1, 2])
        for line in retiredLines(status.retired) { say(line) }
        if !status.selection.keepsEverything {
            say()
            say("keeps only: storefronts \(RowSelection.describe(status.selection.storefronts)); languages "
                + "\(RowSelection.describe(status.selection.languages)) (--storefronts, --languages)")
        }
        if status.priceHistory || status.priceChanges > 0 {
            say("price history: \(status.priceHistory ? "recorded" : "off (--history none)"), "
                + "\(status.priceChanges) changes (epf prices ID --history, epf changes --kind price)")
        }
        if status.rankHistory || status.rankDays > 0 {
            let newest = status.rankNewestDay.map { ", newest \(EPFValues.isoDate(milliseconds: $0))" } ?? ""
            say("rank history: \(status.rankHistory ? "recorded" : "off (--history none)"), "
                + "\(status.rankDays) day\(status.rankDays == 1 ? "" : "s")\(newest)")
        }
        if !status.failures.isEmpty {
            say()
            say("warning: \(status.failures.count) file\(status.failures.count == 1 ? "" : "s") failed and nothing "
                + "applied since made up for \(status.failures.count == 1 ? "it" : "them"):")
            for failure in status.failures { say(failure.line) }
            for advice in failureAdvice(status.failures) { say(advice) }
        }
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
            }, rightAligned: [4, 5, 6, 7], priorities: [0, 0, 0, 2, 0, 1, 2, 3, 4])
        }
        return .ok
    }

    /// The tables no longer shipped, one line per feed and pair of dates: "retired (no longer shipped): song,
    /// collection: kept as of the itunes full of 2025-03-10; the itunes full of 2026-01-12 did not contain them".
    static func retiredLines(_ retired: [RetiredTable]) -> [String] {
        var groups: [(key: String, tables: [RetiredTable])] = []
        for table in retired {
            let key = "\(table.feed ?? "")/\(table.lastFull)/\(table.notIn)"
            if let index = groups.firstIndex(where: { $0.key == key }) {
                groups[index].tables.append(table)
            } else {
                groups.append((key, [table]))
            }
        }
        return groups.map { group in
            let first = group.tables[0]
            let feed = first.feed.map { "\($0) " } ?? ""
            let pronoun = group.tables.count == 1 ? "it" : "them"
            return "retired (no longer shipped): \(group.tables.map(\.table).joined(separator: ", ")): kept as of the "
                + "\(feed)full of \(ExportOrderRule.iso(first.lastFull)); the \(feed)full of "
                + "\(ExportOrderRule.iso(first.notIn)) did not contain \(pronoun)"
        }
    }

    /// What to do about the open failures, by kind: a file refused for its order is fine (its reason says which
    /// export comes first); one that failed while the database was written needs room or a sound disk; any other
    /// file is damaged and is fetched again.
    static func failureAdvice(_ failures: [ImportFailure]) -> [String] {
        let refused = failures.filter(\.isOrderRefusal).count
        let storage = failures.filter { !$0.isOrderRefusal && $0.isStorageFailure }.count
        var advice: [String] = []
        if refused > 0 {
            advice.append("Refused for their order (the files are fine): do what each reason says, then import "
                          + "again (epf sync ROOT applies a mirror in date order).")
        }
        if storage > 0 {
            advice.append("Failed while writing the database (not the files' fault): free space, raise the file "
                          + "size limit (ulimit -f) or fix the disk, then run the import again; it resumes.")
        }
        if refused + storage < failures.count {
            advice.append("Fix the damaged files (epf fetch fetches them again) and run the import again.")
        }
        return advice
    }
}
