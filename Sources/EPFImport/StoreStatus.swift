import EPFFormat
import Foundation

/// What the database holds: tables with row counts and export dates, the last imports, the file size.
package struct StoreStatus: Sendable {
    /// One EPF table.
    package struct Table: Sendable {
        package var name: String
        package var rows: Int64
        package var exportDate: Int64?
        package var mode: String?
        package var updated: String?

        package init(name: String, rows: Int64, exportDate: Int64?, mode: String?, updated: String?) {
            self.name = name
            self.rows = rows
            self.exportDate = exportDate
            self.mode = mode
            self.updated = updated
        }
    }

    /// One ledger row.
    package struct Import: Sendable {
        package var table: String
        package var location: String
        package var mode: String?
        package var exportDate: Int64?
        package var rows: Int64
        package var rejects: Int64
        /// Values stored as NULL because they were not of their column's type (rows kept).
        package var repaired: Int64
        package var duplicates: Int64
        package var finished: String?
        package var outcome: String
        package var message: String?

        package init(table: String, location: String, mode: String?, exportDate: Int64?, rows: Int64, rejects: Int64,
                     repaired: Int64, duplicates: Int64, finished: String?, outcome: String, message: String?) {
            self.table = table
            self.location = location
            self.mode = mode
            self.exportDate = exportDate
            self.rows = rows
            self.rejects = rejects
            self.repaired = repaired
            self.duplicates = duplicates
            self.finished = finished
            self.outcome = outcome
            self.message = message
        }
    }

    /// Derived data (the lookup documents) and whether it is that of the current tables.
    package struct Derived: Sendable {
        package var name: String
        package var built: String?
        /// False when a table changed after it was built: readers then ignore it until the next import.
        package var current: Bool

        package init(name: String, built: String?, current: Bool) {
            self.name = name
            self.built = built
            self.current = current
        }
    }

    package var database: String
    package var sizeBytes: Int64
    package var tables: [Table]
    package var lastImports: [Import]
    package var derived: [Derived] = []
    /// Set when the tables come from more than one full export (see `MixedExports`).
    package var mixedExports: MixedExports?
    /// Tables the newest full of their feed no longer contained, kept as of their last full (`RetiredTables`):
    /// not behind, not counted toward `mixed`.
    package var retired: [RetiredTable] = []
    /// The storefronts and languages the database keeps (`--storefronts`, `--languages`).
    package var selection = RowSelection()
    /// Whether imports record price history (`--history prices`), and how many changes they recorded.
    package var priceHistory = false
    package var priceChanges: Int64 = 0
    /// Whether imports record each day's ranks (`--history ranks`), the days held (distinct export dates of any
    /// chart) and the newest.
    package var rankHistory = false
    package var rankDays = 0
    package var rankNewestDay: Int64?
    package init(database: String, sizeBytes: Int64, tables: [Table], lastImports: [Import], derived: [Derived] = [],
                 mixedExports: MixedExports? = nil) {
        self.database = database
        self.sizeBytes = sizeBytes
        self.tables = tables
        self.lastImports = lastImports
        self.derived = derived
        self.mixedExports = mixedExports
    }

    /// Files that failed and that nothing applied since made up for (`ImportFailures`), oldest first.
    package var failures: [ImportFailure] = []
    /// The date the data is complete as of (ms since 1970): the newest export date of any table, unless a failure
    /// or an older full holds a table back, then that table's date (`settleClaims`).
    package var dataAsOf: Int64?
    /// True when the tables are not all of one export sequence: some come from an older full (`mixedExports`), are
    /// held back by a failure, are `missing`, or hold incrementals only (`incrementalOnly`).
    package var mixed = false
    /// What open failures name that the database holds nothing of: a table never applied (an incremental refused
    /// for want of its full), or a feed none of whose tables is held (its archive failed); the data is not
    /// complete as of any date for them.
    package var missing: [String] = []
    /// Tables loaded from incrementals alone (`--force` created them: the ledger shows no full applied to them),
    /// which hold only the rows those incrementals changed; set by the store's reader before `settleClaims`.
    package var incrementalOnly: [String] = []
    /// True while an import holds the database's import lock: the tables are what it committed so far.
    package var importRunning = false

    /// The newest export date over all tables (ms since 1970).
    package var exportDate: Int64? { tables.compactMap(\.exportDate).max() }

    /// Sets `failures`, `dataAsOf` and `mixed` from the ledger rows since the first failure (`ImportFailures`)
    /// and the feed each table was last applied from; call after `tables` and `mixedExports` are set.
    package mutating func settleClaims(ledger entries: [ImportFailures.Entry], lastFeeds: () throws -> [String: String?])
        rethrows {
        failures = ImportFailures.open(entries)
        var asOf = exportDate
        var heldBack = false
        func hold(_ table: String, before limit: Int64?) {
            guard let date = tables.first(where: { $0.name == table })?.exportDate else { return }
            if let limit, date >= limit { return }
            heldBack = true
            asOf = min(asOf ?? date, date)
        }
        let feeds = failures.contains { $0.table == nil } ? try lastFeeds() : [:]
        let held = Set(tables.map(\.name))
        missing = []
        for failure in failures {
            let affected = ImportFailures.affectedTables(failure, lastFeeds: feeds)
            if let table = failure.table, !held.contains(table) {
                if !missing.contains(table) { missing.append(table) }
            } else if failure.table == nil, let feed = failure.feed, affected.isEmpty {
                let name = "\(feed) feed"
                if !missing.contains(name) { missing.append(name) }
            }
            guard let limit = failure.day.flatMap(ImportFailures.midnight) else { continue }
            for table in affected { hold(table, before: limit) }
        }
        for entry in mixedExports?.behind ?? [] { hold(entry.table, before: nil) }
        dataAsOf = asOf
        mixed = mixedExports != nil || heldBack || !missing.isEmpty || !incrementalOnly.isEmpty
    }

    /// The SQL (SQLite and PostgreSQL alike) of the tables the ledger shows applied, but never from a full export:
    /// table_name. A row without a mode (an earlier version's) counts as a full.
    package static func incrementalOnlySQL(ledger: String) -> String {
        """
        SELECT table_name FROM \(ledger) WHERE outcome = 'applied' GROUP BY table_name
        HAVING sum(CASE WHEN mode = 'INCREMENTAL' THEN 0 ELSE 1 END) = 0 ORDER BY table_name
        """
    }

    /// Sets `incrementalOnly` from the rows of `incrementalOnlySQL`, keeping the tables this status lists.
    package mutating func setIncrementalOnly(_ names: [String]) {
        let listed = Set(tables.map(\.name))
        incrementalOnly = names.filter { listed.contains($0) }.sorted()
    }

    /// Sets `retired` and `mixedExports` from each table's last full (`MixedExports.lastFullsSQL`) and the recorded
    /// tables of a full export (`RetiredTables.find`'s `listing`): a retired table is not behind.
    package mutating func setFulls(_ fulls: [MixedExports.TableFull],
                                   listing: (_ feed: String, _ date: String) throws -> Set<String>?) rethrows {
        let listed = present(fulls)
        retired = try RetiredTables.find(fulls: listed, listing: listing)
        let names = Set(retired.map(\.table))
        mixedExports = MixedExports.find(listed.filter { !names.contains($0.table) })
    }

    /// The fulls of tables this status lists (a table dropped since is no longer behind), with a known date.
    package func present(_ fulls: [MixedExports.TableFull]) -> [MixedExports.TableFull] {
        let names = Set(tables.map(\.name))
        return fulls.filter { names.contains($0.table) && !$0.date.isEmpty }
    }
}
