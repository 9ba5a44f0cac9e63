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
    public static let table = PriceHistoryRead.changes

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

    /// The table and its indexes on PostgreSQL (`seq` a `bigserial`), and on SQLite in databases made before its
    /// packed layout (the next load moves their changes into it, `PriceHistoryLayout`) (`CREATE ... IF NOT
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
