import EPFFormat
import EPFImport
import EPFSchema
import EPFSQLite
import Foundation

/// Applies EPF inputs (table files, archives, feed directories) to a database: the `epf import` engine.
///
/// Inputs are applied in export-date order, full exports before the incrementals of the same date. Each table is
/// verified (`#recordsWritten`, truncation, MD5 sidecars, reject limit) before it becomes visible; a refused table
/// leaves the previous data in place and is reported, the others are still applied.
package final class Importer {
    /// The database file.
    package let databasePath: String
    /// The options (`rows` settled when the run starts).
    package private(set) var options: ImportOptions
    private let progress: ((ImportProgress) -> Void)?
    private let selection: TableSelection
    /// Derived data brought up to date after the tables (see `DerivedDataBuilder`).
    private let derived: [any DerivedDataBuilder]
    /// Tables applied in this run.
    package private(set) var appliedTables = Set<String>()
    /// What this run changed, for the derived data builders.
    private var changes = DerivedChanges()
    /// Time per phase of this run.
    private var phases = PhaseTimes()
    private var phasesCPU = PhaseCPU()

    /// Prepares an import; `derived` are rebuilt at the end whenever their stamp is not the tables' one.
    /// Throws `ImportError.badOption` for an invalid --only/--skip expression.
    package init(databasePath: String, options: ImportOptions, derived: [any DerivedDataBuilder] = [],
                progress: ((ImportProgress) -> Void)? = nil) throws {
        self.databasePath = databasePath
        self.options = options
        self.derived = derived
        self.progress = progress
        selection = try TableSelection(options: options)
    }

    private func selected(_ table: String) -> Bool { selection.contains(table) }


    /// The ledger of an existing database, opened read-only (a dry run reads the selection it keeps); nil when
    /// there is no database yet or it has no bookkeeping.
    static func readOnlyLedger(_ path: String) throws -> Ledger? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
              (attributes[.size] as? NSNumber)?.int64Value ?? 0 > 0 else { return nil }
        let connection = try SQLiteConnection(path: path, mode: .readOnly)
        guard try connection.tableExists("epf_settings"), try connection.tableExists("epf_ledger") else { return nil }
        return Ledger(connection: connection)
    }

    /// The ledger of the database, read-only, for `epf sync --plan` to leave out what it holds; nil when there is
    /// no database yet or it has no bookkeeping. Throws `SQLiteError` when the file cannot be read.
    package func existingLedger() throws -> (any ImportLedger)? {
        try Self.readOnlyLedger(databasePath)
    }

    /// Runs the import. Throws `ImportError.missingInput` or `.noTables` before doing anything when a path does
    /// not exist or holds no table file, `ImportError.noSpace` (unless `options.spaceCheck` is off) when the
    /// database's filesystem lacks the estimated space (`SpaceCheck`), `ImportError.locked` when another import
    /// holds the database, `SQLiteError` when the database cannot be opened. Data problems do not throw: they are
    /// failed outcomes in the report. A write that finds no room stops the import (`ImportReport.stopped`).
    package func run(paths: [String]) throws -> ImportReport {
        try ImportError.checkInputs(paths)
        if options.spaceCheck, !options.dryRun {
            let check = try SpaceCheck.estimate(paths: paths, databasePath: databasePath,
                                                ranks: options.historyRequest?.ranks, selected: selected)
            if !check.fits { throw check.refusal }
        }
        let started = Date()
        let startedCPU = PhaseCPU.now()
        var report = ImportReport(database: databasePath)
        let lock = options.dryRun ? nil : try ImportLock(databasePath: databasePath)
        let opened = options.dryRun ? nil : try StoreDatabase.open(databasePath, pageSize: options.pageSize)
        let connection = opened?.connection
        let ledger = connection.map(Ledger.init)
        try options.settleRows(ledger: ledger, readOnly: options.dryRun ? try Self.readOnlyLedger(databasePath) : nil)
        if let connection {
            try dropLeftovers(connection)
            // A database from before prices were numbers gets REAL price columns first (docs/import.md).
            try NumericPrices.convert(connection)
            changes.stampBefore = try DerivedData.currentStamp(connection)
        }
        let rejectsDirectory = options.rejectsDirectory ?? databasePath + ".rejects"
        try apply(paths: paths, connection: connection, ledger: ledger,
                  rejectsDirectory: rejectsDirectory, report: &report)
        if var stop = report.stopped {
            // Give the WAL's space back (best effort: a reader may hold it), so the next run has it.
            try? connection?.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            // Measured after the failed table was rolled back: what is free for the next run.
            stop.directory = DiskSpace.directory(of: databasePath)
            stop.freeBytes = try? DiskSpace.available(at: stop.directory)
            stop.appliedBefore = report.outcomes.filter { $0.status == .applied }.map(\.table)
            report.stopped = stop
        }
        // After a write found no room the index would not fit either: its stamp stays behind the tables, and the
        // next import rebuilds it.
        if let connection, report.stopped == nil {
            do {
                try refreshSearchIndex(connection)
            } catch {
                // The tables are applied; only the derived search index is stale. Say so, exit 65.
                report.fileErrors.append("search index not rebuilt (the tables were applied; the next import "
                                         + "rebuilds it): \(error)")
            }
        }
        if let connection, !appliedTables.isEmpty {
            do {
                let checkpointClock = PhaseClock()
                defer { checkpointClock.stop(.checkpoint, &phases, &phasesCPU) }
                try connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
            } catch {
                report.fileErrors.append("WAL checkpoint failed (the tables were applied): \(error)")
            }
        }
        if let opened, opened.initialBuild, report.outcomes.contains(where: { $0.status == .applied }) {
            let switchClock = PhaseClock()
            StoreDatabase.finishInitialBuild(opened.connection)
            switchClock.stop(.checkpoint, &phases, &phasesCPU)
        }
        // After the switch to WAL: derived data is built by readers on other connections while this one writes.
        // After a write found no room the derived data would not fit either; its stamp tells readers to read the
        // tables, and the next import rebuilds it.
        if let connection, report.stopped == nil { rebuildDerived(connection, report: &report) }
        report.close(started: started, startedCPU: startedCPU, phases: phases, phasesCPU: phasesCPU)
        withExtendedLifetime(lock) {}
        return report
    }

    /// Brings the search index up to date with the tables. It is rebuilt when a table it indexes changed, or when
    /// its stamp (`epf_derived`, as for derived data) shows it behind the tables for another reason: an import
    /// stopped by a full disk or killed between a table and the index. When it was current and nothing it indexes
    /// changed, only its stamp moves. An index from before stamps (none recorded) counts as current.
    private func refreshSearchIndex(_ connection: SQLiteConnection) throws {
        let current = try DerivedData.currentStamp(connection)
        let stored = try DerivedData.storedStamp(connection, name: SearchIndex.derivedName)
        guard stored != current else { return }
        let searchable: Set<String> = ["application", "collection", "song", "video", "artist", "media_type"]
        let changed = !appliedTables.isDisjoint(with: searchable)
        let wasCurrent: Bool
        if let stored {
            wasCurrent = stored == changes.stampBefore
        } else {
            wasCurrent = try connection.tableExists("epf_search")
        }
        guard changed || !wasCurrent else {
            try connection.transaction {
                try DerivedData.record(connection, name: SearchIndex.derivedName, stamp: current)
            }
            return
        }
        progress?(ImportProgress(table: "epf_search", location: "search index", records: 0, bytes: 0,
                                 inputRead: 0, inputTotal: 0, elapsed: 0, finished: false))
        let searchClock = PhaseClock()
        defer { searchClock.stop(.searchIndex, &phases, &phasesCPU) }
        try connection.transaction {
            try SearchIndex.rebuild(connection)
            try DerivedData.record(connection, name: SearchIndex.derivedName, stamp: current)
        }
    }

    /// Rebuilds each derived data set whose stamp is not the tables' (also after an import that was killed
    /// before it got there). A failure leaves the old data unused (its stamp is stale) and is reported.
    private func rebuildDerived(_ connection: SQLiteConnection, report: inout ImportReport) {
        for builder in derived {
            do {
                let stamp = try DerivedData.currentStamp(connection)
                guard stamp > 0, try DerivedData.storedStamp(connection, name: builder.name) != stamp else { continue }
                let started = Date()
                let clock = PhaseClock()
                defer { clock.stop(.lookupDocuments, &phases, &phasesCPU) }
                let items = try DerivedDocuments.rebuild(builder, databasePath: databasePath, connection: connection,
                                                         stamp: stamp, changes: changes) { done, total in
                    progress?(ImportProgress(table: builder.name, location: builder.name, records: done, bytes: 0,
                                             inputRead: Int64(done), inputTotal: Int64(total),
                                             elapsed: Date().timeIntervalSince(started), finished: done == total))
                }
                report.derived.append(DerivedOutcome(name: builder.name, items: items,
                                                     seconds: Date().timeIntervalSince(started)))
            } catch {
                report.fileErrors.append("\(builder.name) not rebuilt (the tables were applied; lookups read the "
                                         + "tables directly until the next import): \(error)")
            }
        }
    }

    /// Removes what a killed import may leave behind: tables renamed away but not yet dropped.
    private func dropLeftovers(_ connection: SQLiteConnection) throws {
        let retired = try connection.query(
            "SELECT name FROM sqlite_schema WHERE type = 'table' AND name LIKE 'epf_retired_%'")
        for row in retired {
            if case .text(let name) = row.first {
                try connection.execute("DROP TABLE IF EXISTS \(SQLiteConnection.quote(name))")
            }
        }
    }

    private func apply(paths: [String], connection: SQLiteConnection?, ledger: Ledger?, rejectsDirectory: String,
                       report: inout ImportReport) throws {
        var readAhead = options.readAhead.map { ReadAheadSettings(databasePath: databasePath, limits: $0) }
        readAhead?.started = options.readAheadStarted
        let pass = ImportPass<TableLoad>(options: options, ledger: ledger, selected: selected,
                                         readAhead: readAhead) { file, reader, source in
            try TableLoad(connection: connection, options: self.options, file: file, header: reader.header,
                          source: source, rejectsDirectory: rejectsDirectory, progress: self.progress)
        } ended: { load, outcome in
            self.phases.add(tableLoad: load.state.phases)
            self.phasesCPU.add(tableLoad: load.state.phasesCPU)
            if outcome.status == .applied {
                self.appliedTables.insert(outcome.table)
                self.changes.tables[outcome.table, default: false] = self.changes.tables[outcome.table] == true
                    || load.state.mode != .incremental
                self.changes.applicationIds.formUnion(load.state.touchedApplicationIds)
            }
        }
        try pass.apply(paths: paths, report: &report)
    }
}
