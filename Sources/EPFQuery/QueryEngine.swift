import EPFSQLite
import JSONText

/// Answers questions about an imported EPF database: one read session (`ReadSession`: the connection, the
/// snapshot, the statement cache) and the small services that query through it.
///
/// Not `Sendable`: create one engine per thread. Each public call of a service runs in one read transaction of
/// the session, so it sees one consistent snapshot; a call made inside another joins its transaction.
public final class QueryEngine {
    /// The storefront whose prices are shown when a query names no country.
    public static let defaultCountry = "us"

    /// The connection, the snapshot and the statement cache every service reads through.
    public let session: ReadSession
    /// Lookups by Apple ID or store link, the objects of every kind, stored lookup documents, storefront sales.
    public let lookups: LookupQueries
    /// Full-text search over titles and names.
    public let search: SearchQueries
    /// What full exports removed or added (`epf_changes`).
    public let changes: ChangeQueries
    /// Prices, storefronts, genres, the data's export date.
    public let catalogue: CatalogueQueries
    /// Apple's Lookup and Search API: match keys, related items, Apple's result objects.
    public let apple: AppleQueries
    /// Read-only SQL.
    public let sql: SQLQueries
    /// The app charts of the popularity feed.
    public let charts: ChartQueries

    /// The database path the engine reads.
    public var databasePath: String { session.databasePath }

    /// Opens the database read-only (see `ReadSession.init`) and the services over it.
    public init(databasePath: String, useLookupDocuments: Bool = true, mappedReads: Bool = true,
                workload: ReadSession.ReadWorkload = .lookups) throws {
        session = try ReadSession(databasePath: databasePath, useLookupDocuments: useLookupDocuments,
                                  mappedReads: mappedReads, workload: workload)
        lookups = LookupQueries(session: session)
        changes = ChangeQueries(session: session)
        lookups.changes = changes
        search = SearchQueries(session: session, lookups: lookups)
        catalogue = CatalogueQueries(session: session, lookups: lookups)
        apple = AppleQueries(session: session, lookups: lookups, search: search)
        sql = SQLQueries(session: session)
        charts = ChartQueries(session: session, lookups: lookups)
    }

    /// Whether the database holds a table (as of the last change seen).
    public func hasTable(_ name: String) -> Bool { session.hasTable(name) }

    /// Runs `body` with every statement of the engine stopped once `milliseconds` have passed: a query still
    /// running then throws `QueryError.sqlite` (or `SQLiteError`) whose error `isInterrupt`.
    public func withTimeLimit<T>(milliseconds: Int, _ body: () throws -> T) rethrows -> T {
        try session.connection.withTimeLimit(milliseconds: milliseconds, body)
    }

    /// Runs `body` in one read transaction of the session (see `ReadSession.withSnapshot`).
    public func withSnapshot<T>(_ body: (_ dataVersion: Int64) throws -> T) throws -> T {
        try session.withSnapshot(body)
    }
}
