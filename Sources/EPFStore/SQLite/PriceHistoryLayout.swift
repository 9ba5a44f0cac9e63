import EPFSQLite

/// The layout of SQLite's price history (`PriceHistory.sqliteSchema`): made where it is missing, and moved into
/// from a table of an earlier layout (one row per change, `epf_price_history` a table), in the caller's
/// transaction, by the first load that records history.
enum PriceHistoryLayout {
    /// Whether `epf_price_history` is a table of an earlier layout.
    static func isEarlier(_ connection: SQLiteConnection) throws -> Bool {
        try connection.scalar("SELECT type FROM sqlite_schema WHERE name = ?1", [.text(PriceHistory.table)])
            == .text("table")
    }

    /// Makes the packed table and its view, moving the changes of an earlier table into it: an item's changes in
    /// one export become one row (in their order), rows are numbered in the order of their first change, and the
    /// numbering is saved.
    static func prepare(_ connection: SQLiteConnection) throws {
        guard try isEarlier(connection) else { return try connection.execute(PriceHistory.sqliteSchema) }
        let earlier = "epf_price_history_earlier"
        try connection.execute("ALTER TABLE \(PriceHistory.table) RENAME TO \(earlier)")
        try connection.execute(PriceHistory.sqliteSchema)
        let entry = PriceHistory.entrySQL("storefront_id", "change", "old_price", "new_price", "currency")
        try connection.execute("""
            INSERT INTO \(PriceHistory.packedTable) (export_date, seq, kind, id, entries)
            SELECT export_date, row_number() OVER (ORDER BY export_date, min(seq)), kind, id, json_group_array(\(entry))
            FROM (SELECT *, (row_number() OVER (PARTITION BY export_date, kind, id ORDER BY seq) - 1)
                    / \(PriceHistory.entriesPerRow) AS part
                  FROM \(earlier) ORDER BY export_date, kind, id, seq)
            GROUP BY export_date, kind, id, part;
            DROP TABLE \(earlier);
            """)
        var sequence = PriceHistorySequence(last: 0, rows: 0)
        if case .integer(let last) = try connection.scalar("SELECT max(seq) FROM \(PriceHistory.packedTable)") {
            sequence.last = last
        }
        if case .integer(let rows) = try connection.scalar("SELECT count(*) FROM \(PriceHistory.table)") {
            sequence.rows = rows
        }
        try sequence.save(connection)
    }
}
