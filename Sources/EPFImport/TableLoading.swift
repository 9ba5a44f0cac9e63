import EPFFormat

/// One table's load into one database, as the shared import drives it: the load's state (`LoadState`, the same for
/// every store) and the store's own steps. `ImportPass` starts a load (the store prepares its target as it is
/// made), reads each part through `load(_:part:)` (the record loop, `loadRecords`: bind, write, checkpoint), and
/// ends it with `finish(ledger:)` (`finishLoad`: verify, then publish or abort). `TableLoad` is SQLite's,
/// `PostgresTableLoad` PostgreSQL's.
package protocol TableLoading: AnyObject {
    /// The store's ledger, told of applied and refused tables.
    associatedtype LedgerType: ImportLedger
    /// The table's name (as its schema resolved it).
    var table: String { get }
    /// The load's state: its file, mode, outcome so far, counts and phase times.
    var state: LoadState { get set }

    // MARK: Writing a row

    /// The position of `export_date` in the file's columns, nil when it has none.
    var exportDateColumn: Int? { get }
    /// True when rows reach a database (not a dry run, a database is open).
    var writing: Bool { get }
    /// How the loop splits its time between reading and inserting.
    var insertTiming: InsertTiming { get }
    /// Binds a record as the next row; nil when it is bound, else why it is rejected (nothing is written then).
    func bindRow(_ record: EPFRecord) throws -> RejectReason?
    /// Accounts for the row just bound (`LoadState.accept` with the store's binder, read in place rather than
    /// copied out through a getter for every row).
    func acceptRow(_ record: EPFRecord)
    /// Writes the row just bound.
    func writeRow() throws

    // MARK: Checkpoints

    /// Commits what a full load wrote so far with a progress row, so a rerun resumes after `recordsDone`.
    func checkpoint(part: Int, recordsDone: Int) throws
    /// Whether the end of each part of a full load is a checkpoint too (a rerun then skips the part whole).
    var checkpointsPartEnds: Bool { get }

    // MARK: Publishing or not

    /// Verifies and makes the table visible (or keeps the old data), through `finishLoad`; records it in the
    /// ledger when given.
    func finish(ledger: LedgerType?) -> TableOutcome
    /// False for a dry run or when there is no database: nothing is published.
    var canPublish: Bool { get }
    /// Makes the verified table visible (the swap of a full, the commit of an incremental).
    func publish(ledger: LedgerType?) throws
    /// Undoes what is not committed; the previous data stays.
    func abort()
}

extension TableLoading {
    /// Loads the records of one part (`loadRecords`); thrown errors refuse the table.
    package func load(_ reader: EPFTableReader, part: TableFile) throws { try loadRecords(reader, part: part) }
}
