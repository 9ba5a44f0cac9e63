import EPFSQLite

/// Where the SQLite price history's numbering stands: the last `seq` given out and the rows the table holds, kept
/// in `epf_settings` and saved by each load in its own transaction. The table (`PriceHistory.sqliteSchema`) is
/// clustered by (export_date, seq), so neither could be read cheaply from it.
struct PriceHistorySequence {
    /// The last `seq` given out (rows may have been ignored or removed since: numbers are never reused).
    var last: Int64
    /// The rows of `epf_price_history`.
    var rows: Int64

    private static let lastSetting = "price_history_seq"
    private static let rowsSetting = "price_history_rows"

    /// The numbering as the last load saved it. A table made before the numbering was kept (its `seq` a rowid,
    /// rows never removed) starts from its largest `seq`, for both.
    static func load(_ connection: SQLiteConnection) throws -> PriceHistorySequence {
        guard try connection.tableExists(PriceHistory.table) else { return PriceHistorySequence(last: 0, rows: 0) }
        if try connection.tableExists("epf_settings") {
            let ledger = Ledger(connection: connection)
            if let last = try ledger.setting(lastSetting).flatMap(Int64.init),
               let rows = try ledger.setting(rowsSetting).flatMap(Int64.init) {
                return PriceHistorySequence(last: last, rows: rows)
            }
        }
        guard case .integer(let largest) = try connection.scalar("SELECT max(seq) FROM \(PriceHistory.table)") else {
            return PriceHistorySequence(last: 0, rows: 0)
        }
        return PriceHistorySequence(last: largest, rows: largest)
    }

    /// The number of rows the status reports (`load`'s); nil without the table.
    static func rows(_ connection: SQLiteConnection) throws -> Int64? {
        try connection.tableExists(PriceHistory.table) ? try load(connection).rows : nil
    }

    /// Saves the numbering, in the caller's transaction.
    func save(_ connection: SQLiteConnection) throws {
        let ledger = Ledger(connection: connection)
        try ledger.setSetting(Self.lastSetting, to: String(last))
        try ledger.setSetting(Self.rowsSetting, to: String(rows))
    }
}
