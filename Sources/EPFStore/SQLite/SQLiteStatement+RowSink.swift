import EPFImport
import EPFSQLite

/// `RowBinder` binds a record's values straight to the SQLite store's INSERT statement.
extension SQLiteStatement: RowSink {}
