import EPFQuery
import EPFSQLite

extension ExitCode {
    /// The exit status of an error no command explained: what the user can act on gets its sysexits(3) code
    /// (a file that is not a database is bad data, 65; one this user may not open, 77; a read-only WAL database
    /// without its `-shm`, 77; one whose first import was interrupted, 75 until the import runs again), anything else is epf's own failure, 70.
    static func forUnexplained(_ error: Error) -> ExitCode {
        let sqlite: SQLiteError?
        switch error {
        case let error as SQLiteError: sqlite = error
        case QueryError.sqlite(let error): sqlite = error
        default: sqlite = nil
        }
        guard let sqlite else { return .software }
        if sqlite.isNotADatabase { return .dataError }
        // An interrupted first import: running it again (then the reader) works.
        if sqlite.isInterruptedWrite { return .tempFail }
        if sqlite.isPermissionProblem { return .noPermission }
        return .software
    }
}
