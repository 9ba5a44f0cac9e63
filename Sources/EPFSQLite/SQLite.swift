import CSQLite
import Foundation

/// `SQLITE_TRANSIENT`: SQLite copies the bound bytes before the call returns.
@usableFromInline let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
/// `SQLITE_STATIC`: SQLite keeps the pointer, not a copy, until the parameter is bound again, the bindings are
/// cleared or the statement is finalized; `runOnce()` clears them as soon as the statement has stepped.
@usableFromInline let sqliteStatic: sqlite3_destructor_type? = nil

/// An error from the SQLite C library, carrying its result code, message and the SQL it ran.
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    /// The extended SQLite result code (`SQLITE_BUSY`, `SQLITE_CONSTRAINT_UNIQUE`, ...).
    package let code: Int32
    /// SQLite's own message (`sqlite3_errmsg`).
    package let message: String
    /// The statement being executed, when there was one.
    package let sql: String?
    /// The `errno` of the last system call that failed under SQLite (`sqlite3_system_errno`), 0 when none: tells
    /// a full disk (`ENOSPC`) from a file size limit (`EFBIG`) behind an I/O error.
    package var systemErrno: Int32 = 0
    /// The database file, when the error came from a connection: named in the errors a user can act on.
    package var path: String?

    public var description: String {
        var text = "SQLite error \(code): \(message)"
        if let sql { text += " - while executing \(sql.prefix(200))" }
        guard let path else { return text }
        if isNotADatabase {
            return "\(path) is not an SQLite database (\(text))"
        }
        if isMissingSharedMemory {
            return "\(path) is a WAL database whose -shm file is missing, and this user cannot create it in the "
                + "database's directory: run epf import (or epf sync) on it once as its owner, which keeps the file "
                + "from then on, or let this user write the directory (\(text))"
        }
        if isInterruptedWrite {
            return "\(path) holds a first import that was interrupted before it finished (its rollback journal, "
                + "\((path as NSString).lastPathComponent)-journal, is left beside it), which a reader cannot roll "
                + "back: run the same epf import (or epf sync) again, which rolls it back and resumes; readers work "
                + "again from its first commit (\(text))"
        }
        if isAccessDenied {
            return "cannot open \(path): permission denied: this user may not read the file or its directory "
                + "(\(text))"
        }
        return text
    }

    /// The primary result code (low 8 bits of the extended code).
    package var primaryCode: Int32 { code & 0xff }
    /// True for `SQLITE_BUSY` and `SQLITE_LOCKED`: another connection holds a lock.
    package var isBusy: Bool { primaryCode == SQLITE_BUSY || primaryCode == SQLITE_LOCKED }
    /// True for constraint violations (unique, primary key, not null).
    package var isConstraint: Bool { primaryCode == SQLITE_CONSTRAINT }
    /// True when the connection is read-only and a write was attempted, or the statement was refused by the authorizer.
    package var isReadOnlyViolation: Bool { primaryCode == SQLITE_READONLY || primaryCode == SQLITE_AUTH }
    /// True when this user may not open the file (`SQLITE_CANTOPEN` with `EACCES`/`EPERM`).
    package var isAccessDenied: Bool {
        primaryCode == SQLITE_CANTOPEN && (systemErrno == EACCES || systemErrno == EPERM)
    }
    /// True for `SQLITE_READONLY_CANTINIT` and `SQLITE_READONLY_DIRECTORY` (macros Swift does not import): a
    /// read-only reader of a WAL database whose `-shm` file is missing and cannot be made.
    package var isMissingSharedMemory: Bool { code == SQLITE_READONLY | (5 << 8) || code == SQLITE_READONLY | (6 << 8) }
    /// True for `SQLITE_READONLY_ROLLBACK` (a macro Swift does not import): a read-only reader found a hot
    /// rollback journal, left by a writer that died inside a transaction (epf's first import of a new database
    /// uses the rollback journal, `StoreDatabase.open`). Only a writer can roll it back.
    package var isInterruptedWrite: Bool { code == SQLITE_READONLY | (3 << 8) }
    /// Either of the two: this user cannot read the database as it is.
    package var isPermissionProblem: Bool { isAccessDenied || isMissingSharedMemory }
    /// True for `SQLITE_NOTADB`: the file is not an SQLite database.
    package var isNotADatabase: Bool { primaryCode == SQLITE_NOTADB }
    /// True when a write found no room: `SQLITE_FULL`, or an I/O error whose system call failed with `ENOSPC`
    /// (no space left) or `EFBIG` (the process's file size limit, `RLIMIT_FSIZE`).
    package var isDiskFull: Bool {
        primaryCode == SQLITE_FULL || (primaryCode == SQLITE_IOERR && (systemErrno == ENOSPC || systemErrno == EFBIG))
    }
}

/// A value read from or bound to SQLite.
package enum SQLValue: Equatable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

/// The storage class of one value of a result row (SQLite's fundamental datatypes).
public enum SQLStorageClass: Sendable {
    case integer, real, text, blob, null
}

/// One SQLite connection. Not `Sendable`: a connection and its statements belong to one thread.
///
/// The corresponding C object is `sqlite3*`; `deinit` calls `sqlite3_close_v2`.
public final class SQLiteConnection {
    /// How the database file is opened.
    package enum Mode: Sendable {
        /// `SQLITE_OPEN_READONLY`: every write is refused by SQLite itself.
        case readOnly
        /// `SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE`.
        case readWriteCreate
        /// `SQLITE_OPEN_READWRITE`: the file must exist.
        case readWrite
    }

    @usableFromInline let handle: OpaquePointer
    /// The path the connection was opened with.
    package let path: String
    /// The pre-update hook's callback while one is installed (`setPreUpdateHook`).
    var preUpdateCallback: PreUpdateCallback?

    /// Opens (or creates) a database, through the named VFS (`MappedVFS.registeredName()`, say) or SQLite's
    /// default one. Throws `SQLiteError` when SQLite cannot open the file.
    package init(path: String, mode: Mode, busyTimeoutMilliseconds: Int32 = 5000, vfs: String? = nil) throws {
        var flags: Int32 = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
        switch mode {
        case .readOnly: flags |= SQLITE_OPEN_READONLY
        case .readWrite: flags |= SQLITE_OPEN_READWRITE
        case .readWriteCreate: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        }
        // Before SQLite initializes, which the first open does: afterwards sqlite3_config is refused.
        Self.disableMemoryStatistics()
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, flags, vfs)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            let systemErrno = db.map { sqlite3_system_errno($0) } ?? 0
            let code = db.map { sqlite3_extended_errcode($0) } ?? rc
            if let db { sqlite3_close_v2(db) }
            throw SQLiteError(code: code, message: "\(message) (opening \(path))", sql: nil, systemErrno: systemErrno,
                              path: path)
        }
        handle = db
        self.path = path
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, busyTimeoutMilliseconds)
        if mode != .readOnly { try keepWALFiles() }
    }

    /// Keeps a WAL database's `-wal` (emptied) and `-shm` files when the last connection closes, instead of
    /// deleting them: a reader who may read the database but not write its directory (another OS user, the
    /// package's `epf` group) can open a WAL database only when both files exist (SQLite's "read-only WAL
    /// databases"). They take the database file's permissions. No effect on a rollback-journal database.
    ///
    /// The corresponding C call is `sqlite3_file_control(db, "main", SQLITE_FCNTL_PERSIST_WAL, &1)`.
    private func keepWALFiles() throws {
        var persist: Int32 = 1
        let rc = sqlite3_file_control(handle, "main", SQLITE_FCNTL_PERSIST_WAL, &persist)
        // SQLITE_NOTFOUND: a VFS without the control (none of epf's): nothing to keep.
        guard rc == SQLITE_OK || rc == SQLITE_NOTFOUND else { throw error(rc, sql: nil) }
    }

    deinit {
        if preUpdateCallback != nil { sqlite3_preupdate_hook(handle, nil, nil) }
        sqlite3_close_v2(handle)
    }

    /// Turns off SQLite's global memory statistics (a mutex and counters on every allocation). Only effective
    /// before SQLite initializes, so every connection and the VFS registration call it first (the importer used to
    /// call it only when opening its database, after the space check's connection had initialized SQLite, and
    /// SQLite refused it with SQLITE_MISUSE); later calls do nothing.
    ///
    /// The corresponding C call is `sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0)`.
    package static func disableMemoryStatistics() {
        _ = memoryStatisticsOff
    }

    private static let memoryStatisticsOff: Bool = {
        // sqlite3_config is variadic in C; Swift calls the shim that takes the flag.
        epf_sqlite_config_memstatus(0) == SQLITE_OK
    }()

    @usableFromInline func error(_ code: Int32, sql: String?) -> SQLiteError {
        SQLiteError(code: code, message: String(cString: sqlite3_errmsg(handle)), sql: sql,
                    systemErrno: sqlite3_system_errno(handle), path: path)
    }

    /// Runs one or more statements that return no rows. Throws on the first failing statement.
    package func execute(_ sql: String) throws {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if rc != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(errorMessage)
            throw SQLiteError(code: sqlite3_extended_errcode(handle), message: message, sql: sql,
                              systemErrno: sqlite3_system_errno(handle), path: path)
        }
    }

    /// Compiles one statement. Throws `SQLiteError` with the SQL on a syntax or schema error.
    package func prepare(_ sql: String) throws -> SQLiteStatement {
        try SQLiteStatement(connection: self, sql: sql)
    }

    /// Runs a query and returns every row as values, for small results (status, schema, tests).
    package func query(_ sql: String, _ bindings: [SQLValue] = []) throws -> [[SQLValue]] {
        let statement = try prepare(sql)
        try statement.bind(bindings)
        var rows: [[SQLValue]] = []
        while try statement.step() {
            rows.append((0..<statement.columnCount).map { statement.value(at: $0) })
        }
        return rows
    }

    /// The first column of the first row, or nil when there is no row.
    package func scalar(_ sql: String, _ bindings: [SQLValue] = []) throws -> SQLValue? {
        let statement = try prepare(sql)
        try statement.bind(bindings)
        guard try statement.step() else { return nil }
        return statement.value(at: 0)
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE (`sqlite3_changes64`).
    package var changes: Int64 { sqlite3_changes64(handle) }

    /// The file of the main database, nil for an in-memory or temporary one (`sqlite3_db_filename(3)`).
    package var mainFilename: String? {
        guard let name = sqlite3_db_filename(handle, "main"), name.pointee != 0 else { return nil }
        return String(cString: name)
    }

    /// The rowid of the last row inserted through this connection (`sqlite3_last_insert_rowid`).
    @inlinable public var lastInsertRowid: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Whether the connection can only read (`sqlite3_db_readonly`).
    package var isReadOnly: Bool { sqlite3_db_readonly(handle, "main") == 1 }

    /// Runs `body` inside `BEGIN IMMEDIATE ... COMMIT`, rolling back when it throws.
    package func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Whether a table (or view) of that name exists in the main schema.
    package func tableExists(_ name: String) throws -> Bool {
        try scalar("SELECT 1 FROM sqlite_schema WHERE name = ?1 AND type IN ('table','view')", [.text(name)]) != nil
    }

    /// Installs an authorizer that denies everything but reading, as a second guard behind `SQLITE_OPEN_READONLY`.
    ///
    /// The corresponding C function is `sqlite3_set_authorizer(3)`.
    package func denyEverythingButReading() {
        sqlite3_set_authorizer(handle, { _, action, argument1, argument2, _, _ in
            switch action {
            case SQLITE_SELECT, SQLITE_READ, SQLITE_FUNCTION, SQLITE_RECURSIVE:
                return SQLITE_OK
            case SQLITE_PRAGMA:
                // Reading pragmas have no argument; any "PRAGMA x = y" is denied, except the few
                // schema-reading pragmas whose argument is a table or index name.
                guard argument2 != nil else { return SQLITE_OK }
                let name = argument1.map { String(cString: $0).lowercased() } ?? ""
                return ["table_info", "table_xinfo", "index_list", "index_info", "index_xinfo",
                        "foreign_key_list"].contains(name) ? SQLITE_OK : SQLITE_DENY
            case SQLITE_UPDATE:
                // Connecting a virtual table (the FTS5 search index) re-parses its declaration, which
                // asks for UPDATE on sqlite_schema; nothing is written, and a real UPDATE of the schema
                // table needs writable_schema, which is denied above.
                guard let argument1 else { return SQLITE_DENY }
                let table = String(cString: argument1)
                return table == "sqlite_master" || table == "sqlite_schema" ? SQLITE_OK : SQLITE_DENY
            case SQLITE_TRANSACTION, SQLITE_SAVEPOINT:
                return SQLITE_OK
            default:
                return SQLITE_DENY
            }
        }, nil)
    }

    /// Quotes an identifier for SQL (`"name"`, doubling inner quotes).
    package static func quote(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

/// A compiled statement. The corresponding C object is `sqlite3_stmt*`; `deinit` calls `sqlite3_finalize`.
public final class SQLiteStatement {
    // The calls made once per row are @inlinable (with what they touch @usableFromInline): the import binds and
    // steps rows from EPFStore, and a call across the module boundary per value cost about 1% of an import's
    // instructions (benchmarks/instructions). They, their types and what they read are `public`, not `package`:
    // Swift 6.3 inlines `@inlinable package` declarations only inside their own module.
    @usableFromInline let handle: OpaquePointer
    @usableFromInline let connection: SQLiteConnection
    /// The SQL text, for error messages.
    public let sql: String

    init(connection: SQLiteConnection, sql: String) throws {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v2(connection.handle, sql, -1, &statement, nil)
        guard rc == SQLITE_OK, let statement else {
            throw connection.error(rc == SQLITE_OK ? SQLITE_MISUSE : rc, sql: sql)
        }
        handle = statement
        self.connection = connection
        self.sql = sql
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// Number of result columns.
    package var columnCount: Int32 { sqlite3_column_count(handle) }

    /// Whether the statement only reads (`sqlite3_stmt_readonly`).
    package var isReadOnly: Bool { sqlite3_stmt_readonly(handle) != 0 }

    /// Name of a result column.
    package func columnName(at index: Int32) -> String {
        sqlite3_column_name(handle, index).map { String(cString: $0) } ?? "column\(index + 1)"
    }

    /// Advances; true when a row is available, false when done. Throws on any error.
    @discardableResult
    @inlinable public func step() throws -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = connection.error(sqlite3_extended_errcode(connection.handle), sql: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Runs a statement that returns no rows (an INSERT, UPDATE or DELETE) once, then resets it and clears its
    /// bindings, on success and on error, so that no parameter keeps pointing at memory bound without a copy
    /// (`bindTextNoCopy`, `bindBlobNoCopy`) after the caller has moved on.
    @inlinable public func runOnce() throws {
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        try step()
    }

    /// Resets the statement so it can run again; bindings are kept.
    @inlinable public func reset() {
        sqlite3_reset(handle)
    }

    /// Clears every binding to NULL.
    package func clearBindings() {
        sqlite3_clear_bindings(handle)
    }

    @inlinable func check(_ rc: Int32) throws {
        if rc != SQLITE_OK { throw failure(rc) }
    }

    @usableFromInline func failure(_ rc: Int32) -> SQLiteError { connection.error(rc, sql: sql) }

    /// Binds values to parameters 1...n.
    package func bind(_ values: [SQLValue]) throws {
        for (offset, value) in values.enumerated() {
            try bind(value, at: Int32(offset + 1))
        }
    }

    /// Binds one value to a 1-based parameter index.
    package func bind(_ value: SQLValue, at index: Int32) throws {
        switch value {
        case .null: try bindNull(at: index)
        case .integer(let number): try bind(number, at: index)
        case .real(let number): try check(sqlite3_bind_double(handle, index, number))
        case .text(let text): try bind(text, at: index)
        case .blob(let bytes):
            try bytes.withUnsafeBytes { buffer in
                try check(sqlite3_bind_blob64(handle, index, buffer.baseAddress, UInt64(buffer.count), sqliteTransient))
            }
        }
    }

    /// Binds NULL.
    @inlinable public func bindNull(at index: Int32) throws {
        try check(sqlite3_bind_null(handle, index))
    }

    /// Binds a 64-bit integer.
    @inlinable public func bind(_ value: Int64, at index: Int32) throws {
        try check(sqlite3_bind_int64(handle, index, value))
    }

    /// Binds text, copied by SQLite.
    package func bind(_ value: String, at index: Int32) throws {
        try check(sqlite3_bind_text64(handle, index, value, UInt64(value.utf8.count), sqliteTransient,
                                      UInt8(SQLITE_UTF8)))
    }

    /// Binds UTF-8 bytes without copying: they must stay valid until the statement has run (see `runOnce()`).
    @inlinable public func bindTextNoCopy(_ bytes: UnsafeRawPointer, count: Int, at index: Int32) throws {
        try check(sqlite3_bind_text64(handle, index, bytes.assumingMemoryBound(to: CChar.self), UInt64(count),
                                      sqliteStatic, UInt8(SQLITE_UTF8)))
    }

    /// Binds bytes as a blob without copying: they must stay valid until the statement has run (see `runOnce()`).
    @inlinable public func bindBlobNoCopy(_ bytes: UnsafeRawBufferPointer, at index: Int32) throws {
        try check(sqlite3_bind_blob64(handle, index, bytes.baseAddress, UInt64(bytes.count), sqliteStatic))
    }

    /// Binds UTF-8 bytes, copied by SQLite.
    package func bindTextCopy(_ bytes: UnsafeRawPointer, count: Int, at index: Int32) throws {
        try check(sqlite3_bind_text64(handle, index, bytes.assumingMemoryBound(to: CChar.self), UInt64(count),
                                      sqliteTransient, UInt8(SQLITE_UTF8)))
    }

    /// The value of a result column in the current row.
    package func value(at index: Int32) -> SQLValue {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_NULL: return .null
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, index))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(handle, index))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(handle, index))
            guard count > 0, let pointer = sqlite3_column_blob(handle, index) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: pointer, count: count)))
        default:
            return .text(text(at: index) ?? "")
        }
    }

    /// Hands the bytes of a BLOB result column to `body` without copying them; nil when the column is not a BLOB.
    /// The bytes are SQLite's: valid only inside `body`, and only until the statement steps or is reset.
    package func withBlob<T>(at index: Int32, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T? {
        guard sqlite3_column_type(handle, index) == SQLITE_BLOB else { return nil }
        let count = Int(sqlite3_column_bytes(handle, index))
        guard count > 0, let pointer = sqlite3_column_blob(handle, index) else {
            return try body(UnsafeRawBufferPointer(start: nil, count: 0))
        }
        return try body(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// A column as Int64, nil when NULL.
    package func int64(at index: Int32) -> Int64? {
        sqlite3_column_type(handle, index) == SQLITE_NULL ? nil : sqlite3_column_int64(handle, index)
    }

    /// A column as a double (SQLite converts text that reads as a number), nil when NULL.
    package func double(at index: Int32) -> Double? {
        sqlite3_column_type(handle, index) == SQLITE_NULL ? nil : sqlite3_column_double(handle, index)
    }

    /// A column as text, nil when NULL.
    package func text(at index: Int32) -> String? {
        guard let pointer = sqlite3_column_text(handle, index) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    /// Whether the column is NULL in the current row.
    package func isNull(at index: Int32) -> Bool {
        sqlite3_column_type(handle, index) == SQLITE_NULL
    }

    // Column reads for loops over millions of rows (a merge of two tables): inlinable, and no String made.

    /// Whether a column of the current row is NULL.
    @inlinable public func columnIsNull(_ index: Int32) -> Bool {
        sqlite3_column_type(handle, index) == SQLITE_NULL
    }

    /// Whether a column of the current row is stored as a number (INTEGER or REAL).
    @inlinable public func columnIsNumber(_ index: Int32) -> Bool {
        let type = sqlite3_column_type(handle, index)
        return type == SQLITE_FLOAT || type == SQLITE_INTEGER
    }

    /// The storage class of a column of the current row. The corresponding C call is `sqlite3_column_type`.
    @inlinable public func columnStorage(_ index: Int32) -> SQLStorageClass {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER: return .integer
        case SQLITE_FLOAT: return .real
        case SQLITE_TEXT: return .text
        case SQLITE_BLOB: return .blob
        default: return .null
        }
    }

    /// A column of the current row as Int64 (0 when NULL: ask `columnIsNull` first).
    @inlinable public func columnInt64(_ index: Int32) -> Int64 { sqlite3_column_int64(handle, index) }

    /// A column of the current row as a double (text that reads as a number converted; 0 when NULL).
    @inlinable public func columnDouble(_ index: Int32) -> Double { sqlite3_column_double(handle, index) }

    /// The UTF-8 bytes of a column of the current row, nil when NULL. The bytes are SQLite's: valid only until
    /// the statement steps or is reset.
    @inlinable public func columnText(_ index: Int32) -> UnsafeRawBufferPointer? {
        guard let pointer = sqlite3_column_text(handle, index) else { return nil }
        return UnsafeRawBufferPointer(start: pointer, count: Int(sqlite3_column_bytes(handle, index)))
    }

    /// Binds text bytes (copied by SQLite), or NULL for nil.
    @inlinable public func bind(text bytes: UnsafeRawBufferPointer?, at index: Int32) throws {
        guard let bytes, let base = bytes.baseAddress else {
            if bytes == nil { return try bindNull(at: index) }
            return try check(sqlite3_bind_text64(handle, index, "", 0, sqliteTransient, UInt8(SQLITE_UTF8)))
        }
        try check(sqlite3_bind_text64(handle, index, base.assumingMemoryBound(to: CChar.self), UInt64(bytes.count),
                                      sqliteTransient, UInt8(SQLITE_UTF8)))
    }
}

/// The SQLite library version, e.g. "3.40.1".
package var sqliteLibraryVersion: String { String(cString: sqlite3_libversion()) }

extension SQLiteConnection {
    /// Splits off the first SQL statement of `sql`: its text (empty when `sql` holds only whitespace or
    /// comments) and the text after it.
    ///
    /// Lets callers refuse input holding more than one statement. The corresponding C function is
    /// `sqlite3_prepare_v2(3)` with its tail pointer. Throws `SQLiteError` with the SQL on a syntax error.
    package func splitFirstStatement(_ sql: String) throws -> (first: String, rest: String) {
        var utf8 = Array(sql.utf8)
        utf8.append(0)
        return try utf8.withUnsafeBufferPointer { buffer -> (String, String) in
            guard let base = buffer.baseAddress else { return ("", "") }
            return try base.withMemoryRebound(to: CChar.self, capacity: buffer.count) { chars in
                var statement: OpaquePointer?
                var tail: UnsafePointer<CChar>?
                let rc = sqlite3_prepare_v2(handle, chars, Int32(buffer.count - 1), &statement, &tail)
                defer { sqlite3_finalize(statement) }
                guard rc == SQLITE_OK else { throw error(rc, sql: sql) }
                let consumed = tail.map { $0 - chars } ?? buffer.count - 1
                let rest = String(decoding: buffer[consumed..<(buffer.count - 1)], as: UTF8.self)
                guard statement != nil else { return ("", rest) }
                return (String(decoding: buffer[0..<consumed], as: UTF8.self), rest)
            }
        }
    }
}
