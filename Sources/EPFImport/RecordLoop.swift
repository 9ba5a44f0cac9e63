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

/// Constants of the shared record loop.
enum RecordLoop {
    /// With `InsertTiming.sampled`, one record in this many is timed.
    static let sampling = 32
}

extension TableLoading {
    /// Loads the records of one part: skips what a resumed load already holds, leaves out what the row selection
    /// does not keep, binds and writes each record or writes it to the rejects file, commits every
    /// `checkpointRecords` in a full load, reports progress, and verifies the part's record count. Problems of the data are recorded in the outcome; thrown errors are I/O,
    /// corrupt compression or database failures, which the caller turns into a failed outcome.
    package func loadRecords(_ reader: EPFTableReader, part: TableFile) throws {
        guard let skipRecords = try state.recordsToSkip(reader: reader, part: part) else { return }
        let partNumber = part.part ?? 0
        let checkpointEvery = max(1, state.options.checkpointRecords)
        let checkpointing = state.mode == .full && writing
        let exportDateColumn = exportDateColumn
        // Read once here, not per row: the load is generic across the module boundary (unspecialized), where reading
        // `state` copies the whole value; only this loop sets the export date while it runs.
        var exportDateMissing = state.outcome.exportDate == nil
        let rowFilter = state.rowFilter
        let rejects = state.rejects
        let sampled = insertTiming == .sampled
        let samplingFactor = UInt64(RecordLoop.sampling)
        var sinceCheckpoint = 0
        var lastReport = Date()
        let loopClock = PhaseClock()
        state.insertNanoseconds = 0
        var loopInsertNanoseconds: UInt64 = 0
        defer {
            let inserted = loopInsertNanoseconds &+ state.insertNanoseconds
            state.phasesCPU.loading += loopClock.cpuSeconds
            let loop = loopClock.wallNanoseconds
            state.phases.inserting += Double(inserted) / 1e9
            state.phases.reading += Double(loop &- min(loop, inserted)) / 1e9
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
                state.outcome.resumedRecords += 1
                return
            }
            if exportDateMissing, let column = exportDateColumn, record.issues.isEmpty {
                let exportDate = EPFValues.integer(record.field(column))
                state.outcome.exportDate = exportDate
                exportDateMissing = exportDate == nil
            }
            if let rowFilter, record.issues.isEmpty, !rowFilter.keeps(record) {
                state.outcome.leftOut += 1
            } else if let reason = try bindRow(record) {
                rejects?.write(record, reason: reason)
                state.outcome.rejects += 1
            } else {
                acceptRow(record)
                try writeRow()
                state.attempts += 1
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
                reportProgress(reader, records: record.number, bytes: state.outcome.bytes + record.offset,
                               finished: false)
            }
        }
        state.outcome.records += summary.records
        state.outcome.bytes += summary.bytes
        let verdict = LoadVerification.check(summary, location: part.location,
                                             allowCountMismatch: state.options.allowCountMismatch)
        if let failure = verdict.failure {
            state.failed = true
            state.outcome.message = failure
        } else if let warning = verdict.warning {
            state.outcome.warnings.append(warning)
        }
        if checkpointing && checkpointsPartEnds && !state.failed {
            let checkpointStarted = Monotonic.now()
            try checkpoint(part: partNumber, recordsDone: summary.records)
            loopInsertNanoseconds &+= Monotonic.now() &- checkpointStarted
        }
        reportProgress(reader, records: summary.records, bytes: state.outcome.bytes, finished: true)
    }

    /// Reports this load's progress, when there is a listener.
    func reportProgress(_ reader: EPFTableReader, records: Int, bytes: Int64, finished: Bool) {
        RecordIntake.report(state.progress, reader, table: table, location: state.file.location, records: records,
                            bytes: bytes, started: state.started, finished: finished)
    }
}
