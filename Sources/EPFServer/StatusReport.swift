import EPFFormat
import EPFSchema
import EPFSQLite
import JSONText

/// The body of `/v1/status`: the importer's account of the database (`DatabaseStatus`, from the configuration's
/// reader: tables with row counts and export dates from the importer's bookkeeping, the last imports from its
/// ledger, the file size) as JSON, plus server facts.
///
/// The keys and value types are those of `epf status --json` (`DatabaseStatus.json`), plus `server`. Callers
/// cache the result: tables without bookkeeping are counted.
enum StatusReport {
    /// `dataExportDate` (the engine's newest `export_date`) stands in when no table has bookkeeping. Counting
    /// stops after `timeLimitMilliseconds` with a `SQLiteError` whose `isInterrupt` is true.
    static func build(_ reader: any DatabaseStatusReader, databasePath: String, dataExportDate: Int64?,
                      startedAt: Int64, threads: Int, timeLimitMilliseconds: Int) throws -> JSONValue {
        let connection = try SQLiteConnection(path: databasePath, mode: .readOnly, busyTimeoutMilliseconds: 1000)
        let status = try connection.withTimeLimit(milliseconds: timeLimitMilliseconds) {
            try reader.read(connection, databasePath: databasePath, lastImports: 10)
        }
        let server: JSONValue = .object([
            ("startedAt", .string(EPFValues.isoTimestamp(milliseconds: startedAt * 1000))),
            ("threads", .int(Int64(threads))),
        ])
        return status.json(exportDateFallback: dataExportDate, extra: [("server", server)])
    }
}
