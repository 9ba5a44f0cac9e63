import EPFExport
import EPFFormat
import EPFParquet
import Foundation
import JSONText

/// `epf export`: the database's tables as Apache Parquet files, for DuckDB, pandas, Spark and the rest.
enum ExportCommand: Command {
    static let name = "export"
    static let summary = "Write the tables as Apache Parquet files (DuckDB, pandas, Spark)"
    static let help = """
    USAGE: epf export DIR [--tables T,...] [--since YYYY-MM-DD] [--compression gzip|none] [--db FILE]

    Writes each table into DIR/TABLE/ as Apache Parquet: the feed's tables, the change log (epf_changes) and
    the price history flattened to one row per change (epf_price_history). The price tables are split by
    storefront, Hive-style (DIR/application_price/storefront=US/part-0.parquet). Files hold row groups of
    about a million rows with min/max statistics, compressed with GZIP. DIR/_manifest.json names the feed's
    export date and each table's rows, files and column types.

    Types: ids and integers INT64; prices and other DECIMAL columns DECIMAL(18,3), exact; export_date and dates
    TIMESTAMP (UTC, milliseconds); texts UTF-8 strings (dictionary-encoded where few values repeat); NULLs
    stay NULL. A column with a value that does not fit its type exactly is written as text, and the manifest
    says so.

    The tables are read as one snapshot, so an import may run meanwhile. Each table is written into a hidden
    directory of DIR and moved into place when complete, replacing that table's previous export: an
    interrupted export leaves no half-written file under a final name.

    OPTIONS:
    \(optionsHelp(declaredOptions))

    Prints one line per table as it is written: rows, files and seconds.

    EXAMPLES:
      epf export parquet/
      epf export parquet/ --tables application,application_price
      epf export parquet/ --tables epf_changes,epf_price_history --since 2026-11-01
      duckdb -c "SELECT count(*) FROM 'parquet/application/*.parquet'"
    """

    static let tables = TextOption("tables", "T,...", "Only these tables (comma-separated), e.g. application, "
                                      + "application_price, epf_changes, epf_price_history.")
    static let since = TextOption("since", "DATE", "Only rows of exports dated DATE (UTC, YYYY-MM-DD) or later.")

    static let compression = TextOption("compression", "gzip|none", default: "gzip",
                                        "The pages' codec: gzip (zlib level 1; text about 5x smaller) or none "
                                            + "(files as large as the data, written about twice as fast).")

    static let json = CommonOptions.json("Print {\"directory\", \"manifest\", \"tables\": [{\"name\", \"rows\", "
                                         + "\"files\", \"seconds\", \"notes\"}], \"rows\", \"seconds\"} instead of the "
                                         + "lines.")

    static var declaredOptions: [any DeclaredOption] { [tables, since, compression, json, CommonOptions.database] }

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let path = try databasePath(&arguments)
        let tableList = try arguments.read(Self.tables)
        let sinceText = try arguments.read(Self.since)
        let codec = try arguments.read(Self.compression) ?? "gzip"
        let asJSON = arguments.read(Self.json)
        let positionals = try arguments.finish()
        guard positionals.count == 1, let directory = positionals.first, !directory.isEmpty else {
            throw UsageError(positionals.isEmpty ? "give the directory to write (epf export DIR)"
                             : "unexpected argument '\(positionals[1])'")
        }
        var since: Int64?
        if let sinceText {
            guard let milliseconds = EPFValues.milliseconds(isoDate: sinceText) else {
                throw UsageError("--since: '\(sinceText.prefix(40))' is not a date as YYYY-MM-DD")
            }
            since = milliseconds
        }
        let names = tableList.map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
        if let names, names.isEmpty || names.contains(where: \.isEmpty) {
            throw UsageError("--tables: give table names separated by commas")
        }
        guard codec == "gzip" || codec == "none" else {
            throw UsageError("--compression: '\(codec.prefix(40))' is not gzip or none")
        }
        let writer = ParquetWriterOptions(compression: codec == "none" ? .none : .gzip(level: 1))
        let options = ExportOptions(directory: directory, tables: names, since: since, writer: writer,
                                    createdBy: "epf version \(EPFVersion.number)")
        do {
            let started = Date()
            let tables = try ParquetExport.run(databasePath: path, options: options) { table in
                if asJSON { return }
                let files = table.files.count == 1 ? "1 file" : "\(table.files.count) files"
                say("\(table.name): \(table.rows) rows, \(files), "
                    + String(format: "%.1f s", table.seconds))
                for note in table.notes { say("  note: \(note)") }
                Output.shared.flush()
            }
            let rows = tables.reduce(0) { $0 + $1.rows }
            let manifest = "\(directory.hasSuffix("/") ? directory : directory + "/")\(ParquetExport.manifestName)"
            let seconds = Date().timeIntervalSince(started)
            if asJSON {
                ReportJSON.write(.object([
                    ("directory", .string(directory)), ("manifest", .string(manifest)),
                    ("tables", .array(tables.map { table in
                        .object([("name", .string(table.name)), ("rows", .int(table.rows)),
                                 ("files", .int(Int64(table.files.count))),
                                 ("seconds", ReportJSON.seconds(table.seconds)),
                                 ("notes", .array(table.notes.map { .string($0) }))])
                    })),
                    ("rows", .int(rows)), ("seconds", ReportJSON.seconds(seconds)),
                ]))
                return .ok
            }
            say("wrote \(tables.count == 1 ? "1 table" : "\(tables.count) tables"), \(rows) rows, to \(directory) in "
                + String(format: "%.1f s", seconds) + " (manifest: \(manifest))")
            return .ok
        } catch let error as ExportError {
            switch error {
            case .databaseMissing(let path):
                throw CommandFailure(.noInput, QueryCLI.message(.databaseMissing(path: path)))
            case .databaseEmpty(let path):
                throw CommandFailure(.noInput, QueryCLI.message(.databaseEmpty(path: path)))
            case .unknownTable: throw UsageError(error.description)
            case .sqlite(let sqlite):
                throw CommandFailure(ExitCode.forDatabaseFile(sqlite) ?? .dataError, error.description)
            case .parquet, .system: throw CommandFailure(.cannotCreate, error.description)
            }
        }
    }
}
