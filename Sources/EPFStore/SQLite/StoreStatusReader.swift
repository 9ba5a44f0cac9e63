import EPFImport
import EPFSchema
import EPFSQLite

extension StoreStatus: DatabaseStatus {
    /// The number of `failures`.
    package var failureCount: Int { failures.count }
}

/// Reads the SQLite store's `StoreStatus` for readers that take any `DatabaseStatusReader` (the server's
/// `/v1/status` and `/healthz`), so that they need nothing else of the store.
package struct StoreStatusReader: DatabaseStatusReader {
    /// A reader of the SQLite store's status.
    package init() {}

    package func read(_ connection: SQLiteConnection, databasePath: String, lastImports: Int) throws
        -> any DatabaseStatus {
        try StoreStatus.read(connection, databasePath: databasePath, lastImports: lastImports)
    }
}
