import EPFSQLite
import Foundation

/// A full load's price history: what replacing the table with its staging table changes, found by a merge of both
/// tables read in key order (`PriceTableMerge`), begun on threads of its own before the swap when it can
/// (`BackgroundPriceMerge`), and written in the swap's transaction (`PackedHistoryWriter`). Nothing is recorded on
/// the first load or when either table lacks a price column.
final class FullPriceMerge {
    private let priced: PricedTable
    private let staging: String
    /// The merge begun by `start`, until `record` takes it (or it is discarded).
    private var background: BackgroundPriceMerge?

    init(_ priced: PricedTable, staging: String) {
        self.priced = priced
        self.staging = staging
    }

    deinit { background?.cancel() }

    private var table: String { priced.table }

    /// Whether this full records history, so its staging table must be committed at the end of each part for
    /// `start` to read it.
    var merges: Bool { priced.existed }

    /// Starts the merge on threads of their own (`BackgroundPriceMerge`), when it can run before the swap: in WAL
    /// mode, with both tables committed and holding the price columns. Otherwise `record` merges in the swap.
    func start(_ connection: SQLiteConnection) throws {
        discardBackground()
        guard priced.existed, try connection.tableExists(table), try connection.tableExists(staging),
              try priced.hasColumns(connection, table), try priced.hasColumns(connection, staging),
              let path = try Self.walDatabasePath(connection) else { return }
        background = BackgroundPriceMerge(path: path,
                                          oldSQL: PriceTableReader.query(table: table, key: priced.key,
                                                                         ordered: false),
                                          newSQL: PriceTableReader.query(table: staging, key: priced.key,
                                                                         ordered: false),
                                          directory: (path as NSString).deletingLastPathComponent)
    }

    /// Stops the merge begun by `start`, if any: the staging table changed since, or the load is refused.
    func discardBackground() {
        background?.cancel()
        background = nil
    }

    /// Records what replacing the table with `staging` changes, in the caller's swap transaction. Each table is
    /// first read in rowid order, an item at a time (sequential, no index; in WAL mode on connections and threads
    /// of their own, `PriceTablePrefetch`); when a table is not grouped by item, the rows recorded so far are
    /// rolled back and both tables are read through their key indexes instead.
    ///
    /// The merge `start` began, when there is one, is used instead: its changes are written as they are, or, when
    /// it found a table out of order, the merge goes straight to the key indexes.
    func record(_ connection: SQLiteConnection, exportDate: Int64?) throws {
        let background = self.background
        self.background = nil
        defer { background?.cancel() }
        guard priced.existed, try connection.tableExists(table), try priced.hasColumns(connection, table),
              try priced.hasColumns(connection, staging) else { return }
        try PriceHistoryLayout.prepare(connection)
        let sequence = try PriceHistorySequence.load(connection)
        let date = priced.date(exportDate: exportDate)
        switch try background?.result() {
        case .found(let changes):
            try write(connection, date: date, sequence: sequence) { writer in
                try changes.replay { change in
                    try writer.add(item: change.item, storefront: change.storefront, change: change.change.word)
                    writer.appendText(change.oldPrice)
                    writer.appendText(change.newPrice)
                    writer.appendText(change.currency)
                }
            }
            return
        case .outOfOrder:
            try recordOrdered(connection, date: date, sequence: sequence)
            return
        case nil:
            break
        }
        let oldTable = PriceTableReader.query(table: table, key: priced.key, ordered: false)
        let newTable = PriceTableReader.query(table: staging, key: priced.key, ordered: false)
        try connection.execute("SAVEPOINT epf_price_merge")
        do {
            // In WAL mode both tables, committed and not touched by this transaction, are read on connections and
            // threads of their own while this one compares and writes. (Not in rollback-journal mode, during a
            // database's first build: there a reader's lock could hold up this writer's spills.)
            if let path = try Self.walDatabasePath(connection) {
                let old = PriceTablePrefetch(path: path, sql: oldTable)
                defer { old.stop() }
                let new = PriceTablePrefetch(path: path, sql: newTable)
                defer { new.stop() }
                try record(PriceTableMerge(old: old, new: new), connection, date: date, sequence: sequence)
            } else {
                try record(PriceTableMerge(old: PriceTableReader(try connection.prepare(oldTable)),
                                           new: PriceTableReader(try connection.prepare(newTable))),
                           connection, date: date, sequence: sequence)
            }
        } catch is PriceTableOutOfOrder {
            try connection.execute("ROLLBACK TO epf_price_merge")
            try recordOrdered(connection, date: date, sequence: sequence)
        }
        try connection.execute("RELEASE epf_price_merge")
    }

    /// The merge through both tables' key indexes, for tables not grouped by item.
    private func recordOrdered(_ connection: SQLiteConnection, date: Int64, sequence: PriceHistorySequence) throws {
        let oldOrdered = PriceTableReader.query(table: table, key: priced.key, ordered: true)
        let newOrdered = PriceTableReader.query(table: staging, key: priced.key, ordered: true)
        try record(PriceTableMerge(old: PriceTableReader(try connection.prepare(oldOrdered)),
                                   new: PriceTableReader(try connection.prepare(newOrdered))),
                   connection, date: date, sequence: sequence)
    }

    /// The database's file when it is in WAL mode (its committed tables can then be read from connections of
    /// their own while this one writes), else nil.
    private static func walDatabasePath(_ connection: SQLiteConnection) throws -> String? {
        guard case .text(let mode) = try connection.scalar("PRAGMA journal_mode"), mode.lowercased() == "wal"
        else { return nil }
        return connection.mainFilename
    }

    /// Runs a merge, writing what it finds, numbered from `sequence`.
    private func record<Old, New>(_ merge: PriceTableMerge<Old, New>, _ connection: SQLiteConnection,
                                  date: Int64, sequence: PriceHistorySequence) throws {
        var merge = merge
        try write(connection, date: date, sequence: sequence) { writer in
            try merge.run { found in
                try writer.add(item: found.item, storefront: found.storefront, change: found.change.word)
                found.appendTexts(to: writer)
            }
        }
    }

    /// Writes the changes `add` gives a writer, numbered from `sequence`, and keeps the numbering.
    private func write(_ connection: SQLiteConnection, date: Int64, sequence: PriceHistorySequence,
                       _ add: (PackedHistoryWriter) throws -> Void) throws {
        let writer = try PackedHistoryWriter(connection, date: date, kind: priced.kind, sequence: sequence)
        try add(writer)
        try writer.finish()
        try writer.sequence.save(connection)
    }
}
