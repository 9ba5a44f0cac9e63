import EPFStore

/// Rendered responses of one worker, reused until the database changes.
///
/// Before each use, `validate()` runs `PRAGMA data_version` on a read-only connection of its own: the value
/// changes whenever another connection (the importer) commits, and then every entry is dropped, so a cached
/// answer is never older than the data a fresh query would read. Bounded in entries and bytes: when either
/// bound is reached the cache is emptied and refills with what is asked for next. Not thread-safe (one per
/// worker, like `QueryEngine`).
final class ResponseCache {
    private let connection: SQLiteConnection
    private let versionStatement: SQLiteStatement
    private var version: Int64 = .min
    private var entries: [String: HTTPResponse] = [:]
    private var bytes = 0
    private let maxEntries: Int
    private let maxBytes: Int
    /// Largest body worth keeping.
    static let maxBodyBytes = 256 * 1024

    /// Uses `connection` (read-only, not used by the query engine) for `PRAGMA data_version`.
    init(connection: SQLiteConnection, maxEntries: Int, maxBytes: Int) throws {
        self.connection = connection
        versionStatement = try connection.prepare("PRAGMA data_version")
        self.maxEntries = maxEntries
        self.maxBytes = maxBytes
    }

    /// Drops every entry when the database changed. `usable` is false when the version cannot be read (do not
    /// use the cache then); `changed` is true when entries were dropped because of a commit.
    func validate() -> (usable: Bool, changed: Bool) {
        defer { versionStatement.reset() }
        guard (try? versionStatement.step()) == true, let current = versionStatement.int64(at: 0) else {
            clear()
            return (false, false)
        }
        if current != version {
            clear()
            let first = version == .min
            version = current
            return (true, !first)
        }
        return (true, false)
    }

    /// The response stored for a request target.
    func get(_ key: String) -> HTTPResponse? { entries[key] }

    /// Stores a response unless it is too large.
    func put(_ key: String, _ response: HTTPResponse) {
        guard response.body.count <= Self.maxBodyBytes else { return }
        if entries.count >= maxEntries || bytes + response.body.count + key.utf8.count > maxBytes { clear() }
        entries[key] = response
        bytes += response.body.count + key.utf8.count
    }

    /// Drops every entry.
    func clear() {
        entries.removeAll(keepingCapacity: true)
        bytes = 0
    }

    /// Number of entries held.
    var count: Int { entries.count }
}
