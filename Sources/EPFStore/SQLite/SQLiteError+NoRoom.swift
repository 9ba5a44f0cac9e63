import EPFImport
import EPFSQLite

extension SQLiteError: NoRoomReporting {
    /// `SQLITE_IOERR_WRITE` and `SQLITE_IOERR_TRUNCATE` (C macros Swift does not import).
    static let ioErrorWrite: Int32 = 10 | (3 << 8)
    static let ioErrorTruncate: Int32 = 10 | (6 << 8)

    /// `SQLITE_FULL` or an I/O error failing with `ENOSPC`/`EFBIG`; a write or truncate error under a file size
    /// limit.
    package var noRoom: NoRoom? {
        if isDiskFull { return DiskSpace.noRoom(errno: systemErrno) ?? .diskFull }
        guard [Self.ioErrorWrite, Self.ioErrorTruncate].contains(code) else { return nil }
        // SQLite reads `errno` for `sqlite3_system_errno` after its cleanup calls, so an EFBIG is often gone by
        // then; a write error under a finite file size limit is taken to be that limit.
        return DiskSpace.fileSizeLimited ? .fileSizeLimit : nil
    }
}
