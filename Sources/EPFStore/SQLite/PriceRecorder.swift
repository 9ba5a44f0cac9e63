import EPFFormat
import EPFImport
import EPFSchema
import EPFSQLite

/// The price history of one SQLite table load (see `PriceHistory`), through the load's lifecycle
/// (`LoadRecorder`): a full's merge of the old and new table (`FullPriceMerge`), or an incremental's notes of
/// what its upserts change (`IncrementalPriceNotes`). Nil for tables that are not price tables, or when the import
/// does not record history.
final class PriceRecorder: LoadRecorder {
    /// A full's merge (nil for an incremental).
    private let merge: FullPriceMerge?
    /// An incremental's notes (nil for a full).
    private let notes: IncrementalPriceNotes?

    /// A recorder for the load of `table` in `mode` (a full into `staging`); nil when there is nothing to record.
    init?(_ connection: SQLiteConnection, table: String, mode: ExportMode, staging: String, feedDate: String?,
          enabled: Bool) throws {
        guard enabled, let tracked = PriceHistory.tracked[table] else { return nil }
        let item = PricedTable(table: table, kind: tracked.kind, key: tracked.key,
                               existed: try connection.tableExists(table), feedDate: feedDate)
        switch mode {
        case .full:
            merge = FullPriceMerge(item, staging: staging)
            notes = nil
        case .incremental:
            merge = nil
            notes = IncrementalPriceNotes(item, connection: connection)
        }
    }

    /// An incremental starts noting (inside its transaction, so a refused load records nothing).
    func began(_ connection: SQLiteConnection) throws {
        try notes?.begin(connection)
    }

    /// Routes the incremental's notes when a batch is full.
    @inline(__always)
    func rowWritten(_ connection: SQLiteConnection, exportDate: Int64?) throws {
        guard let notes, notes.needsFlush else { return }
        try notes.flush(connection, exportDate: exportDate)
    }

    /// A full that merges commits its staging table at the end of each part, for `willPublish` to read it.
    var commitsPartEnds: Bool { merge?.merges == true }

    /// A full starts its merge on threads of its own while the load builds its indexes (`BackgroundPriceMerge`).
    func willPublish(_ connection: SQLiteConnection) throws {
        try merge?.start(connection)
    }

    /// The staging table changed after `willPublish` (duplicate keys removed): the merge begun then is void.
    func stagingChanged() {
        merge?.discardBackground()
    }

    /// Records the full's changes or completes the incremental's, in the transaction that publishes the load.
    func publish(_ connection: SQLiteConnection, exportDate: Int64?) throws {
        try merge?.record(connection, exportDate: exportDate)
        try notes?.finish(connection, exportDate: exportDate)
    }

    /// Stops noting and merging: the load is refused.
    func abort(_ connection: SQLiteConnection) {
        merge?.discardBackground()
        notes?.stop()
    }
}

/// A price table as its history is recorded: the table, the kind word of its items (as in `epf_changes`), its
/// item key column, whether it existed when the load began (the first load is the baseline), and the feed's date
/// (the history's date when the rows have no `export_date`).
struct PricedTable {
    let table: String
    let kind: String
    let key: String
    let existed: Bool
    let feedDate: String?

    /// Whether `name` has the key and the price columns.
    func hasColumns(_ connection: SQLiteConnection, _ name: String) throws -> Bool {
        for column in [key] + PriceRecording.columns {
            guard try StoreDatabase.hasColumn(connection, table: name, column: column) else { return false }
        }
        return true
    }

    /// The history's date of the load's rows.
    func date(exportDate: Int64?) -> Int64 { ChangeLog.exportDate(exportDate, feedDate: feedDate) }
}
