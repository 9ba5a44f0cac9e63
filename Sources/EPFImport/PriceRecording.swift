import Foundation

/// What an import settles about recording price history (EPFSchema's `PriceHistory` says what it records and
/// where): the setting that turns it on, the columns a price table needs for it, what `--history` asks.
package enum PriceRecording {
    /// The `epf_settings` row that turns it on (`value` `prices`).
    package static let setting = "history"

    /// The columns a price table needs for its changes to be recorded, besides its key.
    package static let columns = ["storefront_id", "retail_price", "currency_code"]

    /// The `--history` and setting word that records ranks (EPFSchema's `RankHistoryRead.settingWord`).
    package static let ranksWord = "ranks"

    /// What an import asks of `--history`: a comma-separated list of what to record, `prices` and `ranks`
    /// (EPFSchema's `RankHistoryRead`), or `none` for neither; nil keeps what the database has.
    package static func request(_ text: String?) throws -> HistoryRequest? {
        guard let text else { return nil }
        let whole = text.lowercased().trimmingCharacters(in: .whitespaces)
        var request = HistoryRequest(prices: false, ranks: false)
        for word in whole.split(separator: ",", omittingEmptySubsequences: false) {
            switch word.trimmingCharacters(in: .whitespaces) {
            case "prices": request.prices = true
            case ranksWord: request.ranks = true
            case "none" where whole == "none": break
            default:
                throw ImportError.badOption("--history takes 'prices', 'ranks', 'prices,ranks' or 'none', "
                                            + "got '\(text.prefix(60))'")
            }
        }
        return request
    }
}

/// What an import records beside the tables (`--history`): price changes (EPFSchema's `PriceHistory`) and each
/// day's ranks (`RankHistoryRead`). The database remembers it in `epf_settings` (`history`: `prices`, `ranks`,
/// `prices,ranks`; no row for neither), so the next imports keep recording: a kind asked once is recorded until
/// `--history none` (a later `--history prices` on a database recording ranks records both).
package struct HistoryRequest: Equatable, Sendable {
    package var prices: Bool
    package var ranks: Bool

    package init(prices: Bool, ranks: Bool) {
        self.prices = prices
        self.ranks = ranks
    }

    /// The history of a stored `history` setting (databases made before ranks hold `prices`).
    package init(setting: String?) {
        let words = Set((setting ?? "").split(separator: ",").map(String.init))
        prices = words.contains("prices")
        ranks = words.contains(PriceRecording.ranksWord)
    }

    /// The stored setting, nil for neither.
    package var setting: String? {
        let words = (prices ? ["prices"] : []) + (ranks ? [PriceRecording.ranksWord] : [])
        return words.isEmpty ? nil : words.joined(separator: ",")
    }
}

extension ImportLedger {
    /// What this import records: what the database was told before and what `request` adds (then remembered);
    /// `--history none` (a request for neither) stops both. A cron line that names one kind must not silently stop
    /// the other the database records.
    func settleHistory(_ request: HistoryRequest?) throws -> HistoryRequest {
        let stored = HistoryRequest(setting: try setting(PriceRecording.setting))
        guard let request else { return stored }
        let none = HistoryRequest(prices: false, ranks: false)
        let settled = request == none
            ? none : HistoryRequest(prices: request.prices || stored.prices, ranks: request.ranks || stored.ranks)
        if settled != stored { try setSetting(PriceRecording.setting, to: settled.setting) }
        return settled
    }
}
