import EPFSchema
import EPFSQLite

/// The layout of SQLite's price history (`sqliteSchema`): made where it is missing, and moved into
/// from a table of an earlier layout (one row per change, `epf_price_history` a table), in the caller's
/// transaction, by the first load that records history.
enum PriceHistoryLayout {
    /// The table that holds SQLite's history: one row per item and export (`seq`, its rowid, given out by the
    /// loads, `PriceHistorySequence`), its changes in `entries`, a JSON array of `[storefront_id, change, old_price,
    /// new_price, currency]` (the prices as plain decimal texts, `DecimalNumber.text`, or as the feed wrote them in
    /// changes recorded before prices were numbers; the currency as stored; or null). A price change is
    /// nearly always an item's change in most of its 175 storefronts at once, so one row per change cost a row and
    /// an index entry each (90.9 MB per million changes); packed, a change costs its entry's bytes (47 MB). An item
    /// with more changes than `entriesPerRow` in one export takes several rows.
    static let packedTable = PriceHistoryRead.packedTable

    /// The index of `packedTable`'s items, (id, kind, export_date).
    static let packedItemIndex = "epf_price_changes_item"

    /// The most changes one row of `packedTable` holds.
    static let entriesPerRow = 1000

    /// Positions per row of `packedTable` in the view's `seq` (above `entriesPerRow`).
    static let positionsPerRow = PriceHistoryRead.positionsPerRow

    /// SQLite's layout (`CREATE ... IF NOT EXISTS`):
    /// - `packedTable`, a rowid table (`seq`) with an index on (export_date, seq), the order of the feed of
    ///   changes, and one of items. (Clustered by date, `WITHOUT ROWID`, it put every row's entries past about 2 KB
    ///   on an overflow page of their own: 16 KB pages a third full.)
    /// - `epf_price_history`, a view with one row per change and the columns of `PriceHistory.schema` (`seq` is
    ///   `packed_seq` x `positionsPerRow` + the entry's position, so it orders the changes as recorded), plus
    ///   `packed_seq`, which the feed of changes pages by (`PriceHistoryRead`).
    static let sqliteSchema = """
        CREATE TABLE IF NOT EXISTS \(packedTable) (
            seq INTEGER PRIMARY KEY,
            export_date INTEGER NOT NULL,
            kind TEXT NOT NULL,
            id INTEGER NOT NULL,
            entries TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS epf_price_changes_date ON \(packedTable) (export_date, seq);
        CREATE INDEX IF NOT EXISTS \(packedItemIndex) ON \(packedTable) (id, kind, export_date);
        CREATE VIEW IF NOT EXISTS \(PriceHistory.table) AS
            SELECT p.seq * \(positionsPerRow) + j.key AS seq, p.export_date AS export_date, p.kind AS kind,
                p.id AS id, \(entryColumns),
                p.seq AS packed_seq
            FROM \(packedTable) AS p, json_each(p.entries) AS j;
        """

    /// The view's columns read from an entry `j.value`.
    private static let entryColumns = EntryField.allCases.map { "\(field($0, of: "j.value")) AS \($0)" }
        .joined(separator: ", ")

    /// The fields of an entry of `packedTable`, in their order, named as the columns of `epf_price_history`
    /// they become.
    enum EntryField: Int, CaseIterable {
        case storefront_id, change, old_price, new_price, currency
    }

    /// SQL reading a field of the entry `entry` (a `json_each` value).
    static func field(_ field: EntryField, of entry: String) -> String {
        "json_extract(\(entry), '$[\(field.rawValue)]')"
    }

    /// SQL true when the entry `entry` of `entries` (a `json_each` value of it) is storefront `storefront`'s:
    /// `instr` first looks for the entry's start, `[storefront,` as the loads write it, so an item's entries are
    /// read one by one only when one of them may be it.
    static func isEntry(_ entry: String, of entries: String, storefront: String) -> String {
        "instr(\(entries), '[' || \(storefront) || ',') > 0 AND \(field(.storefront_id, of: entry)) = \(storefront)"
    }

    /// The JSON entry of one change, from SQL values (`storefront_id`, `change`, `old_price`, `new_price`,
    /// `currency`), as the loads write it.
    static func entrySQL(_ storefront: String, _ change: String, _ oldPrice: String, _ newPrice: String,
                                 _ currency: String) -> String {
        "json_array(\(storefront), \(change), \(oldPrice), \(newPrice), \(currency))"
    }

    /// Whether `epf_price_history` is a table of an earlier layout.
    static func isEarlier(_ connection: SQLiteConnection) throws -> Bool {
        try connection.scalar("SELECT type FROM sqlite_schema WHERE name = ?1", [.text(PriceHistory.table)])
            == .text("table")
    }

    /// Makes the packed table and its view, moving the changes of an earlier table into it: an item's changes in
    /// one export become one row (in their order), rows are numbered in the order of their first change, and the
    /// numbering is saved.
    static func prepare(_ connection: SQLiteConnection) throws {
        guard try isEarlier(connection) else { return try connection.execute(sqliteSchema) }
        let earlier = "epf_price_history_earlier"
        try connection.execute("ALTER TABLE \(PriceHistory.table) RENAME TO \(earlier)")
        try connection.execute(sqliteSchema)
        let entry = entrySQL("storefront_id", "change", "old_price", "new_price", "currency")
        try connection.execute("""
            INSERT INTO \(packedTable) (export_date, seq, kind, id, entries)
            SELECT export_date, row_number() OVER (ORDER BY export_date, min(seq)), kind, id, json_group_array(\(entry))
            FROM (SELECT *, (row_number() OVER (PARTITION BY export_date, kind, id ORDER BY seq) - 1)
                    / \(entriesPerRow) AS part
                  FROM \(earlier) ORDER BY export_date, kind, id, seq)
            GROUP BY export_date, kind, id, part;
            DROP TABLE \(earlier);
            """)
        var sequence = PriceHistorySequence(last: 0, rows: 0)
        if case .integer(let last) = try connection.scalar("SELECT max(seq) FROM \(packedTable)") {
            sequence.last = last
        }
        if case .integer(let rows) = try connection.scalar("SELECT count(*) FROM \(PriceHistory.table)") {
            sequence.rows = rows
        }
        try sequence.save(connection)
    }
}
