import Foundation

/// The price history, `epf_price_history`: every actual change of a price an import applies, with `--history
/// prices` (remembered by the database, like `--storefronts`).
///
/// EPF's pricing feed is a snapshot: each export overwrites the previous price. With history on, each import of a
/// price table (`application_price`, `collection_price`, `song_price`, `video_price`) records, in the transaction
/// that makes the new prices visible:
/// - a full: the differences between the old and the new table, compared in key order (a merge of two ordered
///   scans on SQLite, a merge or hash join on PostgreSQL; never a lookup per row): `changed` for a key whose price
///   or currency differs, `disappeared` for a key only in the old table, `appeared` for one only in the new;
/// - an incremental: each key whose price or currency its upsert really changed (`changed`), and each key it
///   added to the table (`appeared`).
///
/// Prices are compared as numbers (`0.99` is `0.990`). The first load of a table is the baseline and records
/// nothing; a change is recorded once per (id, kind, storefront, export date), so applying an export again adds
/// nothing, and a refused table, whose transaction rolls back, records nothing.
public enum PriceHistory {
    /// The table's name.
    public static let table = "epf_price_history"

    /// The `epf_settings` row that turns it on (`value` `prices`).
    package static let setting = "history"

    /// The price tables, with the kind word of their items (as in `epf_changes`) and their item key column.
    public static let tracked: [String: (kind: String, key: String)] = [
        "application_price": ("app", "application_id"), "collection_price": ("collection", "collection_id"),
        "song_price": ("song", "song_id"), "video_price": ("video", "video_id"),
    ]

    /// The price table of a kind word (`app` -> `application_price`).
    public static func table(ofKind kind: String) -> String? {
        tracked.first { $0.value.kind == kind }?.key
    }

    /// The columns a price table needs for its changes to be recorded, besides its key.
    package static let columns = ["storefront_id", "retail_price", "currency_code"]

    /// The table and its indexes on PostgreSQL (`seq` a `bigserial`), and on SQLite in databases made before
    /// `sqliteSchema` (the next load moves their changes into it, `PriceHistoryLayout`) (`CREATE ... IF NOT
    /// EXISTS`). `seq` orders the changes as recorded; the indexes serve the history of one item, the feed of
    /// changes by date, and make each change unique.
    package static func schema(qualifiedTable: String, serial: String) -> String {
        """
        CREATE TABLE IF NOT EXISTS \(qualifiedTable) (
            seq \(serial),
            export_date BIGINT NOT NULL,
            kind TEXT NOT NULL,
            id BIGINT NOT NULL,
            storefront_id BIGINT NOT NULL,
            change TEXT NOT NULL,
            old_price TEXT,
            new_price TEXT,
            currency TEXT
        );
        CREATE UNIQUE INDEX IF NOT EXISTS epf_price_history_item ON \(qualifiedTable)
            (id, kind, storefront_id, export_date);
        CREATE INDEX IF NOT EXISTS epf_price_history_date ON \(qualifiedTable) (export_date, seq);
        """
    }

    /// The table that holds SQLite's history: one row per item and export (`seq`, its rowid, given out by the
    /// loads, `PriceHistorySequence`), its changes in `entries`, a JSON array of `[storefront_id, change, old_price,
    /// new_price, currency]` (the prices as plain decimal texts, `DecimalNumber.text`, or as the feed wrote them in
    /// changes recorded before prices were numbers; the currency as stored; or null). A price change is
    /// nearly always an item's change in most of its 175 storefronts at once, so one row per change cost a row and
    /// an index entry each (90.9 MB per million changes); packed, a change costs its entry's bytes (47 MB). An item
    /// with more changes than `entriesPerRow` in one export takes several rows.
    package static let packedTable = "epf_price_changes"

    /// The index of `packedTable`'s items, (id, kind, export_date).
    package static let packedItemIndex = "epf_price_changes_item"

    /// The most changes one row of `packedTable` holds.
    package static let entriesPerRow = 1000

    /// Positions per row of `packedTable` in the view's `seq` (above `entriesPerRow`).
    package static let positionsPerRow: Int64 = 1024

    /// SQLite's layout (`CREATE ... IF NOT EXISTS`):
    /// - `packedTable`, a rowid table (`seq`) with an index on (export_date, seq), the order of the feed of
    ///   changes, and one of items. (Clustered by date, `WITHOUT ROWID`, it put every row's entries past about 2 KB
    ///   on an overflow page of their own: 16 KB pages a third full.)
    /// - `epf_price_history`, a view with one row per change and the columns of `schema` (`seq` is `packed_seq` x
    ///   `positionsPerRow` + the entry's position, so it orders the changes as recorded), plus `packed_seq`, which
    ///   the feed of changes pages by.
    package static let sqliteSchema = """
        CREATE TABLE IF NOT EXISTS \(packedTable) (
            seq INTEGER PRIMARY KEY,
            export_date INTEGER NOT NULL,
            kind TEXT NOT NULL,
            id INTEGER NOT NULL,
            entries TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS epf_price_changes_date ON \(packedTable) (export_date, seq);
        CREATE INDEX IF NOT EXISTS \(packedItemIndex) ON \(packedTable) (id, kind, export_date);
        CREATE VIEW IF NOT EXISTS \(table) AS
            SELECT p.seq * \(positionsPerRow) + j.key AS seq, p.export_date AS export_date, p.kind AS kind,
                p.id AS id, \(EntryField.allCases.map { "\(field($0, of: "j.value")) AS \($0)" }.joined(separator: ", ")),
                p.seq AS packed_seq
            FROM \(packedTable) AS p, json_each(p.entries) AS j;
        """

    /// The fields of an entry of `packedTable`, in their order, named as the columns of `epf_price_history`
    /// they become.
    package enum EntryField: Int, CaseIterable {
        case storefront_id, change, old_price, new_price, currency
    }

    /// SQL reading a field of the entry `entry` (a `json_each` value).
    package static func field(_ field: EntryField, of entry: String) -> String {
        "json_extract(\(entry), '$[\(field.rawValue)]')"
    }

    /// SQL true when the entry `entry` of `entries` (a `json_each` value of it) is storefront `storefront`'s:
    /// `instr` first looks for the entry's start, `[storefront,` as the loads write it, so an item's entries are
    /// read one by one only when one of them may be it.
    package static func isEntry(_ entry: String, of entries: String, storefront: String) -> String {
        "instr(\(entries), '[' || \(storefront) || ',') > 0 AND \(field(.storefront_id, of: entry)) = \(storefront)"
    }

    /// The JSON entry of one change, from SQL values (`storefront_id`, `change`, `old_price`, `new_price`,
    /// `currency`), as the loads write it.
    package static func entrySQL(_ storefront: String, _ change: String, _ oldPrice: String, _ newPrice: String,
                                 _ currency: String) -> String {
        "json_array(\(storefront), \(change), \(oldPrice), \(newPrice), \(currency))"
    }

    /// What an import asks of `--history`: `prices` turns it on, `none` off; nil keeps what the database has.
    public static func request(_ text: String?) throws -> Bool? {
        guard let text else { return nil }
        switch text.lowercased() {
        case "prices": return true
        case "none": return false
        default: throw ImportError.badOption("--history takes 'prices' or 'none', got '\(text)'")
        }
    }
}

extension ImportLedger {
    /// Whether this import records price history: as `request` asks (and then remembered), else as the
    /// database was told before.
    package func settleHistory(_ request: Bool?) throws -> Bool {
        let stored = try setting(PriceHistory.setting) == "prices"
        guard let request, request != stored else { return stored }
        try setSetting(PriceHistory.setting, to: request ? "prices" : nil)
        return request
    }
}
