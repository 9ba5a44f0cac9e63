/// What an import settles about recording price history (EPFSchema's `PriceHistory` says what it records and
/// where): the setting that turns it on, the columns a price table needs for it, what `--history` asks.
package enum PriceRecording {
    /// The `epf_settings` row that turns it on (`value` `prices`).
    package static let setting = "history"

    /// The columns a price table needs for its changes to be recorded, besides its key.
    package static let columns = ["storefront_id", "retail_price", "currency_code"]

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
    func settleHistory(_ request: Bool?) throws -> Bool {
        let stored = try setting(PriceRecording.setting) == "prices"
        guard let request, request != stored else { return stored }
        try setSetting(PriceRecording.setting, to: request ? "prices" : nil)
        return request
    }
}
