import EPFFormat
import Foundation

/// One table load's state, kept the same way whatever the store: what the load was asked to do, how far it got and
/// what it found. Both stores' loads (`TableLoad`, `PostgresTableLoad`) hold one as `state`; the record loop
/// (`TableLoading.loadRecords`) and the end of a load (`TableLoading.finishLoad`) work on it.
package struct LoadState {
    /// The import's options (its settled selection and history included).
    package let options: ImportOptions
    /// The table file (the first part's, for a table in parts).
    package let file: TableFile
    /// The input file it came from, as the ledger and the progress rows name it.
    package let source: SourceIdentity
    /// The file's `#exportMode` (FULL when it has none).
    package let mode: ExportMode
    /// The columns of the first part's header (every part must have the same).
    package let fileColumns: [String]
    /// Leaves out the rows of storefronts and languages the database does not keep (nil: keeps every row).
    let rowFilter: RowFilter?
    /// The rejects file of the table file (`RecordIntake.rejectsPath`), kept only when something was written.
    package let rejectsPath: String
    /// Told of the load's progress every half second or so, and at the end of each part.
    package let progress: ((ImportProgress) -> Void)?
    /// When the load began.
    package let started = Date()
    /// The outcome so far: counts, warnings, the export date, and at the end the status.
    package var outcome: TableOutcome
    /// Per-record bookkeeping (repeated keys, touched app ids).
    var intake: RecordIntake
    /// The rejects file's writer, opened while preparing (nil for a dry run or no database).
    package var rejects: RejectsWriter?
    /// Where an interrupted full load resumes (set while preparing), nil for a new load.
    package var resume: (part: Int, records: Int)?
    /// Rows written (before duplicates are removed).
    package var attempts = 0
    /// Set when the load cannot be applied (see the outcome's message).
    package var failed = false
    /// Set for a chart table's older day (`RankRecording.recordsOnly`): the load records the day's ranks and
    /// drops its rows; the table, and the ledger, keep the newer day (the outcome is `superseded`).
    package var recordsOnly = false
    /// Time spent in reading, inserting, index builds and committing (the importer adds them up).
    package var phases = PhaseTimes()
    /// Process CPU time in the same phases.
    package var phasesCPU = PhaseCPU()
    /// With `InsertTiming.byStore`: the nanoseconds the store spent writing since the part began.
    package var insertNanoseconds: UInt64 = 0

    /// The state a load of `file` (its first part's `header`, resolved to `schema`) starts with.
    package init(options: ImportOptions, file: TableFile, header: EPFHeader, schema: TableSchema,
                 source: SourceIdentity, rejectsDirectory: String, progress: ((ImportProgress) -> Void)?) {
        self.options = options
        self.file = file
        self.source = source
        self.progress = progress
        mode = header.exportMode ?? .full
        fileColumns = header.columns
        rowFilter = RowFilter(selection: options.rows, table: file.table, columns: header.columns)
        rejectsPath = RecordIntake.rejectsPath(directory: rejectsDirectory, file: file)
        outcome = RecordIntake.startingOutcome(file: file, mode: mode, schema: schema, header: header)
        intake = RecordIntake(schema: schema, mode: mode)
    }

    /// The `application_id`s of the rows an incremental wrote (for derived data that is kept per app).
    package var touchedApplicationIds: Set<Int64> { intake.touchedApplicationIds }

    /// Accounts for a record `binder` accepted (`RecordIntake.accepted`).
    @inline(__always)
    package mutating func accept(_ record: EPFRecord, binder: RowBinder) {
        intake.accepted(record, binder: binder, rejects: rejects, outcome: &outcome)
    }
}

extension LoadState {
    /// Adds the time `clock` measured to `phase`.
    package mutating func stop(_ clock: PhaseClock, _ phase: Phase) {
        clock.stop(phase, &phases, &phasesCPU)
    }
}
