import EPFFormat
import EPFSchema
import EPFSQLite
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
    }

    package var database: String
    package var sizeBytes: Int64
    package var tables: [Table]
    package var lastImports: [Import]
    package var derived: [Derived] = []
    /// Set when the tables come from more than one full export (see `MixedExports`).
    package var mixedExports: MixedExports?
    /// The storefronts and languages the database keeps (`--storefronts`, `--languages`).
    package var selection = RowSelection()
    /// Whether imports record price history (`--history prices`), and how many changes they recorded.
    package var priceHistory = false
    package var priceChanges: Int64 = 0
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
    /// True when the tables are not all of one export sequence: some come from an older full (`mixedExports`) or
    /// are held back by a failure.
    package var mixed = false

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
        for failure in failures {
            guard let limit = failure.day.flatMap(ImportFailures.midnight) else { continue }
            for table in ImportFailures.affectedTables(failure, lastFeeds: feeds) { hold(table, before: limit) }
        }
        for entry in mixedExports?.behind ?? [] { hold(entry.table, before: nil) }
        dataAsOf = asOf
        mixed = mixedExports != nil || heldBack
    }

    /// The fulls of tables this status lists (a table dropped since is no longer behind), with a known date.
    package func present(_ fulls: [MixedExports.TableFull]) -> [MixedExports.TableFull] {
        let names = Set(tables.map(\.name))
        return fulls.filter { names.contains($0.table) && !$0.date.isEmpty }
    }

    /// Reads the status through any connection (read-only is enough). Tables without bookkeeping rows (made by an
    /// older version or by hand) are counted directly.
    package static func read(_ connection: SQLiteConnection, databasePath: String, lastImports: Int = 10) throws
        -> StoreStatus {
        var size: Int64 = 0
        for suffix in ["", "-wal"] {
            if let attributes = try? FileManager.default.attributesOfItem(atPath: databasePath + suffix),
               let bytes = attributes[.size] as? NSNumber {
                size += bytes.int64Value
            }
        }
        var tables: [Table] = []
        let hasBookkeeping = try connection.tableExists("epf_tables")
        var known = Set<String>()
        if hasBookkeeping {
            let statement = try connection.prepare(
                "SELECT table_name, rows, export_date, mode, updated FROM epf_tables ORDER BY table_name")
            while try statement.step() {
                let name = statement.text(at: 0) ?? ""
                guard try connection.tableExists(name) else { continue }
                known.insert(name)
                tables.append(Table(name: name, rows: statement.int64(at: 1) ?? 0, exportDate: statement.int64(at: 2),
                                    mode: statement.text(at: 3), updated: statement.text(at: 4)))
            }
        }
        let others = try connection.query("""
            SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'epf\\_%' ESCAPE '\\'
            AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name
            """)
        for row in others {
            guard case .text(let name) = row.first, !known.contains(name) else { continue }
            let count = try connection.scalar("SELECT count(*) FROM \(SQLiteConnection.quote(name))")
            var rows: Int64 = 0
            if case .integer(let value) = count { rows = value }
            tables.append(Table(name: name, rows: rows, exportDate: nil, mode: nil, updated: nil))
        }
        tables.sort { $0.name < $1.name }
        var derived: [Derived] = []
        if try connection.tableExists("epf_derived") {
            let current = try DerivedData.currentStamp(connection)
            for row in try connection.query("SELECT name, stamp, built FROM epf_derived ORDER BY name") {
                guard row.count == 3, case .text(let name) = row[0] else { continue }
                var built: String?
                if case .text(let text) = row[2] { built = text }
                derived.append(Derived(name: name, built: built, current: row[1] == .integer(current)))
            }
        }
        var imports: [Import] = []
        if try connection.tableExists("epf_ledger") {
            // A database made before repairs were counted has no `repaired` column (read-only: not added here).
            let repaired = try StoreDatabase.hasColumn(connection, table: "epf_ledger", column: "repaired")
                ? "repaired" : "0"
            let statement = try connection.prepare("""
                SELECT table_name, location, mode, export_date, rows, rejects, duplicates, finished, outcome, message,
                    \(repaired)
                FROM epf_ledger ORDER BY id DESC LIMIT ?1
                """)
            try statement.bind(.integer(Int64(lastImports)), at: 1)
            while try statement.step() {
                imports.append(Import(table: statement.text(at: 0) ?? "", location: statement.text(at: 1) ?? "",
                                      mode: statement.text(at: 2), exportDate: statement.int64(at: 3),
                                      rows: statement.int64(at: 4) ?? 0, rejects: statement.int64(at: 5) ?? 0,
                                      repaired: statement.int64(at: 10) ?? 0,
                                      duplicates: statement.int64(at: 6) ?? 0, finished: statement.text(at: 7),
                                      outcome: statement.text(at: 8) ?? "", message: statement.text(at: 9)))
            }
        }
        var status = StoreStatus(database: databasePath, sizeBytes: size, tables: tables, lastImports: imports,
                                 derived: derived)
        if try connection.tableExists("epf_settings") {
            let ledger = Ledger(connection: connection)
            status.selection = try ledger.storedSelection()
            status.priceHistory = try ledger.setting(PriceHistory.setting) == "prices"
        }
        if let rows = try PriceHistorySequence.rows(connection) {
            // Kept by the loads, without counting the table.
            status.priceChanges = rows
        }
        if try connection.tableExists("epf_ledger") {
            var fulls: [MixedExports.TableFull] = []
            for row in try connection.query(MixedExports.lastFullsSQL(ledger: "epf_ledger")) where row.count == 6 {
                guard case .text(let table) = row[0], case .text(let source) = row[1] else { continue }
                func text(_ value: SQLValue) -> String? { if case .text(let text) = value { text } else { nil } }
                func integer(_ value: SQLValue) -> Int64? {
                    if case .integer(let value) = value { value } else { nil }
                }
                fulls.append(MixedExports.TableFull(table: table, source: source, feed: text(row[2]),
                                                    feedDate: text(row[3]), exportDate: integer(row[4]),
                                                    order: integer(row[5]) ?? 0))
            }
            status.mixedExports = MixedExports.find(status.present(fulls))
            let entries = try connection.query(ImportFailures.ledgerSQL(ledger: "epf_ledger")).map(Self.entry)
            try status.settleClaims(ledger: entries) {
                var feeds: [String: String?] = [:]
                for row in try connection.query(ImportFailures.lastFeedsSQL(ledger: "epf_ledger")) where row.count == 2 {
                    guard case .text(let table) = row[0] else { continue }
                    if case .text(let feed) = row[1] { feeds[table] = feed } else { feeds[table] = .some(nil) }
                }
                return feeds
            }
        } else {
            status.dataAsOf = status.exportDate
        }
        return status
    }

    /// A ledger row of `ImportFailures.ledgerSQL`.
    private static func entry(_ row: [SQLValue]) -> ImportFailures.Entry {
        func text(_ index: Int) -> String? {
            guard index < row.count, case .text(let text) = row[index] else { return nil }
            return text
        }
        func integer(_ index: Int) -> Int64? {
            guard index < row.count, case .integer(let value) = row[index] else { return nil }
            return value
        }
        return ImportFailures.Entry(id: integer(0) ?? 0, table: text(1) ?? "", location: text(2) ?? "",
                                    source: text(3) ?? "", feed: text(4), feedDate: text(5), exportDate: integer(6),
                                    mode: text(7), outcome: text(8) ?? "", finished: text(9), message: text(10))
    }
}
