import EPFImport
import EPFSQLite
import Foundation

/// Opening the database for the importer and the bookkeeping tables it keeps beside the EPF tables.
///
/// The database runs in WAL mode so that readers (`epf lookup`, `epf serve`) keep reading the previous data while
/// an import writes, and see a replaced table only when its swap transaction commits.
package enum StoreDatabase {
    /// Bookkeeping tables, all named `epf_*`.
    static let bookkeepingSchema = """
    CREATE TABLE IF NOT EXISTS epf_ledger (
        id INTEGER PRIMARY KEY,
        source TEXT NOT NULL,
        source_size INTEGER,
        source_mtime INTEGER,
        location TEXT NOT NULL,
        feed TEXT,
        feed_date TEXT,
        table_name TEXT NOT NULL,
        part INTEGER,
        export_date INTEGER,
        mode TEXT,
        md5 TEXT,
        rows INTEGER,
        rejects INTEGER,
        duplicates INTEGER,
        bytes INTEGER,
        started TEXT,
        finished TEXT,
        outcome TEXT NOT NULL,
        message TEXT,
        repaired INTEGER
    );
    CREATE INDEX IF NOT EXISTS epf_ledger_source ON epf_ledger(source, outcome);
    CREATE TABLE IF NOT EXISTS epf_sources (
        source TEXT PRIMARY KEY,
        size INTEGER,
        mtime INTEGER,
        md5 TEXT,
        feed_date TEXT,
        finished TEXT,
        outcome TEXT
    );
    CREATE TABLE IF NOT EXISTS epf_tables (
        table_name TEXT PRIMARY KEY,
        rows INTEGER,
        export_date INTEGER,
        mode TEXT,
        location TEXT,
        updated TEXT
    );
    CREATE TABLE IF NOT EXISTS epf_progress (
        staging TEXT PRIMARY KEY,
        table_name TEXT,
        source TEXT,
        source_size INTEGER,
        source_mtime INTEGER,
        part INTEGER,
        location TEXT,
        records_done INTEGER,
        rows INTEGER,
        rejects INTEGER,
        duplicates INTEGER,
        rejects_bytes INTEGER,
        export_date INTEGER,
        updated TEXT,
        repaired INTEGER,
        left_out INTEGER
    );
    CREATE TABLE IF NOT EXISTS epf_settings (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        updated TEXT NOT NULL
    );
    """

    /// Opens (creating if needed) the database for writing, in WAL mode, with the bookkeeping tables.
    /// Throws `SQLiteError` when the file is not a database or cannot be written.
    static func openForWriting(_ path: String, cacheMegabytes: Int = 64) throws -> SQLiteConnection {
        try open(path, cacheMegabytes: cacheMegabytes).connection
    }

    /// Opens the database for an import. A database that does not exist yet (or whose first import never
    /// finished) is built with SQLite's rollback journal: pages of new tables are written once instead of twice
    /// (WAL, then checkpoint), and there is no earlier data a reader could be using. `initialBuild` tells the
    /// caller to switch to WAL when the import ends (`finishInitialBuild`). Any other database is opened in WAL
    /// mode, so readers keep reading while the import writes.
    package static func open(_ path: String, cacheMegabytes: Int = 64, pageSize: Int = ImportOptions.defaultPageSize) throws
        -> (connection: SQLiteConnection, initialBuild: Bool) {
        SQLiteConnection.disableMemoryStatistics()
        var size: Int64 = 0
        if let attributes = try? FileManager.default.attributesOfItem(atPath: path),
           let bytes = attributes[.size] as? NSNumber {
            size = bytes.int64Value
        }
        let connection = try SQLiteConnection(path: path, mode: .readWriteCreate, busyTimeoutMilliseconds: 10_000)
        // 16 KiB pages for new databases: wide EPF rows (descriptions) need fewer overflow pages and WAL frames,
        // which loads application_detail about a quarter faster. Existing databases keep their page size.
        try connection.execute("PRAGMA page_size = \(pageSize)")
        var initialBuild = size == 0
        if !initialBuild, case .text(let mode) = try connection.scalar("PRAGMA journal_mode"), mode == "delete" {
            // A first import that was interrupted: still no data served, keep building without WAL.
            let served = try connection.scalar(
                "SELECT 1 FROM sqlite_schema WHERE name = 'epf_tables'") != nil
                && (try connection.scalar("SELECT 1 FROM epf_tables LIMIT 1")) != nil
            initialBuild = !served
        }
        if initialBuild {
            try connection.execute("PRAGMA journal_mode = DELETE")
        } else {
            try connection.execute("PRAGMA journal_mode = WAL")
        }
        // The first build has no earlier data to protect: commits need not reach the disk before the next batch
        // (a killed process loses nothing; a power cut during the very first import means importing again).
        // Afterwards WAL with NORMAL: committed imports survive power loss.
        try connection.execute(initialBuild ? "PRAGMA synchronous = OFF" : "PRAGMA synchronous = NORMAL")
        try connection.execute("PRAGMA cache_size = -\(cacheMegabytes * 1024)")
        try connection.execute("PRAGMA temp_store = FILE")
        try connection.execute("PRAGMA wal_autocheckpoint = 16384")
        try connection.execute("PRAGMA journal_size_limit = 67108864")
        try connection.execute(bookkeepingSchema)
        try addMissingColumns(connection)
        return (connection, initialBuild)
    }

    /// Bookkeeping columns newer than the tables of a database made by an earlier version: (table, column, type).
    static let addedColumns = [("epf_ledger", "repaired", "INTEGER"), ("epf_progress", "repaired", "INTEGER"),
                               ("epf_progress", "left_out", "INTEGER")]

    /// Adds the `addedColumns` a database made by an earlier version lacks.
    static func addMissingColumns(_ connection: SQLiteConnection) throws {
        for (table, column, type) in addedColumns where try !hasColumn(connection, table: table, column: column) {
            try connection.execute("ALTER TABLE \(table) ADD COLUMN \(column) \(type)")
        }
    }

    /// True when `table` has `column` (false when the table does not exist).
    static func hasColumn(_ connection: SQLiteConnection, table: String, column: String) throws -> Bool {
        try connection.scalar("SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2",
                              [.text(table), .text(column)]) != nil
    }

    /// Ends an initial build: switches the database to WAL mode for concurrent readers from now on. If a reader
    /// holds the file at that moment the switch is left to the next import (readers still work meanwhile).
    static func finishInitialBuild(_ connection: SQLiteConnection) {
        _ = try? connection.execute("PRAGMA journal_mode = WAL")
        _ = try? connection.execute("PRAGMA synchronous = NORMAL")
    }

    /// ISO-8601 UTC timestamp for bookkeeping rows.
    package static func now() -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: Date())
    }
}

/// An exclusive lock held for the whole import, on `<database>.lock`, so two imports never write at once.
/// The kernel releases it when the process dies, even by `kill -9`.
package final class ImportLock {
    private let descriptor: Int32
    /// The lock file's path.
    package let path: String

    /// Takes the lock without waiting. Throws `ImportError.locked` when another process holds it.
    /// The corresponding C calls are `open(2)` and `flock(2)`.
    package init(databasePath: String) throws {
        path = databasePath + ".lock"
        let directory = (databasePath as NSString).deletingLastPathComponent
        var isDirectory: ObjCBool = false
        if !directory.isEmpty,
           !(FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) && isDirectory.boolValue) {
            throw ImportError.io(path: databasePath,
                                 message: "the directory \(directory) does not exist; create it or choose another --db")
        }
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            let code = errno
            if code == EACCES || code == EPERM {
                throw ImportError.noPermission(database: databasePath, lockFile: path)
            }
            throw ImportError.io(path: path, message: String(cString: strerror(code)))
        }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            close(fd)
            if code == EWOULDBLOCK {
                throw ImportError.locked(database: databasePath, lockFile: path)
            }
            throw ImportError.io(path: path, message: String(cString: strerror(code)))
        }
        descriptor = fd
        let pid = "\(getpid())\n"
        _ = ftruncate(fd, 0)
        _ = pid.withCString { write(fd, $0, strlen($0)) }
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }

    /// True when an import holds the lock of the database at `databasePath` now; false when none does, or when
    /// this user may not open the lock file (nothing is known then). Takes no lock: a shared probe, released at
    /// once. The corresponding C calls are `open(2)`, `flock(2)` and `close(2)`.
    package static func isHeld(databasePath: String) -> Bool {
        let fd = open(databasePath + ".lock", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        if flock(fd, LOCK_SH | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return false
        }
        return errno == EWOULDBLOCK
    }
}
