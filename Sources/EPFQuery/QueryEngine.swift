import EPFSQLite
import JSONText

/// Answers questions about an imported EPF database: one read session (`ReadSession`: the connection, the
/// snapshot, the statement cache) and the small services that query through it.
///
/// Not `Sendable`: create one engine per thread. Each public call of a service runs in one read transaction of
/// the session, so it sees one consistent snapshot; a call made inside another joins its transaction.
package final class QueryEngine {
    /// The storefront whose prices are shown when a query names no country.
    package static let defaultCountry = "us"

    /// The connection, the snapshot and the statement cache every service reads through.
    package let session: ReadSession
    /// Lookups by Apple ID or store link, the objects of every kind, stored lookup documents, storefront sales.
    package let lookups: LookupQueries
    /// Full-text search over titles and names.
    package let search: SearchQueries
    /// What full exports removed or added (`epf_changes`).
    package let changes: ChangeQueries
    /// Prices, storefronts, genres, the data's export date.
    package let catalogue: CatalogueQueries
    /// Apple's Lookup and Search API: match keys, related items, Apple's result objects.
    package let apple: AppleQueries
    /// Read-only SQL.
    package let sql: SQLQueries
    /// The app charts of the popularity feed.
    package let charts: ChartQueries
    /// An app's ranks in the charts, today's and each recorded day's.
    package let ranks: RankQueries

    /// The database path the engine reads.
    package var databasePath: String { session.databasePath }

    /// Opens the database read-only (see `ReadSession.init`) and the services over it.
    package init(databasePath: String, useLookupDocuments: Bool = true, mappedReads: Bool = true,
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
        ranks = RankQueries(session: session)
    }

    /// Whether the database holds a table (as of the last change seen).
    package func hasTable(_ name: String) -> Bool { session.hasTable(name) }

    /// Runs `body` with every statement of the engine stopped once `milliseconds` have passed: a query still
    /// running then throws `QueryError.sqlite` (or `SQLiteError`) whose error `isInterrupt`.
    package func withTimeLimit<T>(milliseconds: Int, _ body: () throws -> T) rethrows -> T {
        try session.connection.withTimeLimit(milliseconds: milliseconds, body)
    }

    /// Runs `body` in one read transaction of the session (see `ReadSession.withSnapshot`).
    package func withSnapshot<T>(_ body: (_ dataVersion: Int64) throws -> T) throws -> T {
        try session.withSnapshot(body)
    }
}
