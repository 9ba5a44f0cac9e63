import EPFFormat
import Foundation

/// Applies one input path (file, archive, feed directory) through a store's `TableLoading`: skips what the
/// ledger shows applied, filters tables, keeps the parts of one table in one load, refuses a table whose stream
/// breaks, and records fully applied inputs.
package struct ImportPass<Load: TableLoading> {
    package let options: ImportOptions
    package let ledger: Load.LedgerType?
    /// Whether --only/--skip select a table.
    package let selected: (String) -> Bool
    /// Reads the next input ahead while a table finishes (`ReadAheadSchedule`); nil: each input is opened when
    /// its turn comes.
    package var readAhead: ReadAheadSettings? = nil
    /// Starts the load of a table.
    let makeLoad: (TableFile, EPFTableReader, SourceIdentity) throws -> Load
    /// Told of every load that ended, applied or not, with its outcome.
    package let ended: (Load, TableOutcome) -> Void

    package init(options: ImportOptions, ledger: Load.LedgerType?, selected: @escaping (String) -> Bool,
                 readAhead: ReadAheadSettings? = nil,
                 makeLoad: @escaping (TableFile, EPFTableReader, SourceIdentity) throws -> Load,
                 ended: @escaping (Load, TableOutcome) -> Void) {
        self.options = options
        self.ledger = ledger
        self.selected = selected
        self.readAhead = readAhead
        self.makeLoad = makeLoad
        self.ended = ended
    }

    /// Applies `paths` in `ImportOrder`; with `readAhead`, the next input is read ahead across paths too.
    package func apply(paths unordered: [String], report: inout ImportReport) throws {
        let paths = ImportOrder.ordered(unordered)
        let schedule = readAheadSchedule()
        defer { schedule?.cancel() }
        for (position, path) in paths.enumerated() where report.stopped == nil {
            let next = paths.dropFirst(position + 1).first
            try apply(path: path, schedule: schedule, report: &report) {
                guard schedule != nil, let next else { return [] }
                return (try? FeedInput.units(at: next, options: options.readOptions)) ?? []
            }
        }
    }

    private func apply(path: String, schedule: ReadAheadSchedule?, report: inout ImportReport,
                       later: () -> [[String]]) throws {
        let units: [[String]]
        do {
            units = try FeedInput.units(at: path, options: options.readOptions)
        } catch {
            report.fileErrors.append("\(error)")
            report.failedFiles.append(FailedFile(path: path, message: "\(error)"))
            recordFileFailure(path, SourceIdentity(path: path), error)
            return
        }
        var laterUnits: [[String]]?
        func startReadAhead(after index: Int) {
            guard let schedule else { return }
            schedule.start(after: index, in: units) {
                if let laterUnits { return laterUnits }
                let computed = later()
                laterUnits = computed
                return computed
            }
        }
        var pending: Load?
        var fileSucceeded: [(source: SourceIdentity, feedDate: String?, md5: String?, ok: Bool)] = []
        var outcomes: [TableOutcome] = []
        /// Set at the first write that found no room: nothing more is read or written.
        var stop: ImportStop?
        /// The tables of each full export this path holds, for the ledger's record of the tables they lack.
        var listing = ExportListing(path: path)

        func finishPending() {
            guard let load = pending else { return }
            pending = nil
            let outcome = load.finish(ledger: ledger)
            ended(load, outcome)
            outcomes.append(outcome)
            if stop == nil, let cause = outcome.noRoom {
                stop = ImportStop(cause: cause, table: outcome.table, error: outcome.message ?? "")
            }
        }

        for (index, unit) in units.enumerated() where stop == nil {
            guard let file = unit.first else { continue }
            let source = SourceIdentity(paths: unit)
            let prepared = schedule?.take(unit)
            if try alreadyApplied(source) {
                report.unchangedSources.append(file)
                listing.unread(unit)
                continue
            }
            var ok = true
            var md5: String?
            var feedDate: String?
            var failedInsideLoad = false
            /// Tables of this unit the order rule did not apply: their later parts are skipped too.
            var notApplied: Set<String> = []
            /// Whether the first load of this unit said that its archive had no `.md5` to be verified against.
            var unverifiedNoted = false
            do {
                try FeedInput.forEachTable(inUnit: unit, options: options.readOptions,
                                           readAhead: prepared) { tableFile, reader in
                    if stop != nil { throw StopForNoRoom() }
                    listing.read(tableFile, mode: reader.header.exportMode)
                    md5 = tableFile.verifiedMD5
                    feedDate = tableFile.feedDate
                    guard selected(tableFile.table) else {
                        var outcome = TableOutcome(table: tableFile.table, location: tableFile.location,
                                                   status: .filtered)
                        outcome.feed = tableFile.feed
                        outcome.feedDate = tableFile.feedDate
                        outcomes.append(outcome)
                        ok = false
                        return
                    }
                    if let problem = TableName.problem(tableFile.table) {
                        var outcome = TableOutcome(table: tableFile.table, location: tableFile.location,
                                                   status: .failed)
                        outcome.message = problem
                        outcomes.append(outcome)
                        ok = false
                        return
                    }
                    if !options.force, !options.dryRun, let ledger, try ledger.tableApplied(tableFile, source: source) {
                        var outcome = TableOutcome(table: tableFile.table, location: tableFile.location,
                                                   status: .unchanged)
                        outcome.feed = tableFile.feed
                        outcome.feedDate = tableFile.feedDate
                        outcomes.append(outcome)
                        return
                    }
                    let continuesPending = pending.map { load in
                        load.table == tableFile.table && load.state.file.feed == tableFile.feed
                            && load.state.file.feedDate == tableFile.feedDate && load.state.mode == .full
                            && tableFile.part != nil && reader.header.exportMode != .incremental
                    } ?? false
                    if tableFile.part != nil, notApplied.contains(tableFile.table) { return }
                    // An older day of a chart table, with ranks recorded: loaded for its ranks only (the table keeps
                    // its newer day, `LoadState.recordsOnly`), once (then skipped as superseded); --force records
                    // it again, and never takes the table back to the older day.
                    var recordsOnly: String?
                    // Asked only where it decides (a --force, or a file the order skips): a ledger query.
                    func olderChartDay() throws -> Bool {
                        try !options.dryRun && !continuesPending
                            && RankRecording.recordsOnly(table: tableFile.table, mode: reader.header.exportMode,
                                                         options: options)
                            && ledger.map { try olderThanLastFull(tableFile, $0) } ?? false
                    }
                    if options.force, try olderChartDay() {
                        recordsOnly = "an older day than the table holds: its ranks recorded again in their place "
                            + "(--force); the table keeps its newer day"
                        ok = false
                    } else if !options.dryRun, let ledger, !continuesPending,
                       case let decision = try orderDecision(tableFile, reader, ledger), decision != .apply {
                        if case .superseded(let reason) = decision, try olderChartDay(),
                           try !ledger.ranksRecorded(tableFile, source: source) {
                            recordsOnly = "\(reason); its ranks recorded in their place (--history ranks)"
                            // Not recorded as applied, as a file skipped as superseded.
                            ok = false
                        } else {
                            notApplied.insert(tableFile.table)
                            var outcome = TableOutcome(table: tableFile.table, location: tableFile.location,
                                                       status: .unchanged)
                            outcome.feed = tableFile.feed
                            outcome.feedDate = tableFile.feedDate
                            outcome.mode = reader.header.exportMode?.rawValue
                            // Not read, so no row's export_date: the date of its feed folder, as the ledger has it.
                            outcome.exportDate = tableFile.feedDate.flatMap(ImportFailures.midnight)
                            if case .refused(let reason) = decision {
                                outcome.status = .failed
                                outcome.message = ImportFailures.orderRefusalPrefix + reason
                                ledger.record(outcome, file: tableFile, source: source)
                                ok = false
                            } else if case .superseded(let reason) = decision {
                                outcome.status = .superseded
                                outcome.message = reason
                                // Not recorded as applied: after a full taken back with --force it may apply.
                                ok = false
                            }
                            outcomes.append(outcome)
                            return
                        }
                    }
                    if !continuesPending {
                        finishPending()
                        pending = try makeLoad(tableFile, reader, source)
                        if !unverifiedNoted,
                           let warning = UnverifiedArchive.warning(for: tableFile, options: options.readOptions) {
                            pending?.state.outcome.warnings.append(warning)
                            unverifiedNoted = true
                        }
                        if let recordsOnly {
                            pending?.state.recordsOnly = true
                            pending?.state.outcome.message = recordsOnly
                        }
                    }
                    guard let load = pending else { return }
                    do {
                        try load.load(reader, part: tableFile)
                    } catch {
                        // The stream is unusable (I/O, corrupt compression, the database): refuse this table and
                        // stop reading this file.
                        failedInsideLoad = true
                        throw error
                    }
                    // The rows are in: decompress the next input while this table finishes (indexes, checks).
                    startReadAhead(after: index)
                    if load.state.mode == .incremental || tableFile.part == nil { finishPending() }
                }
            } catch is StopForNoRoom {
                ok = false
            } catch {
                ok = false
                listing.unread(unit)
                let noRoom = DiskSpace.noRoom(in: error)
                var table: String?
                if let load = pending {
                    pending = nil
                    load.abort()
                    var outcome = load.finish(ledger: nil)
                    outcome.status = .failed
                    outcome.message = "\(error)"
                    outcome.noRoom = noRoom
                    ended(load, outcome)
                    outcomes.append(outcome)
                    ledger?.record(outcome, file: load.state.file, source: source)
                    table = load.table
                }
                if let noRoom {
                    if stop == nil { stop = ImportStop(cause: noRoom, table: table, error: "\(error)") }
                } else if !failedInsideLoad {
                    report.fileErrors.append("\(error)")
                    report.failedFiles.append(FailedFile(path: file, message: "\(error)"))
                    recordFileFailure(file, source, error)
                }
            }
            fileSucceeded.append((source, feedDate, md5, ok))
            withExtendedLifetime(prepared) {}
        }
        if stop == nil { finishPending() }
        if let ledger, !options.dryRun {
            for index in outcomes.indices where outcomes[index].status == .failed && !outcomes[index].table.isEmpty {
                // Best effort, as recording the failure is: a store gone away (a dropped connection) leaves it unknown.
                outcomes[index].heldNothing = (try? ledger.appliedHistory(table: outcomes[index].table))?.isEmpty
            }
        }
        report.outcomes += outcomes
        if report.stopped == nil { report.stopped = stop }
        if let ledger, !options.dryRun, stop == nil {
            // Before the input is recorded as applied: killed in between, the next run reads it again.
            listing.record(ledger)
        }
        let anyFailed = outcomes.contains { $0.status == .failed }
        if let ledger, !anyFailed, !options.dryRun {
            for entry in fileSucceeded where entry.ok {
                try ledger.recordSource(entry.source, feedDate: entry.feedDate, md5: entry.md5)
            }
        }
    }

    /// Records in the ledger a file that failed before a table was loaded from it (an archive whose `.md5` does not
    /// match, a file that is not EPF), so that `epf status` names it until something makes up for it
    /// (`ImportFailures`). The table is named after the file when its name is one (`application.tbz`).
    private func recordFileFailure(_ path: String, _ source: SourceIdentity, _ error: Error) {
        guard !options.dryRun, let ledger else { return }
        let feed = FeedInput.feedAndDate(in: path)
        let name = (path as NSString).lastPathComponent
        var table = ""
        if FeedInput.feedAndDate(in: name) == nil {
            let candidate = FeedInput.tableName(fromFileName: name).table
            if TableName.problem(candidate) == nil { table = candidate }
        }
        var outcome = TableOutcome(table: table, location: path, status: .failed)
        outcome.message = "\(error)"
        ledger.record(outcome, file: TableFile(location: path, table: table, feed: feed?.feed, feedDate: feed?.date),
                      source: source)
    }

    /// What `ExportOrderRule` says of a table file (the first part of a table split into parts).
    private func orderDecision(_ file: TableFile, _ reader: EPFTableReader,
                               _ ledger: Load.LedgerType) throws -> ExportOrderRule.Decision {
        return ExportOrderRule.decide(table: file.table, mode: reader.header.exportMode, day: file.feedDate,
                                      history: try ledger.appliedHistory(table: file.table), force: options.force)
    }

    /// Whether the file's day is older than the table's last full (not the same day again).
    private func olderThanLastFull(_ file: TableFile, _ ledger: Load.LedgerType) throws -> Bool {
        guard let day = file.feedDate,
              let last = try ledger.appliedHistory(table: file.table).last(where: \.full) else { return false }
        return day < last.day
    }

    /// Whether the ledger shows this input applied completely, so it is not read at all.
    private func alreadyApplied(_ source: SourceIdentity) throws -> Bool {
        guard !options.force, !options.dryRun, let ledger else { return false }
        return try ledger.sourceApplied(source)
    }

    /// The read-ahead of an import, when enabled and inputs are decompressed on another thread at all.
    private func readAheadSchedule() -> ReadAheadSchedule? {
        guard let readAhead, options.readOptions.prefetch else { return nil }
        return ReadAheadSchedule(settings: readAhead, options: options.readOptions,
                                 skipped: { unit in (try? alreadyApplied(SourceIdentity(paths: unit))) ?? true },
                                 selected: selected)
    }
}

/// Ends the reading of a unit once a write found no room (see `ImportStop`).
private struct StopForNoRoom: Error {}
