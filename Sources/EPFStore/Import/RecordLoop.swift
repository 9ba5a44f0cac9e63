import EPFFormat
import Foundation

/// How a store's record loop splits its time between reading and inserting (`PhaseTimes`).
package enum InsertTiming {
    /// The loop times one record in `RecordLoop.sampling` from bind to written, and counts it that many times:
    /// right when every row costs about the same (SQLite steps a statement per row), and reading the clock twice
    /// per row would cost a few percent of the load itself.
    case sampled
    /// The store times its own occasional expensive writes (PostgreSQL sends buffered COPY data) and reports them
    /// in `insertNanoseconds`; the loop adds the checkpoints.
    case byStore
}

/// One table load as the shared record loop sees it: the bookkeeping every store keeps, and the store's own steps
/// that turn a record into a row. Both stores' loads (`TableLoad`, `PostgresTableLoad`) read their parts through
/// `loadRecords(_:part:)`.
package protocol RecordLoading: AnyObject {
    var outcome: TableOutcome { get set }
    var intake: RecordIntake { get set }
    /// The position of `export_date` in the file's columns, nil when it has none.
    var exportDateColumn: Int? { get }
    var rejects: RejectsWriter? { get }
    var attempts: Int { get set }
    var failed: Bool { get set }
    var options: ImportOptions { get }
    var mode: ExportMode { get }
    var fileColumns: [String] { get }
    /// Leaves out the rows of storefronts and languages the database does not keep (`--storefronts`,
    /// `--languages`); nil keeps every row.
    var rowFilter: RowFilter? { get }
    var resume: (part: Int, records: Int)? { get }
    var phases: PhaseTimes { get set }
    var phasesCPU: PhaseCPU { get set }
    var progress: ((ImportProgress) -> Void)? { get }
    var started: Date { get }
    var file: TableFile { get }
    var table: String { get }
    /// True when rows reach a database (not a dry run, a database is open).
    var writing: Bool { get }
    var insertTiming: InsertTiming { get }
    /// With `.byStore`: the nanoseconds the store spent writing since the part began.
    var insertNanoseconds: UInt64 { get set }
    /// Binds a record as the next row; nil when it is bound, else why it is rejected (nothing is written then).
    func bindRow(_ record: EPFRecord) throws -> RejectReason?
    /// Accounts for the row just bound (`RecordIntake.accepted` with the store's binder, read in place rather
    /// than copied out through a getter for every row).
    func acceptRow(_ record: EPFRecord)
    /// Writes the row just bound.
    func writeRow() throws
    /// Commits what a full load wrote so far with a progress row, so a rerun resumes after `recordsDone`.
    func checkpoint(part: Int, recordsDone: Int) throws
    /// Whether the end of each part of a full load is a checkpoint too (a rerun then skips the part whole).
    var checkpointsPartEnds: Bool { get }
}

/// Constants of the shared record loop.
package enum RecordLoop {
    /// With `InsertTiming.sampled`, one record in this many is timed.
    static let sampling = 32
}

extension RecordLoading {
    /// Loads the records of one part: skips what a resumed load already holds, leaves out what the row selection
    /// does not keep, binds and writes each record or writes it to the rejects file, commits every `checkpointRecords` in a full load, reports progress, and
    /// verifies the part's record count. Problems of the data are recorded in the outcome; thrown errors are I/O,
    /// corrupt compression or database failures, which the caller turns into a failed outcome.
    package func loadRecords(_ reader: EPFTableReader, part: TableFile) throws {
        guard let skipRecords = try RecordIntake.recordsToSkip(&outcome, reader: reader, part: part,
                                                                fileColumns: fileColumns, resume: resume) else {
            return
        }
        let partNumber = part.part ?? 0
        let checkpointEvery = max(1, options.checkpointRecords)
        let checkpointing = mode == .full && writing
        let sampled = insertTiming == .sampled
        let samplingFactor = UInt64(RecordLoop.sampling)
        var sinceCheckpoint = 0
        var lastReport = Date()
        let loopClock = PhaseClock()
        insertNanoseconds = 0
        var loopInsertNanoseconds: UInt64 = 0
        defer {
            let inserted = loopInsertNanoseconds &+ insertNanoseconds
            phasesCPU.loading += loopClock.cpuSeconds
            let loop = loopClock.wallNanoseconds
            phases.inserting += Double(inserted) / 1e9
            phases.reading += Double(loop &- min(loop, inserted)) / 1e9
        }
        let summary = try reader.forEachRecord { record in
            let timed = sampled && record.number % RecordLoop.sampling == 0
            let recordStarted = timed ? Monotonic.now() : 0
            var checkpointNanoseconds: UInt64 = 0
            defer {
                if timed {
                    let elapsed = Monotonic.now() &- recordStarted &- checkpointNanoseconds
                    loopInsertNanoseconds &+= elapsed &* samplingFactor
                }
                loopInsertNanoseconds &+= checkpointNanoseconds
            }
            if record.number <= skipRecords {
                outcome.resumedRecords += 1
                return
            }
            if outcome.exportDate == nil, let column = exportDateColumn, record.issues.isEmpty {
                outcome.exportDate = EPFValues.integer(record.field(column))
            }
            if let rowFilter, record.issues.isEmpty, !rowFilter.keeps(record) {
                outcome.leftOut += 1
            } else if let reason = try bindRow(record) {
                rejects?.write(record, reason: reason)
                outcome.rejects += 1
            } else {
                acceptRow(record)
                try writeRow()
                attempts += 1
            }
            sinceCheckpoint += 1
            if sinceCheckpoint >= checkpointEvery {
                sinceCheckpoint = 0
                if checkpointing {
                    let checkpointStarted = Monotonic.now()
                    try checkpoint(part: partNumber, recordsDone: record.number)
                    checkpointNanoseconds = Monotonic.now() &- checkpointStarted
                }
            }
            if sinceCheckpoint & 0x3fff == 0 && Date().timeIntervalSince(lastReport) >= 0.5 {
                lastReport = Date()
                reportProgress(reader, records: record.number, bytes: outcome.bytes + record.offset, finished: false)
            }
        }
        outcome.records += summary.records
        outcome.bytes += summary.bytes
        let verdict = LoadVerification.check(summary, location: part.location,
                                             allowCountMismatch: options.allowCountMismatch)
        if let failure = verdict.failure {
            failed = true
            outcome.message = failure
        } else if let warning = verdict.warning {
            outcome.warnings.append(warning)
        }
        if checkpointing && checkpointsPartEnds && !failed {
            let checkpointStarted = Monotonic.now()
            try checkpoint(part: partNumber, recordsDone: summary.records)
            loopInsertNanoseconds &+= Monotonic.now() &- checkpointStarted
        }
        reportProgress(reader, records: summary.records, bytes: outcome.bytes, finished: true)
    }

    /// Reports this load's progress, when there is a listener.
    func reportProgress(_ reader: EPFTableReader, records: Int, bytes: Int64, finished: Bool) {
        RecordIntake.report(progress, reader, table: table, location: file.location, records: records,
                            bytes: bytes, started: started, finished: finished)
    }
}
