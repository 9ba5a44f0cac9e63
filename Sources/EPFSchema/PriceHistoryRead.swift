/// What a reader of the price history needs to know of how it is stored, and nothing of how loads write it: which
/// relation holds one row per change and how its `seq` is made. The loads' side of the layout is SQLite's
/// `PriceHistoryLayout`, which takes its names from here.
package struct PriceHistoryRead: Sendable {
    /// The relation with one row per change (`seq`, `export_date`, `kind`, `id`, `storefront_id`, `change`,
    /// `old_price`, `new_price`, `currency`): a view over `packedTable` on SQLite, a table on PostgreSQL and in
    /// SQLite databases made before the packed layout.
    package static let changes = "epf_price_history"
    /// SQLite's table of packed changes (one row per item and export) under the view.
    package static let packedTable = "epf_price_changes"
    /// Positions per row of `packedTable` in the view's `seq`.
    package static let positionsPerRow: Int64 = 1024

    /// The relation to read (`changes`).
    package let table: String
    /// Set when `table` is the view of the packed layout: its `seq` is `packed_seq` x this + the change's position
    /// in its row, so pages read in `packed_seq` order (see `ChangeQueries.pagedRows`); nil for a plain table.
    package let packedPositions: Int64?

    /// The price history of a database with these tables, nil when it holds none (history never recorded).
    package init?(tables: Set<String>) {
        guard tables.contains(Self.changes) else { return nil }
        table = Self.changes
        packedPositions = tables.contains(Self.packedTable) ? Self.positionsPerRow : nil
    }
}
