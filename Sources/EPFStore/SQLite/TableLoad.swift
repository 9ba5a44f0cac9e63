import EPFFormat
import EPFImport
import EPFSQLite
import Foundation

/// Loads one table (all its parts) from EPF records into SQLite.
///
/// FULL: rows go into a staging table, committed every `checkpointRecords` with a progress row so a killed load
/// resumes; indexes are built after loading; then one short transaction renames the old table away and the staging
/// table into place, so readers see the whole old table or the whole new one.
/// INCREMENTAL: rows are upserted by primary key inside one transaction that commits only when the file verifies,
/// never replacing a row with one from an older `export_date`.
final class TableLoad {
    let connection: SQLiteConnection?
    /// What every store keeps of a load (options, file, outcome, counts, rejects, phases). Only the loading
    /// thread touches it; the record loop reads and counts in it for every row through `TableLoading`'s accessors,
    /// so its accesses go unchecked (run unspecialized across the module boundary, the loop's dynamic exclusivity
    /// checks cost about 80 instructions a row).
    @exclusivity(unchecked) var state: LoadState
    /// The load's write transaction (see `LoadTransaction`).
    private var transaction = LoadTransaction()
    private let schema: TableSchema
    private(set) var binder: RowBinder
    private var staging: String { "epf_staging_\(schema.name)" }
    private var statement: SQLiteStatement?
    /// Rows an incremental inserted (not updated), to keep the row count without a count(*).
    private var insertedRows = 0
    private let keyIndexes: [Int]
    /// Records the ids a catalogue table's load removes, adds or updates (see `ChangeLog`).
    private var changeTracking: ChangeTracking?
    /// Records the price changes of a price table's load (see `PriceHistory`), with `--history prices`.
    private var prices: PriceRecorder?
    /// Records a popularity table's day of ranks (see `RankHistoryRead`), with `--history ranks`.
    private var ranks: RankRecorder?
    /// Today's chart table by app (`ChartAppLists`), for full loads of app chart tables; read for every row by the
    /// loading thread alone, unchecked.
    @exclusivity(unchecked) private var chartApps: ChartAppRecorder?

    var table: String { schema.name }
    /// `state.mode`, read on every row without a (checked) access to `state`.
    private let mode: ExportMode
    private var options: ImportOptions { state.options }

    init(connection: SQLiteConnection?, options: ImportOptions, file: TableFile, header: EPFHeader,
         source: SourceIdentity, rejectsDirectory: String, progress: ((ImportProgress) -> Void)?) throws {
        self.connection = connection
        let schema = KnownSchemas.resolve(table: file.table, header: header)
        self.schema = schema
        mode = header.exportMode ?? .full
        state = LoadState(options: options, file: file, header: header, schema: schema, source: source,
                          rejectsDirectory: rejectsDirectory, progress: progress)
        binder = RowBinder(schema: schema, fileColumns: header.columns.count, policy: options.badValues,
                           decimalDigits: DecimalNumber.exactDigits)
        keyIndexes = schema.primaryKey.compactMap { schema.index(of: $0) }
        if let connection, !options.dryRun {
            try prepare(connection)
        }
    }

    // MARK: - Preparing the target

    private func quoted(_ name: String) -> String { SQLiteConnection.quote(name) }

    private func existingColumns(_ connection: SQLiteConnection, _ table: String) throws -> [String] {
        try connection.query("SELECT name FROM pragma_table_info(?1)", [.text(table)]).compactMap { row in
            if case .text(let name) = row.first { return name }
            return nil
        }
    }

    private func indexToken() -> String {
        String(UInt64(Date().timeIntervalSince1970 * 1000), radix: 36)
            + String(UInt32.random(in: 0...UInt32.max), radix: 36)
    }

    private func prepare(_ connection: SQLiteConnection) throws {
        changeTracking = try ChangeTracking(connection, table: schema.name)
        prices = try PriceRecorder(connection, table: schema.name, mode: mode, staging: staging,
                                   feedDate: state.file.feedDate, enabled: options.recordsPriceHistory)
        ranks = RankRecorder(table: schema.name, mode: mode, staging: staging, feedDate: state.file.feedDate,
                             enabled: options.recordsRankHistory, schema: schema, fileColumns: binder.columnCount)
        chartApps = ChartAppRecorder(table: schema.name, mode: mode, staging: staging, schema: schema,
                                     fileColumns: binder.columnCount)
        switch mode {
        case .full:
            try prepareFull(connection)
            try transaction.begin(connection)
        case .incremental:
            // The table, columns and key index an incremental creates belong to its transaction: a refused file
            // leaves none of them behind (an empty table left by a refused file made the next incremental look
            // like a change to an existing table rather than the table's first load).
            try transaction.begin(connection)
            try prepareIncremental(connection)
            try changeTracking?.beginIncremental(connection)
            try prices?.began(connection)
        }
    }

    private func prepareFull(_ connection: SQLiteConnection) throws {
        let progressRows = try connection.query(
            "SELECT source, source_size, source_mtime, part, records_done, rows, rejects, duplicates, rejects_bytes, "
            + "repaired, left_out FROM epf_progress WHERE staging = ?1", [.text(staging)])
        var resumeRejectsBytes: Int64?
        if let row = progressRows.first, try connection.tableExists(staging),
           row[0] == .text(state.source.path), row[1] == .integer(state.source.size),
           row[2] == .integer(state.source.mtime),
           case .integer(let part) = row[3], case .integer(let done) = row[4] {
            state.resume = (Int(part), Int(done))
            ranks?.stagingChanged()
            chartApps?.stagingChanged()
            if case .integer(let value) = row[5] { state.attempts = Int(value) }
            if case .integer(let value) = row[6] { state.outcome.rejects = Int(value) }
            if case .integer(let value) = row[8] { resumeRejectsBytes = value }
            if case .integer(let value) = row[9] { state.outcome.repaired = Int(value) }
            if case .integer(let value) = row[10] { state.outcome.leftOut = Int(value) }
            state.outcome.warnings.append("resuming an interrupted load after \(done) records of part \(part)")
        } else {
            try connection.execute("DROP TABLE IF EXISTS \(quoted(staging))")
            try connection.execute("DELETE FROM epf_progress WHERE staging = \(sqlLiteral(staging))")
            // Never drop a column silently: columns of the current table missing from the new file stay (NULL).
            var kept: [String] = []
            if try connection.tableExists(schema.name) {
                let fileNames = Set(schema.columns.map(\.name))
                kept = try existingColumns(connection, schema.name).filter { !fileNames.contains($0) }
                if !kept.isEmpty {
                    state.outcome.warnings.append("columns no longer in the feed kept as NULL: "
                                                  + kept.joined(separator: ", "))
                }
            }
            try connection.execute(schema.createTableSQL(named: staging, extraColumns: kept))
            try changeTracking?.indexKeys(connection, staging: staging)
        }
        state.rejects = try RejectsWriter(path: state.rejectsPath, columns: state.fileColumns,
                                          resumeAt: resumeRejectsBytes,
                                          resumedEntries: state.outcome.rejects + state.outcome.repaired)
        let columns = schema.columns.prefix(binder.columnCount).map { quoted($0.name) }
        let placeholders = (1...max(1, columns.count)).map { "?\($0)" }
        let verb = schema.hasIntegerRowidKey ? "INSERT OR REPLACE" : "INSERT"
        statement = try connection.prepare("\(verb) INTO \(quoted(staging)) (\(columns.joined(separator: ", "))) "
                                           + "VALUES (\(placeholders.prefix(columns.count).joined(separator: ", ")))")
    }

    private func prepareIncremental(_ connection: SQLiteConnection) throws {
        if try !connection.tableExists(schema.name) {
            state.outcome.warnings.append("incremental for a table that does not exist yet: created \(schema.name)")
            try connection.execute(schema.createTableSQL())
            try createIndexes(connection, on: schema.name)
        } else {
            let existing = Set(try existingColumns(connection, schema.name))
            for column in schema.columns where !existing.contains(column.name) {
                try connection.execute("ALTER TABLE \(quoted(schema.name)) ADD COLUMN \(quoted(column.name)) "
                                       + column.sqliteType)
                state.outcome.warnings.append("new column \(column.name) added to \(schema.name)")
            }
            if !schema.hasIntegerRowidKey && !keyIndexes.isEmpty {
                let name = "\(schema.name)__pk"
                let hasUnique = try connection.scalar("""
                    SELECT 1 FROM pragma_index_list(?1) AS l
                    WHERE l."unique" = 1 AND (SELECT group_concat(name, ',') FROM pragma_index_info(l.name)) = ?2
                    """, [.text(schema.name), .text(schema.primaryKey.joined(separator: ","))]) != nil
                if !hasUnique {
                    let keys = schema.primaryKey.map(quoted).joined(separator: ", ")
                    try connection.execute("CREATE UNIQUE INDEX IF NOT EXISTS \(quoted(name)) ON "
                                           + "\(quoted(schema.name)) (\(keys))")
                }
            }
        }
        state.rejects = try RejectsWriter(path: state.rejectsPath, columns: state.fileColumns, resumeAt: nil,
                                          resumedEntries: 0)
        let fileColumnsInSchema = schema.columns.prefix(binder.columnCount)
        let columns = fileColumnsInSchema.map { quoted($0.name) }
        let placeholders = (1...max(1, columns.count)).map { "?\($0)" }
        var sql = "INSERT INTO \(quoted(schema.name)) (\(columns.joined(separator: ", "))) "
            + "VALUES (\(placeholders.prefix(columns.count).joined(separator: ", ")))"
        if !keyIndexes.isEmpty {
            let keys = Set(schema.primaryKey)
            let updates = fileColumnsInSchema.filter { !keys.contains($0.name) }
                .map { "\(quoted($0.name)) = excluded.\(quoted($0.name))" }
            let conflict = "ON CONFLICT (\(schema.primaryKey.map(quoted).joined(separator: ", ")))"
            if updates.isEmpty {
                sql += " \(conflict) DO NOTHING"
            } else {
                sql += " \(conflict) DO UPDATE SET \(updates.joined(separator: ", "))"
                if binder.exportDateColumn != nil {
                    let target = quoted(schema.name)
                    sql += " WHERE excluded.export_date >= \(target).export_date OR \(target).export_date IS NULL"
                }
            }
        }
        statement = try connection.prepare(sql)
    }

    private func sqlLiteral(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }

    private func createIndexes(_ connection: SQLiteConnection, on target: String) throws {
        for statement in schema.createIndexSQL(on: target, suffix: indexToken()) {
            try connection.execute(statement)
        }
    }

    // MARK: - Loading a part (the loop is `TableLoading.loadRecords`)

    var writing: Bool { connection != nil && !state.options.dryRun }
    var insertTiming: InsertTiming { .sampled }
    /// Only when a full's price history is merged before the swap (`BackgroundPriceMerge`), which reads the staging
    /// table from connections of its own: elsewhere the load's final commit follows at once.
    var checkpointsPartEnds: Bool { mode == .full && prices?.commitsPartEnds == true }

    @inline(__always)
    func bindRow(_ record: EPFRecord) throws -> RejectReason? { try binder.bind(record, to: statement) }

    var exportDateColumn: Int? { binder.exportDateColumn }

    @inline(__always)
    func acceptRow(_ record: EPFRecord) {
        state.accept(record, binder: binder)
        ranks?.rowAccepted(record)
        chartApps?.rowAccepted(record)
    }

    @inline(__always)
    func writeRow() throws {
        guard let statement else { return }
        let before = connection?.lastInsertRowid
        try statement.runOnce()
        if mode == .incremental && connection?.lastInsertRowid != before { insertedRows += 1 }
        if let prices, let connection { try prices.rowWritten(connection, exportDate: state.outcome.exportDate) }
    }

    func checkpoint(part: Int, recordsDone: Int) throws {
        guard let connection else { return }
        try checkpoint(connection, part: part, recordsDone: recordsDone)
    }

    private func checkpoint(_ connection: SQLiteConnection, part: Int, recordsDone: Int) throws {
        let rejectsBytes = try state.rejects?.flush() ?? 0
        let update = try connection.prepare("""
            INSERT OR REPLACE INTO epf_progress (staging, table_name, source, source_size, source_mtime, part,
                location, records_done, rows, rejects, duplicates, rejects_bytes, export_date, updated, repaired,
                left_out)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)
            """)
        let outcome = state.outcome
        try update.bind([.text(staging), .text(schema.name), .text(state.source.path), .integer(state.source.size),
                         .integer(state.source.mtime), .integer(Int64(part)), .text(state.file.location),
                         .integer(Int64(recordsDone)), .integer(Int64(state.attempts)),
                         .integer(Int64(outcome.rejects)), .integer(0), .integer(rejectsBytes),
                         outcome.exportDate.map { .integer($0) } ?? .null, .text(StoreDatabase.now()),
                         .integer(Int64(outcome.repaired)), .integer(Int64(outcome.leftOut))])
        try update.step()
        try transaction.checkpoint(connection)
    }

    // MARK: - Finishing

    /// Verifies and makes the table visible (or keeps the old data). Returns the final outcome.
    func finish(ledger: Ledger?) -> TableOutcome {
        statement = nil
        return finishLoad(ledger: ledger)
    }

    var canPublish: Bool { !options.dryRun && connection != nil }

    func publish(ledger: Ledger?) throws {
        guard let connection else { return }
        switch mode {
        case .full: try finishFull(connection, ledger: ledger)
        case .incremental: try finishIncremental(connection, ledger: ledger)
        }
    }

    private func finishFull(_ connection: SQLiteConnection, ledger: Ledger?) throws {
        let indexesClock = PhaseClock()
        // The staging table is committed (at the end of its last part): the price merge reads it meanwhile.
        try prices?.willPublish(connection)
        // Duplicates of composite keys: the later row wins. Building the unique index finds them; only then are the
        // earlier rows counted and removed (the GROUP BY is a full sort, too dear to run when there are none).
        if !schema.hasIntegerRowidKey && !keyIndexes.isEmpty {
            do {
                try createIndexes(connection, on: staging)
            } catch let error as SQLiteError where error.isConstraint {
                let keys = schema.primaryKey.map(quoted).joined(separator: ", ")
                try connection.execute("DELETE FROM \(quoted(staging)) WHERE rowid NOT IN "
                                       + "(SELECT max(rowid) FROM \(quoted(staging)) GROUP BY \(keys))")
                state.outcome.duplicates = Int(connection.changes)
                try createIndexes(connection, on: staging)
            }
            state.outcome.rows = state.attempts - state.outcome.duplicates
        } else {
            try createIndexes(connection, on: staging)
            if case .integer(let rows) = try connection.scalar("SELECT count(*) FROM \(quoted(staging))") {
                state.outcome.rows = Int(rows)
            }
            if schema.hasIntegerRowidKey {
                state.outcome.duplicates = max(0, state.attempts - state.outcome.rows)
            }
        }
        // Removing duplicate keys changed the staging table after the price merge began (it would have found them
        // out of order anyway): merged again in the swap.
        if state.outcome.duplicates != 0 {
            prices?.stagingChanged()
            ranks?.stagingChanged()
            chartApps?.stagingChanged()
        }
        // Today's chart by app: sorted and encoded with the indexes, written in the swap (`ChartAppLists`).
        if !state.recordsOnly { try chartApps?.prepare(connection) }
        state.stop(indexesClock, .indexes)
        let commitClock = PhaseClock()
        defer { state.stop(commitClock, .committing) }
        try transaction.commit(connection)
        if state.recordsOnly {
            // An older day of a chart table: its ranks are recorded, its rows dropped; the table keeps its day.
            try connection.transaction {
                if let ranks {
                    let historyClock = PhaseClock()
                    try ranks.publish(connection, exportDate: state.outcome.exportDate)
                    state.stop(historyClock, .rankHistory)
                }
                try connection.execute("DROP TABLE IF EXISTS \(quoted(staging))")
                try connection.execute("DELETE FROM epf_progress WHERE staging = \(sqlLiteral(staging))")
                try ledger?.recordRanksOnly(state.outcome, file: state.file, source: state.source)
            }
            return
        }
        // The swap: one short transaction.
        let retired = "epf_retired_\(schema.name)"
        try connection.transaction {
            try connection.execute("DROP TABLE IF EXISTS \(quoted(retired))")
            try changeTracking?.recordFull(connection, staging: staging, exportDate: state.outcome.exportDate,
                                           feedDate: state.file.feedDate)
            try publishHistory(connection)
            if try connection.tableExists(schema.name) {
                try connection.execute("ALTER TABLE \(quoted(schema.name)) RENAME TO \(quoted(retired))")
            }
            try connection.execute("ALTER TABLE \(quoted(staging)) RENAME TO \(quoted(schema.name))")
            try connection.execute("DELETE FROM epf_progress WHERE staging = \(sqlLiteral(staging))")
            try ledger?.recordApplied(state.outcome, file: state.file, source: state.source)
            try chartApps?.publish(connection)
        }
        try connection.execute("DROP TABLE IF EXISTS \(quoted(retired))")
    }

    private func finishIncremental(_ connection: SQLiteConnection, ledger: Ledger?) throws {
        let commitClock = PhaseClock()
        defer { state.stop(commitClock, .committing) }
        state.outcome.rows = state.attempts
        state.outcome.insertedRows = insertedRows
        try ledger?.recordApplied(state.outcome, file: state.file, source: state.source)
        try changeTracking?.finishIncremental(connection, exportDate: state.outcome.exportDate,
                                              feedDate: state.file.feedDate)
        try publishHistory(connection)
        try transaction.commit(connection)
    }

    /// Records the load's price changes and chart day, each timed as its own phase; with no recorder (the import
    /// records no history, or not for this table) nothing is timed.
    private func publishHistory(_ connection: SQLiteConnection) throws {
        if let prices {
            let clock = PhaseClock()
            try prices.publish(connection, exportDate: state.outcome.exportDate)
            state.stop(clock, .priceHistory)
        }
        if let ranks {
            let clock = PhaseClock()
            try ranks.publish(connection, exportDate: state.outcome.exportDate)
            state.stop(clock, .rankHistory)
        }
    }

    /// Rolls back and, for a full load, drops the staging table: the previous data stays untouched.
    func abort() {
        statement = nil
        state.rejects?.discardIfEmpty()
        guard let connection, !options.dryRun else { return }
        prices?.abort(connection)
        transaction.rollBack(connection)
        if mode == .full {
            try? connection.execute("DROP TABLE IF EXISTS \(quoted(staging))")
            try? connection.execute("DELETE FROM epf_progress WHERE staging = \(sqlLiteral(staging))")
        }
    }
}

extension TableLoad: TableLoading {}
