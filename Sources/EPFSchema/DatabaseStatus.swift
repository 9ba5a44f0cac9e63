import EPFSQLite
import JSONText

/// The importer's account of a database, as `epf status` gives it: its tables, the last imports, and the claims
/// made from its ledger (the date the data is complete as of, whether the tables mix exports, the failed files
/// nothing made up for).
///
/// Those claims follow the importer's policies (which failures a later import made up for, which tables an older
/// full holds back), so the store makes them (EPFStore's `StoreStatus`); readers that report them, such as the
/// server's `/v1/status` and `/healthz`, are handed a `DatabaseStatusReader` and need nothing of the importer.
package protocol DatabaseStatus: Sendable {
    /// The date the data is complete as of (ms since 1970), nil when no table has an export date.
    var dataAsOf: Int64? { get }
    /// True when the tables are not all of one export sequence.
    var mixed: Bool { get }
    /// The number of files that failed and that nothing applied since made up for.
    var failureCount: Int { get }

    /// The status as JSON, the one shape of `epf status --json`; `exportDateFallback` stands in for the date
    /// when no table has bookkeeping, and `extra` members are appended.
    func json(exportDateFallback: Int64?, extra: [(String, JSONValue)]) -> JSONValue
}

/// Reads a database's `DatabaseStatus`.
package protocol DatabaseStatusReader: Sendable {
    /// Reads the status through `connection` (read-only is enough) of the database file at `databasePath` (for its
    /// size), with the `lastImports` newest ledger entries. Throws on any SQLite failure.
    func read(_ connection: SQLiteConnection, databasePath: String, lastImports: Int) throws -> any DatabaseStatus
}
