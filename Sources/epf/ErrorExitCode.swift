import EPFQuery
import EPFSQLite

extension ExitCode {
    /// The exit status of an SQLite error about the database file itself, the same for every command that opens
    /// one (readers, `status`, `import`, `sync`, `export`, `serve`): a file that is not an SQLite database is bad
    /// data, 65; one whose first import was interrupted, 75 until the import runs again; a file this user may not
    /// open, or a read-only WAL database without its `-shm` that this user cannot create, is a permission problem,
    /// 77. Nil for any other error: the command decides.
    static func forDatabaseFile(_ error: SQLiteError) -> ExitCode? {
        if error.isNotADatabase { return .dataError }
        // An interrupted first import: running it again (then the reader) works.
        if error.isInterruptedWrite { return .tempFail }
        if error.isPermissionProblem { return .noPermission }
        return nil
    }

    /// The exit status of an error no command explained: a problem with the database file gets its code
    /// (`forDatabaseFile`), anything else is epf's own failure, 70.
    static func forUnexplained(_ error: Error) -> ExitCode {
        switch error {
        case let error as SQLiteError: return forDatabaseFile(error) ?? .software
        case QueryError.sqlite(let error): return forDatabaseFile(error) ?? .software
        default: return .software
        }
    }
}
