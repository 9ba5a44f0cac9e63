import EPFSchema
import Glibc
import HTTPTransport

/// Settings of the EPF HTTP API on top of the transport's.
package struct EPFServerConfiguration: Sendable {
    /// The SQLite database written by `epf import`; opened read-only by every worker.
    package var databasePath: String
    /// Transport settings (address, threads, limits, timeouts, access log).
    package var http: HTTPServerConfiguration
    /// Most IDs and links one `/v1/lookup` call may carry; more gets 400.
    package var maxLookupIds = 200
    /// Seconds between checks that the database file is still the same (inode and device).
    package var fileCheckInterval = 1.0
    /// Most rendered responses each worker keeps for repeated requests (0 turns the cache off).
    ///
    /// Entries are dropped whenever the database changes (`PRAGMA data_version`), so answers stay exact.
    package var responseCacheEntries = 10_000
    /// Most body bytes each worker's response cache holds.
    package var responseCacheBytes = 32 * 1024 * 1024
    /// Longest a query of a route that may scan (search, changes, the status count) may run on the event loop;
    /// a query still running then is stopped and answered with 503 and `Retry-After`.
    package var queryTimeLimitMilliseconds = 2000
    /// Reads the importer's account of the database for `/v1/status` and the claims of `/healthz` (the executable
    /// passes EPFStore's `StoreStatusReader`). Without one, `/v1/status` answers 503 and `/healthz` claims what the
    /// data alone says (its newest export date, not mixed, no failures), as for a database without bookkeeping.
    package var status: (any DatabaseStatusReader)?

    /// Creates a configuration for a database path with default transport settings.
    package init(databasePath: String, http: HTTPServerConfiguration = HTTPServerConfiguration(),
                status: (any DatabaseStatusReader)? = nil) {
        self.databasePath = databasePath
        self.http = http
        self.status = status
    }
}

/// The EPF API server: `EPFRoutes` responders (one `QueryEngine` per worker) on an `HTTPServer`.
package enum EPFAPI {
    /// Builds a server over the database; call `start()` on it.
    ///
    /// Throws `QueryError.databaseMissing` / `.databaseEmpty` (from the first worker's engine, when `start()`
    /// runs) if the database is absent or unreadable at start; later disappearances give 503 until it is back.
    package static func makeServer(_ configuration: EPFServerConfiguration) -> HTTPServer {
        let metrics = ServerMetrics()
        let started = Int64(time(nil))
        return HTTPServer(configuration: configuration.http, metrics: metrics) { _ in
            try EPFRoutes(configuration: configuration, metrics: metrics, startedAt: started)
        }
    }
}
