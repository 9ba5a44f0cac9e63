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
///
/// The names here (and `PriceHistoryRead`) are what readers need; the stores write it (EPFStore's `PriceHistory`
/// extension, SQLite's packed layout and PostgreSQL's table).
package enum PriceHistory {
    /// The table's name (`PriceHistoryRead.changes`).
    package static let table = PriceHistoryRead.changes

    /// The price tables, with the kind word of their items (as in `epf_changes`) and their item key column.
    package static let tracked: [String: (kind: String, key: String)] = [
        "application_price": ("app", "application_id"), "collection_price": ("collection", "collection_id"),
        "song_price": ("song", "song_id"), "video_price": ("video", "video_id"),
    ]

    /// The price table of a kind word (`app` -> `application_price`).
    package static func table(ofKind kind: String) -> String? {
        tracked.first { $0.value.kind == kind }?.key
    }
}
