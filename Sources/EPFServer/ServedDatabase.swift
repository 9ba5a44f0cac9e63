import EPFQuery
import EPFSQLite
import EPFSchema
import Glibc
import HTTPTransport

/// The database one worker serves: its read-only `QueryEngine`, a side connection for cheap facts and the
/// worker's response cache, opened at start, dropped when the file vanishes and reopened when it comes back
/// or is replaced (checked by device and inode at most once per `fileCheckInterval`).
///
/// Not thread-safe, like the engine it holds: one per worker.
final class ServedDatabase {
    /// The database file.
    let path: String
    private let fileCheckInterval: Double
    private let cacheEntries: Int
    private let cacheBytes: Int
    /// The engine, nil while the file is missing or unreadable.
    private(set) var engine: QueryEngine?
    /// Rendered responses of this worker, dropped with the engine.
    private(set) var cache: ResponseCache?
    /// A second read-only connection for cheap facts: `PRAGMA data_version`, the importer's bookkeeping, health.
    private(set) var side: SQLiteConnection?
    /// Device and inode of the file the engine opened.
    private var identity: (device: UInt64, inode: UInt64)?
    private var lastFileCheck: UInt64 = 0
    private var lastOpenAttempt: UInt64 = 0
    /// Why the last open failed, empty after a successful one.
    private(set) var lastOpenError = ""
    /// The newest export date of the data in seconds since 1970, when known.
    private(set) var exportDateSeconds: Int64?

    /// Opens the database; throws `QueryError.databaseMissing` or `.databaseEmpty` when it cannot.
    init(configuration: EPFServerConfiguration) throws {
        path = configuration.databasePath
        fileCheckInterval = configuration.fileCheckInterval
        cacheEntries = configuration.responseCacheEntries
        cacheBytes = configuration.responseCacheBytes
        try open()
    }

    private static func fileIdentity(_ path: String) -> (device: UInt64, inode: UInt64)? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return (UInt64(info.st_dev), UInt64(info.st_ino))
    }

    private func open() throws {
        lastOpenAttempt = monotonicNanoseconds()
        let identity = Self.fileIdentity(path)
        let engine = try QueryEngine(databasePath: path)
        self.engine = engine
        self.identity = identity
        side = try? SQLiteConnection(path: path, mode: .readOnly,
                                     busyTimeoutMilliseconds: 100)
        if cacheEntries > 0 { cache = ResponseCache(maxEntries: cacheEntries, maxBytes: cacheBytes) }
        lastOpenError = ""
        refreshExportDate()
    }

    /// Drops the engine and opens a fresh one (new connection, new prepared statements); false on failure.
    @discardableResult
    func reopen() -> Bool {
        engine = nil
        cache = nil
        side = nil
        identity = nil
        do {
            try open()
            return true
        } catch {
            lastOpenError = "\(error)"
            return false
        }
    }

    /// The engine, reopening it (at most once per check interval) when it is gone.
    func currentEngine() -> QueryEngine? {
        if let engine { return engine }
        let now = monotonicNanoseconds()
        if now &- lastOpenAttempt >= UInt64(fileCheckInterval * 1e9) { reopen() }
        return engine
    }

    /// Checks the file's identity once per interval; a vanished or replaced file drops or reopens the engine.
    func tick() {
        let now = monotonicNanoseconds()
        guard now &- lastFileCheck >= UInt64(fileCheckInterval * 1e9 * 0.9) else { return }
        lastFileCheck = now
        let current = Self.fileIdentity(path)
        if current == nil {
            engine = nil
            cache = nil
            side = nil
            identity = nil
            lastOpenError = "the database file \(path) is missing"
            return
        }
        if engine == nil || identity.map({ $0.device != current?.device || $0.inode != current?.inode }) == true {
            reopen()
            return
        }
        refreshExportDate()
    }

    func refreshExportDate() {
        if engine != nil, let milliseconds = newestExportDate() { exportDateSeconds = milliseconds / 1000 }
    }

    /// The newest export date (ms): from the importer's bookkeeping when present (`StoreBookkeeping`, one small
    /// table), else the engine's scan of the catalogue tables (databases made by hand, tests).
    func newestExportDate() -> Int64? {
        if let side, let milliseconds = (try? StoreBookkeeping.newestExportDate(side)) ?? nil {
            return milliseconds
        }
        return (try? engine?.catalogue.dataExportDate()) ?? nil
    }
}
