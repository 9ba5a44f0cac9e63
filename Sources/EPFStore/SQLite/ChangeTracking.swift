import EPFFormat
import EPFSchema
import EPFSQLite
import Foundation

/// Change tracking of one table load (see `ChangeLog`); nil for tables that are not tracked.
struct ChangeTracking {
    let table: String
    let kind: String
    /// Whether the table existed when the load began (an incremental into a new table is its baseline).
    let existed: Bool
    private var key: String { table + "_id" }
    private static let touched = "temp.epf_touched"

    /// Tracking for `table`, nil when it is not a catalogue table or tracking is off (`EPF_TRACK_CHANGES=0`).
    init?(_ connection: SQLiteConnection, table: String) throws {
        guard ChangeLog.enabled, let kind = ChangeLog.kinds[table] else { return nil }
        self.table = table
        self.kind = kind
        existed = try connection.tableExists(table)
    }

    private func hasKey(_ connection: SQLiteConnection, _ table: String) throws -> Bool {
        try StoreDatabase.hasColumn(connection, table: table, column: key)
    }

    // MARK: Full exports

    /// Records what replacing the table with `staging` changes: ids only in the table `removed`, ids only in
    /// `staging` `added` (a change already recorded gets a new `seq`, so it is the id's latest). Runs in the
    /// caller's swap transaction, before the rename. Records nothing when the table does not exist (the first load)
    /// or either table lacks the key column.
    ///
    /// The comparison reads `staging`'s index of its keys alone (see `indexKeys`), made when the staging table
    /// was, or now when the load was begun by a version without it.
    func recordFull(_ connection: SQLiteConnection, staging: String, exportDate: Int64?, feedDate: String?) throws {
        guard try hasKey(connection, staging) else { return }
        if try connection.scalar("SELECT 1 FROM sqlite_schema WHERE type = 'index' AND tbl_name = ?1 "
                                 + "AND name GLOB ?2", [.text(staging), .text("\(table)__key__*")]) == nil {
            try indexKeys(connection, staging: staging)
        }
        guard try connection.tableExists(table), try hasKey(connection, table) else { return }
        try connection.execute(ChangeLog.schema)
        let date = ChangeLog.exportDate(exportDate, feedDate: feedDate)
        // A change recorded before (the same full applied again with --force, after a later one) is moved to the
        // end (a new `seq`), not left where it was: the last change recorded for an id is what lookups report.
        let insert = try connection.prepare("""
            INSERT INTO epf_changes (export_date, kind, id, change) VALUES (?1, ?2, ?3, ?4)
            ON CONFLICT (id, kind, export_date, change) DO UPDATE SET seq = (SELECT max(seq) FROM epf_changes) + 1
            """)
        func record(_ id: Int64, _ change: String) throws {
            try insert.bind([.integer(date), .text(kind), .integer(id), .text(change)])
            _ = try insert.step()
            insert.reset()
        }
        if try isRowidKey(connection, table), try isRowidKey(connection, staging) {
            try mergeKeys(connection, old: table, new: staging, removed: { try record($0, "removed") },
                          added: { try record($0, "added") })
        } else {
            // Keys stored as text or not the rowid: an anti-join each way (slower, but any table works).
            let column = SQLiteConnection.quote(key)
            for (from, other, change) in [(table, staging, "removed"), (staging, table, "added")] {
                let rows = try connection.prepare("""
                    SELECT CAST(\(column) AS INTEGER) FROM \(SQLiteConnection.quote(from)) AS a
                    WHERE \(column) IS NOT NULL AND NOT EXISTS
                        (SELECT 1 FROM \(SQLiteConnection.quote(other)) AS b WHERE b.\(column) = a.\(column))
                    """)
                while try rows.step() {
                    if let id = rows.int64(at: 0) { try record(id, change) }
                }
            }
        }
    }

    /// Gives a new, empty staging table an index of its keys alone (about 12 bytes a row, where a row of the
    /// catalogue tables is up to a few KB), filled as rows are inserted: the comparison of `recordFull` reads it
    /// instead of the whole table, now and when the next full export replaces this one (whose table may no longer
    /// be in the page cache by then).
    func indexKeys(_ connection: SQLiteConnection, staging: String) throws {
        guard try hasKey(connection, staging) else { return }
        let token = String(UInt64(Date().timeIntervalSince1970 * 1000), radix: 36)
            + String(UInt32.random(in: 0...UInt32.max), radix: 36)
        try connection.execute("CREATE INDEX \(SQLiteConnection.quote("\(table)__key__\(token)")) ON "
                               + "\(SQLiteConnection.quote(staging)) (\(SQLiteConnection.quote(key)))")
    }

    /// Whether the key column is the table's INTEGER PRIMARY KEY (the rowid): then both scans below read the
    /// keys in order without sorting (from the key index when the table has one, else from the table).
    private func isRowidKey(_ connection: SQLiteConnection, _ table: String) throws -> Bool {
        let rows = try connection.query("SELECT name, upper(type) FROM pragma_table_info(?1) WHERE pk > 0",
                                        [.text(table)])
        return rows.count == 1 && rows[0][0] == .text(key) && rows[0][1] == .text("INTEGER")
    }

    /// Walks the keys of both tables in order at once (a merge join: two sequential scans, no lookups), calling
    /// `removed` for keys only in `old` and `added` for keys only in `new`.
    private func mergeKeys(_ connection: SQLiteConnection, old: String, new: String,
                           removed: (Int64) throws -> Void, added: (Int64) throws -> Void) throws {
        let column = SQLiteConnection.quote(key)
        let oldKeys = try connection.prepare("SELECT \(column) FROM \(SQLiteConnection.quote(old)) ORDER BY \(column)")
        let newKeys = try connection.prepare("SELECT \(column) FROM \(SQLiteConnection.quote(new)) ORDER BY \(column)")
        func next(_ statement: SQLiteStatement) throws -> Int64? {
            try statement.step() ? statement.int64(at: 0) : nil
        }
        var left = try next(oldKeys)
        var right = try next(newKeys)
        while true {
            switch (left, right) {
            case (nil, nil):
                return
            case (let gone?, nil):
                try removed(gone)
                left = try next(oldKeys)
            case (nil, let arrived?):
                try added(arrived)
                right = try next(newKeys)
            case (let gone?, let arrived?):
                if gone == arrived {
                    left = try next(oldKeys)
                    right = try next(newKeys)
                } else if gone < arrived {
                    try removed(gone)
                    left = try next(oldKeys)
                } else {
                    try added(arrived)
                    right = try next(newKeys)
                }
            }
        }
    }

    // MARK: Incrementals

    /// Starts noting the keys an incremental inserts or updates: TEMP triggers on the table write them to a TEMP
    /// table (the first change of a key wins, so a key inserted and then updated stays `added`). Call inside the
    /// load's transaction, so a rollback removes them. Does nothing when the table did not exist (the baseline).
    ///
    /// The triggers skip a key already noted with an upsert clause (`ON CONFLICT (id) DO NOTHING`), not with
    /// `INSERT OR IGNORE`: SQLite lets the conflict policy of the statement that fired a trigger override a trigger's
    /// `OR` policy (not its upsert clause), and the UPDATE half of the incremental's upsert runs with ABORT. With
    /// `OR IGNORE`, a key written twice in one incremental (Apple's files do this) failed the whole table on
    /// `UNIQUE constraint failed: epf_touched.id`. (`WHERE NOT EXISTS` also works, but its lookup tripled the
    /// triggers' cost: 0.45 s against 0.14 s of CPU for 200,000 upserted rows.)
    func beginIncremental(_ connection: SQLiteConnection) throws {
        guard existed, try hasKey(connection, table) else { return }
        let target = "main." + SQLiteConnection.quote(table)
        let value = "new." + SQLiteConnection.quote(key)
        func note(_ change: String) -> String {
            "INSERT INTO epf_touched (id, change) VALUES (\(value), '\(change)') ON CONFLICT (id) DO NOTHING;"
        }
        try connection.execute("""
            DROP TRIGGER IF EXISTS temp.epf_touched_insert;
            DROP TRIGGER IF EXISTS temp.epf_touched_update;
            DROP TABLE IF EXISTS \(Self.touched);
            CREATE TEMP TABLE epf_touched (id INTEGER PRIMARY KEY, change TEXT NOT NULL);
            CREATE TEMP TRIGGER epf_touched_insert AFTER INSERT ON \(target)
                BEGIN \(note("added")) END;
            CREATE TEMP TRIGGER epf_touched_update AFTER UPDATE ON \(target)
                BEGIN \(note("updated")) END;
            """)
    }

    /// Copies the noted keys into the changes table and removes the triggers, before the load commits.
    func finishIncremental(_ connection: SQLiteConnection, exportDate: Int64?, feedDate: String?) throws {
        guard try connection.scalar("SELECT 1 FROM temp.sqlite_schema WHERE name = 'epf_touched'") != nil else {
            return
        }
        try connection.execute(ChangeLog.schema)
        let copy = try connection.prepare("""
            INSERT OR IGNORE INTO epf_changes (export_date, kind, id, change)
            SELECT ?1, ?2, id, change FROM \(Self.touched) ORDER BY id
            """)
        try copy.bind([.integer(ChangeLog.exportDate(exportDate, feedDate: feedDate)), .text(kind)])
        _ = try copy.step()
        try connection.execute("""
            DROP TRIGGER IF EXISTS temp.epf_touched_insert;
            DROP TRIGGER IF EXISTS temp.epf_touched_update;
            DROP TABLE IF EXISTS \(Self.touched);
            """)
    }
}
