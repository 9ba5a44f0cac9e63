import EPFFormat
import Foundation

/// What every store does with a table load's bookkeeping, whatever the database: the outcome a load starts with,
/// the accounting of each accepted record and progress reports. The part start, the verdict before anything is
/// made visible and the end of a load are `LoadState`'s and `TableLoading`'s, below.
struct RecordIntake {
    private var seenKeys = KeyHashSet()
    private let keyIndexes: [Int]
    /// Count repeated keys as they stream by (incrementals; a full finds them when its key is built).
    private let countKeys: Bool
    private let applicationIdIndex: Int?
    /// The `application_id`s of the rows an incremental wrote (for derived data that is kept per app).
    package private(set) var touchedApplicationIds = Set<Int64>()

    package init(schema: TableSchema, mode: ExportMode) {
        keyIndexes = schema.primaryKey.compactMap { schema.index(of: $0) }
        countKeys = mode == .incremental && !keyIndexes.isEmpty
        applicationIdIndex = mode == .incremental ? schema.index(of: "application_id") : nil
    }

    /// The outcome a load of `file` starts with: the schema's corrections and a missing or unknown
    /// `#exportMode` as warnings.
    static func startingOutcome(file: TableFile, mode: ExportMode, schema: TableSchema, header: EPFHeader)
        -> TableOutcome {
        var outcome = TableOutcome(table: file.table, location: file.location, status: .applied)
        outcome.feed = file.feed
        outcome.feedDate = file.feedDate
        outcome.mode = mode.rawValue
        outcome.parts = 0
        outcome.warnings = schema.corrections
        if header.exportMode == nil {
            outcome.warnings.append(header.unknownExportMode.map { "unknown #exportMode '\($0)'; loading as FULL" }
                                    ?? "no #exportMode; loading as FULL")
        }
        return outcome
    }

    /// The rejects file of a table file: `<feed><date>-<table>.rejects` in `directory`.
    package static func rejectsPath(directory: String, file: TableFile) -> String {
        var name = file.table
        if let feed = file.feed, let date = file.feedDate { name = "\(feed)\(date)-\(file.table)" }
        return (directory as NSString).appendingPathComponent(name + ".rejects")
    }

    /// Accounts for a record `binder` accepted: its repairs into the rejects file, a repeated key, the app id.
    @inline(__always)
    package mutating func accepted(_ record: EPFRecord, binder: RowBinder, rejects: RejectsWriter?,
                           outcome: inout TableOutcome) {
        if !binder.repairs.isEmpty {
            for repair in binder.repairs {
                rejects?.writeRepair(record, reason: binder.repairReason(repair, in: record))
            }
            outcome.repaired += binder.repairs.count
        }
        if countKeys {
            if !seenKeys.insert(KeyHashSet.hash(record, keyIndexes: keyIndexes)) { outcome.duplicates += 1 }
        }
        if let applicationIdIndex, let id = EPFValues.integer(record.field(applicationIdIndex)) {
            touchedApplicationIds.insert(id)
        }
    }

    /// Reports progress of a table load, when there is a listener.
    package static func report(_ progress: ((ImportProgress) -> Void)?, _ reader: EPFTableReader, table: String,
                       location: String, records: Int, bytes: Int64, started: Date, finished: Bool) {
        guard let progress else { return }
        let position: (read: Int64, total: Int64) = reader.inputPosition?() ?? (0, 0)
        progress(ImportProgress(table: table, location: location, records: records, bytes: bytes,
                                inputRead: position.read, inputTotal: position.total,
                                elapsed: Date().timeIntervalSince(started), finished: finished))
    }
}

extension TableLoading {
    /// The end of every table load, whatever the store: settles the verification, closes the rejects file (removed
    /// when empty), then publishes the table or, on any failure, undoes and records the refusal in the ledger.
    package func finishLoad(ledger: LedgerType?) -> TableOutcome {
        state.outcome.seconds = Date().timeIntervalSince(state.started)
        guard state.settle(writing: canPublish) else { return state.outcome }
        do {
            if state.failed {
                throw LoadFailure(state.outcome.message ?? "verification failed")
            }
            try state.rejects?.finish()
            if state.outcome.rejects + state.outcome.repaired == 0 {
                try? FileManager.default.removeItem(atPath: state.rejectsPath)
            }
            try publish(ledger: ledger)
            state.outcome.status = state.recordsOnly ? .superseded : .applied
        } catch {
            abort()
            state.outcome.status = .failed
            if state.outcome.message == nil || !(error is LoadFailure) { state.outcome.message = errorText(error) }
            state.outcome.noRoom = DiskSpace.noRoom(in: error)
            // A rejects file that could not be written is not named as if it had been.
            if let file = state.outcome.rejectsFile, !FileManager.default.fileExists(atPath: file) {
                state.outcome.rejectsFile = nil
            }
            ledger?.record(state.outcome, file: state.file, source: state.source)
        }
        state.outcome.seconds = Date().timeIntervalSince(state.started)
        return state.outcome
    }
}

extension LoadState {
    /// The start of every part's load, whatever the store: counts the part, refuses one whose columns differ from
    /// the first part's, and says how many leading records a resumed load skips. Nil when the part was loaded
    /// completely before the interruption.
    mutating func recordsToSkip(reader: EPFTableReader, part: TableFile) throws -> Int? {
        outcome.parts += 1
        if outcome.parts > 1 && reader.header.columns != fileColumns {
            throw LoadFailure("part \(part.location) has different columns than the first part")
        }
        let partNumber = part.part ?? 0
        guard let resume else { return 0 }
        if partNumber < resume.part { return nil }
        return partNumber == resume.part ? resume.records : 0
    }

    /// The verdict at the end of a load: the reject limit, the rejects file named in the outcome, and for a dry
    /// run (or no database) the final outcome. Returns true when the caller should go on to make it visible.
    package mutating func settle(writing: Bool) -> Bool {
        if !failed, let limit = LoadVerification.rejectLimit(
            rejects: outcome.rejects, maxRejects: options.maxRejects, rejectsPath: rejectsPath) {
            failed = true
            outcome.message = limit
        }
        if outcome.rejects + outcome.repaired > 0 { outcome.rejectsFile = rejectsPath }
        guard writing else {
            outcome.status = failed ? .failed : .validated
            outcome.rows = attempts
            return false
        }
        return true
    }
}
