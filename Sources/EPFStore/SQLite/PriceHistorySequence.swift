import EPFSchema
import EPFSQLite

/// Where the SQLite price history's numbering stands: the last `seq` of `PriceHistoryLayout.packedTable` given out and
/// the changes the history holds, kept in `epf_settings` and saved by each load in its own transaction. The table
/// packs many changes per row, so the count could not be read cheaply from it.
struct PriceHistorySequence {
    /// The last `seq` given out (rows may have been removed since: numbers are never reused).
    var last: Int64
    /// The changes the history holds.
    var rows: Int64

    private static let lastSetting = "price_history_seq"
    private static let rowsSetting = "price_history_rows"

    /// The numbering as the last load saved it (counted from the table if it was not saved). Call after
    /// `PriceHistoryLayout.prepare`.
    static func load(_ connection: SQLiteConnection) throws -> PriceHistorySequence {
        guard try connection.tableExists(PriceHistoryLayout.packedTable) else {
            return PriceHistorySequence(last: 0, rows: 0)
        }
        if let saved = try saved(connection) { return saved }
        var sequence = PriceHistorySequence(last: 0, rows: 0)
        if case .integer(let last) = try connection.scalar("SELECT max(seq) FROM \(PriceHistoryLayout.packedTable)") {
            sequence.last = last
        }
        if case .integer(let rows) = try connection.scalar(
            "SELECT CAST(total(json_array_length(entries)) AS INTEGER) FROM \(PriceHistoryLayout.packedTable)") {
            sequence.rows = rows
        }
        return sequence
    }

    private static func saved(_ connection: SQLiteConnection) throws -> PriceHistorySequence? {
        guard try connection.tableExists("epf_settings") else { return nil }
        let ledger = Ledger(connection: connection)
        guard let last = try ledger.setting(lastSetting).flatMap(Int64.init),
              let rows = try ledger.setting(rowsSetting).flatMap(Int64.init) else { return nil }
        return PriceHistorySequence(last: last, rows: rows)
    }

    /// The number of changes the status reports; nil without a history. A table of an earlier layout, not yet
    /// moved (`PriceHistoryLayout`), reports its saved count, else its largest `seq` (a rowid, rows never removed).
    static func rows(_ connection: SQLiteConnection) throws -> Int64? {
        if try connection.tableExists(PriceHistoryLayout.packedTable) { return try load(connection).rows }
        guard try connection.tableExists(PriceHistory.table) else { return nil }
        if let saved = try saved(connection) { return saved.rows }
        guard case .integer(let largest) = try connection.scalar("SELECT max(seq) FROM \(PriceHistory.table)") else {
            return 0
        }
        return largest
    }

    /// Saves the numbering, in the caller's transaction.
    func save(_ connection: SQLiteConnection) throws {
        let ledger = Ledger(connection: connection)
        try ledger.setSetting(Self.lastSetting, to: String(last))
        try ledger.setSetting(Self.rowsSetting, to: String(rows))
    }
}
