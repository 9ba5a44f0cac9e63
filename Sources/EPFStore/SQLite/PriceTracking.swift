import EPFSQLite
import Foundation

/// Price history of one SQLite table load (see `PriceHistory`); nil for tables that are not price tables, or when
/// the import does not record history.
struct PriceTracking {
    let table: String
    let kind: String
    let key: String
    /// Whether the table existed when the load began (the first load is the baseline).
    let existed: Bool
    private static let noted = "temp.epf_price_noted"

    init?(_ connection: SQLiteConnection, table: String, enabled: Bool) throws {
        guard enabled, let tracked = PriceHistory.tracked[table] else { return nil }
        self.table = table
        kind = tracked.kind
        key = tracked.key
        existed = try connection.tableExists(table)
    }

    private static func quote(_ name: String) -> String { SQLiteConnection.quote(name) }

    /// Whether a table has the key and the price columns.
    private func hasColumns(_ connection: SQLiteConnection, _ table: String) throws -> Bool {
        for column in [key] + PriceHistory.columns {
            guard try StoreDatabase.hasColumn(connection, table: table, column: column) else { return false }
        }
        return true
    }

    private static func createTable(_ connection: SQLiteConnection) throws {
        try connection.execute(PriceHistory.schema(qualifiedTable: PriceHistory.table, serial: "INTEGER PRIMARY KEY"))
    }

    private func insertStatement(_ connection: SQLiteConnection) throws -> SQLiteStatement {
        try connection.prepare("""
            INSERT OR IGNORE INTO \(PriceHistory.table)
                (export_date, kind, id, storefront_id, change, old_price, new_price, currency)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
            """)
    }

    // MARK: Full exports

    /// One row of a price table as the merge reads it.
    private struct PriceRow {
        let item: Int64
        let storefront: Int64
        let price: Double?
        let currency: String?

        func precedes(_ other: PriceRow) -> Bool { (item, storefront) < (other.item, other.storefront) }
    }

    /// The keys of a table were not in order in rowid order: the merge starts again in index order.
    private struct OutOfOrder: Error {}

    /// Records what replacing the table with `staging` changes, in the caller's swap transaction: a merge of both
    /// tables read in key order. Each is first read in rowid order (sequential, no index; Apple's files and the
    /// generator's list a table in key order, so its rowids are); at the first key out of order the rows recorded
    /// so far are rolled back and both tables are read through their key indexes instead. Nothing is recorded on
    /// the first load or when either table lacks a price column.
    func recordFull(_ connection: SQLiteConnection, staging: String, exportDate: Int64?, feedDate: String?) throws {
        guard existed, try connection.tableExists(table), try hasColumns(connection, table),
              try hasColumns(connection, staging) else { return }
        try Self.createTable(connection)
        let date = ChangeLog.exportDate(exportDate, feedDate: feedDate)
        let insert = try insertStatement(connection)
        try connection.execute("SAVEPOINT epf_price_merge")
        do {
            try merge(connection, staging: staging, ordered: false, date: date, insert: insert)
        } catch is OutOfOrder {
            try connection.execute("ROLLBACK TO epf_price_merge")
            try merge(connection, staging: staging, ordered: true, date: date, insert: insert)
        }
        try connection.execute("RELEASE epf_price_merge")
    }

    private func merge(_ connection: SQLiteConnection, staging: String, ordered: Bool, date: Int64,
                       insert: SQLiteStatement) throws {
        let columns = ([key] + PriceHistory.columns).map(Self.quote).joined(separator: ", ")
        let order = ordered ? " WHERE \(Self.quote(key)) IS NOT NULL ORDER BY \(Self.quote(key)), storefront_id" : ""
        let old = try connection.prepare("SELECT \(columns) FROM \(Self.quote(table))\(order)")
        let new = try connection.prepare("SELECT \(columns) FROM \(Self.quote(staging))\(order)")
        func next(_ statement: SQLiteStatement, after previous: PriceRow?) throws -> PriceRow? {
            while try statement.step() {
                guard let item = statement.int64(at: 0), let storefront = statement.int64(at: 1) else { continue }
                let row = PriceRow(item: item, storefront: storefront, price: statement.double(at: 2),
                                   currency: statement.text(at: 3))
                if let previous, !previous.precedes(row) { throw OutOfOrder() }
                return row
            }
            return nil
        }
        /// Records a change; `oldText` and `newText` are the prices as stored, read from the statements' current
        /// rows only for the rows recorded (a few percent).
        func record(_ row: PriceRow, _ change: String, oldText: String?, newText: String?, currency: String?) throws {
            try insert.bind([.integer(date), .text(kind), .integer(row.item), .integer(row.storefront), .text(change),
                             oldText.map { .text($0) } ?? .null, newText.map { .text($0) } ?? .null,
                             currency.map { .text($0) } ?? .null])
            _ = try insert.step()
            insert.reset()
        }
        var left = try next(old, after: nil)
        var right = try next(new, after: nil)
        while true {
            switch (left, right) {
            case (nil, nil):
                return
            case (let gone?, nil):
                try record(gone, "disappeared", oldText: old.text(at: 2), newText: nil, currency: gone.currency)
                left = try next(old, after: gone)
            case (nil, let arrived?):
                try record(arrived, "appeared", oldText: nil, newText: new.text(at: 2), currency: arrived.currency)
                right = try next(new, after: arrived)
            case (let before?, let after?):
                if before.precedes(after) {
                    try record(before, "disappeared", oldText: old.text(at: 2), newText: nil,
                               currency: before.currency)
                    left = try next(old, after: before)
                } else if after.precedes(before) {
                    try record(after, "appeared", oldText: nil, newText: new.text(at: 2), currency: after.currency)
                    right = try next(new, after: after)
                } else {
                    if before.price != after.price || before.currency != after.currency {
                        try record(after, "changed", oldText: old.text(at: 2), newText: new.text(at: 2),
                                   currency: after.currency)
                    }
                    left = try next(old, after: before)
                    right = try next(new, after: after)
                }
            }
        }
    }

    // MARK: Incrementals

    /// Starts noting what an incremental changes: TEMP triggers write each key it inserts (`appeared`) and the
    /// price and currency a key had before its first update whose price or currency differs. Call inside the
    /// load's transaction. Does nothing on the first load of the table.
    func beginIncremental(_ connection: SQLiteConnection) throws {
        guard existed, try hasColumns(connection, table) else { return }
        let target = "main." + Self.quote(table)
        let item = Self.quote(key)
        let differs = "CAST(old.retail_price AS REAL) IS NOT CAST(new.retail_price AS REAL) "
            + "OR old.currency_code IS NOT new.currency_code"
        try connection.execute("""
            DROP TRIGGER IF EXISTS temp.epf_price_insert;
            DROP TRIGGER IF EXISTS temp.epf_price_update;
            DROP TABLE IF EXISTS \(Self.noted);
            CREATE TEMP TABLE epf_price_noted (id INTEGER NOT NULL, storefront_id INTEGER NOT NULL,
                old_price TEXT, old_currency TEXT, appeared INTEGER NOT NULL, PRIMARY KEY (id, storefront_id))
                WITHOUT ROWID;
            CREATE TEMP TRIGGER epf_price_insert AFTER INSERT ON \(target)
                WHEN new.\(item) IS NOT NULL AND new.storefront_id IS NOT NULL
                BEGIN INSERT INTO epf_price_noted VALUES (new.\(item), new.storefront_id, NULL, NULL, 1)
                    ON CONFLICT (id, storefront_id) DO NOTHING; END;
            CREATE TEMP TRIGGER epf_price_update AFTER UPDATE ON \(target) WHEN \(differs)
                BEGIN INSERT INTO epf_price_noted
                    VALUES (old.\(item), old.storefront_id, old.retail_price, old.currency_code, 0)
                    ON CONFLICT (id, storefront_id) DO NOTHING; END;
            """)
    }

    /// Records the noted keys whose price or currency now differs from before (or that appeared), then removes the
    /// triggers; before the load commits.
    func finishIncremental(_ connection: SQLiteConnection, exportDate: Int64?, feedDate: String?) throws {
        guard try connection.scalar("SELECT 1 FROM temp.sqlite_schema WHERE name = 'epf_price_noted'") != nil else {
            return
        }
        try Self.createTable(connection)
        let item = Self.quote(key)
        let copy = try connection.prepare("""
            INSERT OR IGNORE INTO \(PriceHistory.table)
                (export_date, kind, id, storefront_id, change, old_price, new_price, currency)
            SELECT ?1, ?2, n.id, n.storefront_id, CASE n.appeared WHEN 1 THEN 'appeared' ELSE 'changed' END,
                n.old_price, t.retail_price, t.currency_code
            FROM \(Self.noted) AS n JOIN main.\(Self.quote(table)) AS t
                ON t.\(item) = n.id AND t.storefront_id = n.storefront_id
            WHERE n.appeared = 1 OR CAST(n.old_price AS REAL) IS NOT CAST(t.retail_price AS REAL)
                OR n.old_currency IS NOT t.currency_code
            ORDER BY n.id, n.storefront_id
            """)
        try copy.bind([.integer(ChangeLog.exportDate(exportDate, feedDate: feedDate)), .text(kind)])
        _ = try copy.step()
        try connection.execute("""
            DROP TRIGGER IF EXISTS temp.epf_price_insert;
            DROP TRIGGER IF EXISTS temp.epf_price_update;
            DROP TABLE IF EXISTS \(Self.noted);
            """)
    }
}
