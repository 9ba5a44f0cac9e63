import EPFSchema
import Foundation

/// Writing the price history (see EPFSchema's `PriceHistory` for what it records and its names).
extension PriceHistory {
    /// The `epf_settings` row that turns it on (`value` `prices`).
    package static let setting = "history"

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
    package static func request(_ text: String?) throws -> Bool? {
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
