import EPFSchema

extension PriceHistory {
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
}
