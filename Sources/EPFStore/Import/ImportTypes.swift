import EPFFormat
import Foundation

/// Options of an import.
public struct ImportOptions: Sendable {
    /// Only tables whose name matches this regular expression.
    public var only: String?
    /// Skip tables whose name matches this regular expression.
    public var skip: String?
    /// Read and check everything, write nothing.
    public var dryRun = false
    /// Re-apply files the ledger says were applied.
    public var force = false
    /// Apply tables whose row count differs from `#recordsWritten` (with a warning).
    public var allowCountMismatch = false
    /// Most rejected records per table before the table is refused.
    public var maxRejects = 1000
    /// What a value that is not of its column's type becomes (integers, decimals, booleans and dates alike).
    public var badValues = BadValuePolicy.null
    /// Records between checkpoints (commit + progress row) of a full load.
    public var checkpointRecords = 250_000
    /// How files are read.
    public var readOptions = ReadOptions()
    /// Page size of a database this import creates (SQLite ignores it for existing databases).
    public var pageSize = StoreDatabase.defaultPageSize
    /// Directory for rejects files; default `<database>.rejects`.
    public var rejectsDirectory: String?
    /// Decompress the next bzip2 input while a table finishes (`ReadAheadFile`), keeping its bytes in memory and
    /// in a spill file in the database's directory within these limits; nil: no read-ahead.
    public var readAhead: ReadAheadFile.Limits? = ReadAheadFile.Limits()
    /// Before writing, estimate the space the import needs and refuse when the database's filesystem lacks it
    /// (`SpaceCheck`); `--no-space-check` turns it off.
    public var spaceCheck = true
    /// `--storefronts` and `--languages` as given (nil where not given: the database's selection stays).
    public var selectionRequest = RowSelection.Request()
    /// The selection this import applies: set by the importer from `selectionRequest` and what the database keeps
    /// (`RowSelection.settle`).
    public package(set) var rows = RowSelection()
    /// `--history prices` (true) or `--history none` (false); nil keeps what the database was told.
    public var historyRequest: Bool?
    /// Whether this import records price changes (`PriceHistory`): set by the importer from `historyRequest` and
    /// the database's setting.
    public package(set) var recordsPriceHistory = false
    /// Told the path of every file read ahead (for tests).
    var readAheadStarted: (@Sendable (String) -> Void)?

    public init() {}
}

/// What an import does with a value that is not of its column's type: junk such as `[123]` or
/// `<UnknownKeyException>` in an integer column, a date it cannot read. A bad value in a primary key column or in
/// `export_date` always rejects the row.
public enum BadValuePolicy: String, Sendable, Codable, CaseIterable {
    /// Store NULL, keep the row and record the repair in the rejects file (the default).
    case null
    /// Reject the row.
    case reject
}

/// What happened to one table file.
public enum TableStatus: String, Sendable, Codable {
    /// Loaded and visible to readers.
    case applied
    /// Checked by a dry run; nothing written.
    case validated
    /// Already applied according to the ledger; nothing done.
    case unchanged
    /// Not selected by --only/--skip.
    case filtered
    /// Not applied: the old data stays. See the message.
    case failed
}

/// The outcome of one table (all its parts) in an import.
public struct TableOutcome: Sendable, Codable {
    public var table: String
    public var location: String
    public var feed: String?
    public var feedDate: String?
    public var parts = 1
    public var mode: String?
    public var exportDate: Int64?
    /// Data records read from the file(s).
    public var records = 0
    /// Rows in the table after a full load, or rows upserted by an incremental.
    public var rows = 0
    /// Rows an incremental added (the rest of `rows` were updates).
    public var insertedRows = 0
    public var rejects = 0
    /// Records left out because the database does not keep their storefront or language (`RowSelection`).
    public var leftOut = 0
    public var duplicates = 0
    /// Values stored as NULL because they were not of their column's type (the rows were kept); each is an
    /// entry in the rejects file.
    public var repaired = 0
    public var bytes: Int64 = 0
    public var seconds = 0.0
    public var status: TableStatus
    /// Why it failed, or notes.
    public var message: String?
    public var warnings: [String] = []
    /// Records skipped because an interrupted load had already committed them.
    public var resumedRecords = 0
    /// The rejects file, when any record was rejected or repaired.
    public var rejectsFile: String?
    /// Set when the table failed because a write found no room (the import then stops).
    public var noRoom: NoRoom?

    public init(table: String, location: String, status: TableStatus) {
        self.table = table
        self.location = location
        self.status = status
    }

    /// Rows per second of the load.
    public var rowsPerSecond: Double { seconds > 0 ? Double(records) / seconds : 0 }
}

/// Progress of the table being loaded, reported every half second or so.
public struct ImportProgress: Sendable {
    public var table: String
    public var location: String
    public var records: Int
    /// Uncompressed bytes parsed.
    public var bytes: Int64
    /// Bytes of the input file read so far and its size (compressed for archives), when known.
    public var inputRead: Int64
    public var inputTotal: Int64
    public var elapsed: Double
    /// True for the last report of a table.
    public var finished: Bool
}

/// Everything an import did.
public struct ImportReport: Sendable, Codable {
    public var database: String
    public var outcomes: [TableOutcome] = []
    /// Input files skipped whole because the ledger shows them applied.
    public var unchangedSources: [String] = []
    /// Errors that stopped a file before any table could be attributed (corrupt archive, MD5 mismatch).
    public var fileErrors: [String] = []
    /// Derived data rebuilt after the tables (see `DerivedDataBuilder`).
    public var derived: [DerivedOutcome] = []
    public var seconds = 0.0
    /// Where the time went: reading, inserting, index builds, committing, search index, lookup documents,
    /// checkpoint, other.
    public var phases = PhaseTimes()
    /// Process CPU seconds in the same phases: unlike `phases`, unaffected by other programs on the machine.
    public var phasesCPU = PhaseCPU()
    /// Set when the import stopped early because a write found no room (exit 73).
    public var stopped: ImportStop?

    package init(database: String) { self.database = database }

    /// True when nothing failed.
    public var succeeded: Bool {
        stopped == nil && fileErrors.isEmpty && !outcomes.contains { $0.status == .failed }
    }
}

/// One rebuilt set of derived data.
public struct DerivedOutcome: Sendable, Codable {
    /// The builder's name, e.g. "lookup_documents".
    public var name: String
    /// Items written (apps for the lookup documents).
    public var items: Int
    public var seconds: Double
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
