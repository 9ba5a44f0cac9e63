import HTTPTransport

/// Rendered responses of one worker, reused until the database changes.
///
/// Keyed by the request target and tied to one data version (`PRAGMA data_version` of the query engine's
/// snapshot, see `QueryEngine.withSnapshot`): the version changes whenever another connection (the importer)
/// commits, and then every entry is dropped, so a cached answer is never older than the data a fresh query
/// would read. Bounded in entries and bytes: when either bound is reached the cache is emptied and refills with
/// what is asked for next. Not thread-safe (one per worker, like `QueryEngine`).
final class ResponseCache {
    private var version: Int64?
    private var entries: [String: HTTPResponse] = [:]
    private var bytes = 0
    private let maxEntries: Int
    private let maxBytes: Int
    /// Largest body worth keeping.
    static let maxBodyBytes = 256 * 1024

    init(maxEntries: Int, maxBytes: Int) {
        self.maxEntries = maxEntries
        self.maxBytes = maxBytes
    }

    /// Drops every entry when the data version is not the one the entries were made from; returns true when
    /// entries were dropped because the data changed (not on first use).
    func validate(dataVersion: Int64) -> Bool {
        guard dataVersion != version else { return false }
        clear()
        let first = version == nil
        version = dataVersion
        return !first
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
