import EPFFormat
import Foundation

/// Options of an import.
package struct ImportOptions: Sendable {
    /// Only tables whose name matches this regular expression.
    package var only: String?
    /// Skip tables whose name matches this regular expression.
    package var skip: String?
    /// Read and check everything, write nothing.
    package var dryRun = false
    /// Re-apply files the ledger says were applied.
    package var force = false
    /// Apply tables whose row count differs from `#recordsWritten` (with a warning).
    package var allowCountMismatch = false
    /// Most rejected records per table before the table is refused.
    package var maxRejects = 1000
    /// What a value that is not of its column's type becomes (integers, decimals, booleans and dates alike).
    package var badValues = BadValuePolicy.null
    /// Records between checkpoints (commit + progress row) of a full load.
    package var checkpointRecords = 250_000
    /// How files are read.
    package var readOptions = ReadOptions()
    /// Page size of a database this import creates (SQLite ignores it for existing databases).
    package var pageSize = ImportOptions.defaultPageSize
    /// Directory for rejects files; default `<database>.rejects`.
    package var rejectsDirectory: String?
    /// Decompress the next bzip2 input while a table finishes (`ReadAheadFile`), keeping its bytes in memory and
    /// in a spill file in the database's directory within these limits; nil: no read-ahead.
    package var readAhead: ReadAheadFile.Limits? = ReadAheadFile.Limits()
    /// Before writing, estimate the space the import needs and refuse when the database's filesystem lacks it
    /// (`SpaceCheck`); `--no-space-check` turns it off.
    package var spaceCheck = true
    /// `--storefronts` and `--languages` as given (nil where not given: the database's selection stays).
    package var selectionRequest = RowSelection.Request()
    /// The selection this import applies: set by the importer from `selectionRequest` and what the database keeps
    /// (`RowSelection.settle`).
    package var rows = RowSelection()
    /// `--history` (`prices`, `ranks`, both or `none`); nil keeps what the database was told.
    package var historyRequest: HistoryRequest?
    /// Whether this import records price changes (`PriceHistory`): set by the importer from `historyRequest` and
    /// the database's setting.
    package var recordsPriceHistory = false
    /// Whether this import records each day's ranks (`RankHistoryRead`), set as `recordsPriceHistory` is.
    package var recordsRankHistory = false
    /// Told the path of every file read ahead (for tests).
    package var readAheadStarted: (@Sendable (String) -> Void)?

    package init() {}

    /// The page size of a new SQLite database unless `--page-size` says otherwise: 16 KiB.
    package static let defaultPageSize = 16384
}

/// What an import does with a value that is not of its column's type: junk such as `[123]` or
/// `<UnknownKeyException>` in an integer column, a date it cannot read. A bad value in a primary key column or in
/// `export_date` always rejects the row.
package enum BadValuePolicy: String, Sendable, Codable, CaseIterable {
    /// Store NULL, keep the row and record the repair in the rejects file (the default).
    case null
    /// Reject the row.
    case reject
}

/// What happened to one table file.
package enum TableStatus: String, Sendable, Codable {
    /// Loaded and visible to readers.
    case applied
    /// Checked by a dry run; nothing written.
    case validated
    /// Already applied according to the ledger; nothing done.
    case unchanged
    /// Not applied because the table holds newer data (an older export, `ExportOrderRule`); the message says
    /// which. An older day of a chart table whose ranks were recorded in its place is superseded too.
    case superseded
    /// Not selected by --only/--skip.
    case filtered
    /// Not applied: the old data stays. See the message.
    case failed
}

/// The outcome of one table (all its parts) in an import.
package struct TableOutcome: Sendable, Codable {
    package var table: String
    package var location: String
    package var feed: String?
    package var feedDate: String?
    package var parts = 1
    package var mode: String?
    package var exportDate: Int64?
    /// Data records read from the file(s).
    package var records = 0
    /// Rows in the table after a full load, or rows upserted by an incremental.
    package var rows = 0
    /// Rows an incremental added (the rest of `rows` were updates).
    package var insertedRows = 0
    package var rejects = 0
    /// Records left out because the database does not keep their storefront or language (`RowSelection`).
    package var leftOut = 0
    package var duplicates = 0
    /// Values stored as NULL because they were not of their column's type (the rows were kept); each is an
    /// entry in the rejects file.
    package var repaired = 0
    package var bytes: Int64 = 0
    package var seconds = 0.0
    package var status: TableStatus
    /// Why it failed, or notes.
    package var message: String?
    package var warnings: [String] = []
    /// Records skipped because an interrupted load had already committed them.
    package var resumedRecords = 0
    /// The rejects file, when any record was rejected or repaired.
    package var rejectsFile: String?
    /// Set when the table failed because a write found no room (the import then stops).
    package var noRoom: NoRoom?
    /// For a failed table: true when the database held nothing of it before (no export of it was ever applied),
    /// so there was no previous data to keep.
    package var heldNothing: Bool?

    package init(table: String, location: String, status: TableStatus) {
        self.table = table
        self.location = location
        self.status = status
    }

    /// Rows per second of the load.
    package var rowsPerSecond: Double { seconds > 0 ? Double(records) / seconds : 0 }
}

/// Progress of the table being loaded, reported every half second or so.
package struct ImportProgress: Sendable {
    package var table: String
    package var location: String
    package var records: Int
    /// Uncompressed bytes parsed.
    package var bytes: Int64
    /// Bytes of the input file read so far and its size (compressed for archives), when known.
    package var inputRead: Int64
    package var inputTotal: Int64
    package var elapsed: Double
    /// True for the last report of a table.
    package var finished: Bool

    package init(table: String, location: String, records: Int, bytes: Int64, inputRead: Int64, inputTotal: Int64,
                 elapsed: Double, finished: Bool) {
        self.table = table
        self.location = location
        self.records = records
        self.bytes = bytes
        self.inputRead = inputRead
        self.inputTotal = inputTotal
        self.elapsed = elapsed
        self.finished = finished
    }
}

/// An input file an import could not read a table from (not EPF, a corrupt archive, a wrong MD5), and why.
package struct FailedFile: Sendable, Codable, Equatable {
    package var path: String
    package var message: String
}

/// Everything an import did.
package struct ImportReport: Sendable, Codable {
    package var database: String
    package var outcomes: [TableOutcome] = []
    /// Input files skipped whole because the ledger shows them applied.
    package var unchangedSources: [String] = []
    /// Errors that stopped a file before any table could be attributed (corrupt archive, MD5 mismatch).
    package var fileErrors: [String] = []
    /// The input files among `fileErrors` that nothing could be read from, each with its error: the import's
    /// summary lists them as failed rows beside the tables.
    package var failedFiles: [FailedFile] = []
    /// Derived data rebuilt after the tables (see `DerivedDataBuilder`).
    package var derived: [DerivedOutcome] = []
    package var seconds = 0.0
    /// Where the time went: reading, inserting, index builds, committing, search index, lookup documents,
    /// checkpoint, other.
    package var phases = PhaseTimes()
    /// Process CPU seconds in the same phases: unlike `phases`, unaffected by other programs on the machine.
    package var phasesCPU = PhaseCPU()
    /// Set when the import stopped early because a write found no room (exit 73).
    package var stopped: ImportStop?

    package init(database: String) { self.database = database }

    /// True when nothing failed.
    package var succeeded: Bool {
        stopped == nil && fileErrors.isEmpty && !outcomes.contains { $0.status == .failed }
    }
}

/// One rebuilt set of derived data.
package struct DerivedOutcome: Sendable, Codable {
    /// The builder's name, e.g. "lookup_documents".
    package var name: String
    /// Items written (apps for the lookup documents).
    package var items: Int
    package var seconds: Double

    package init(name: String, items: Int, seconds: Double) {
        self.name = name
        self.items = items
        self.seconds = seconds
    }
}

extension ImportReport {
    /// Ends the report of an import that began at `started` (wall clock) and `startedCPU` (process CPU seconds):
    /// its total time, and the phase times with what no phase claimed counted as "other".
    package mutating func close(started: Date, startedCPU: Double, phases: PhaseTimes, phasesCPU: PhaseCPU) {
        seconds = Date().timeIntervalSince(started)
        var phases = phases
        phases.settle(total: seconds)
        self.phases = phases
        var phasesCPU = phasesCPU
        phasesCPU.total = PhaseCPU.now() - startedCPU
        self.phasesCPU = phasesCPU
    }
}
