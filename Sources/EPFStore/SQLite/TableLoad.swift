import EPFFormat
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
    let options: ImportOptions
    let file: TableFile
    let source: SourceIdentity
    let mode: ExportMode
    let progress: ((ImportProgress) -> Void)?
    let rejectsPath: String
    var outcome: TableOutcome
    /// The load's write transaction (see `LoadTransaction`).
    private var transaction = LoadTransaction()
    private var schema: TableSchema
    private(set) var binder: RowBinder
    let started = Date()
    private var staging: String { "epf_staging_\(schema.name)" }
    private var statement: SQLiteStatement?
    private(set) var rejects: RejectsWriter?
    private(set) var resume: (part: Int, records: Int)?
    /// Per-record bookkeeping shared with the PostgreSQL store.
    var intake: RecordIntake
    /// Rows an incremental inserted (not updated), to keep the row count without a count(*).
    private var insertedRows = 0
    private var keyIndexes: [Int] = []
    /// The `application_id`s of the rows an incremental wrote (for derived data that is kept per app).
    var touchedApplicationIds: Set<Int64> { intake.touchedApplicationIds }
    private(set) var fileColumns: [String]
    /// Leaves out the rows of storefronts and languages the database does not keep (nil: keeps every row).
    let rowFilter: RowFilter?
    /// Records the ids a catalogue table's load removes, adds or updates (see `ChangeLog`).
    private var changeTracking: ChangeTracking?
    /// Records the price changes of a price table's load (see `PriceHistory`), with `--history prices`.
    private var prices: PriceRecorder?
    var failed = false
    var attempts = 0
    /// Time spent in reading, inserting, index builds and committing (the importer adds them up).
    var phases = PhaseTimes()
    /// Process CPU time in the same phases.
    var phasesCPU = PhaseCPU()

    var table: String { schema.name }
    /// Unused: this store's row time is sampled by the loop (`InsertTiming.sampled`).
    var insertNanoseconds: UInt64 = 0

    init(connection: SQLiteConnection?, options: ImportOptions, file: TableFile, header: EPFHeader,
         source: SourceIdentity, rejectsDirectory: String, progress: ((ImportProgress) -> Void)?) throws {
        self.connection = connection
        self.options = options
        self.file = file
        self.source = source
        self.progress = progress
        mode = header.exportMode ?? .full
        schema = KnownSchemas.resolve(table: file.table, header: header)
        fileColumns = header.columns
        rowFilter = RowFilter(selection: options.rows, table: file.table, columns: header.columns)
        binder = RowBinder(schema: schema, fileColumns: header.columns.count, policy: options.badValues,
                           decimalDigits: DecimalNumber.exactDigits)
        rejectsPath = RecordIntake.rejectsPath(directory: rejectsDirectory, file: file)
        outcome = RecordIntake.startingOutcome(file: file, mode: mode, schema: schema, header: header)
        let resolved = schema
        keyIndexes = resolved.primaryKey.compactMap { resolved.index(of: $0) }
        intake = RecordIntake(schema: resolved, mode: mode)
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
                                   feedDate: file.feedDate, enabled: options.recordsPriceHistory)
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
           row[0] == .text(source.path), row[1] == .integer(source.size), row[2] == .integer(source.mtime),
           case .integer(let part) = row[3], case .integer(let done) = row[4] {
            resume = (Int(part), Int(done))
            if case .integer(let value) = row[5] { attempts = Int(value) }
            if case .integer(let value) = row[6] { outcome.rejects = Int(value) }
            if case .integer(let value) = row[8] { resumeRejectsBytes = value }
            if case .integer(let value) = row[9] { outcome.repaired = Int(value) }
            if case .integer(let value) = row[10] { outcome.leftOut = Int(value) }
            outcome.warnings.append("resuming an interrupted load after \(done) records of part \(part)")
        } else {
            try connection.execute("DROP TABLE IF EXISTS \(quoted(staging))")
            try connection.execute("DELETE FROM epf_progress WHERE staging = \(sqlLiteral(staging))")
            // Never drop a column silently: columns of the current table missing from the new file stay (NULL).
            var kept: [String] = []
            if try connection.tableExists(schema.name) {
                let fileNames = Set(schema.columns.map(\.name))
                kept = try existingColumns(connection, schema.name).filter { !fileNames.contains($0) }
                if !kept.isEmpty {
                    outcome.warnings.append("columns no longer in the feed kept as NULL: "
                                            + kept.joined(separator: ", "))
                }
            }
            try connection.execute(schema.createTableSQL(named: staging, extraColumns: kept))
            try changeTracking?.indexKeys(connection, staging: staging)
        }
        rejects = try RejectsWriter(path: rejectsPath, columns: fileColumns, resumeAt: resumeRejectsBytes,
                                    resumedEntries: outcome.rejects + outcome.repaired)
        let columns = schema.columns.prefix(binder.columnCount).map { quoted($0.name) }
        let placeholders = (1...max(1, columns.count)).map { "?\($0)" }
        let verb = schema.hasIntegerRowidKey ? "INSERT OR REPLACE" : "INSERT"
        statement = try connection.prepare("\(verb) INTO \(quoted(staging)) (\(columns.joined(separator: ", "))) "
                                           + "VALUES (\(placeholders.prefix(columns.count).joined(separator: ", ")))")
    }

    private func prepareIncremental(_ connection: SQLiteConnection) throws {
        if try !connection.tableExists(schema.name) {
            outcome.warnings.append("incremental for a table that does not exist yet: created \(schema.name)")
            try connection.execute(schema.createTableSQL())
            try createIndexes(connection, on: schema.name)
        } else {
            let existing = Set(try existingColumns(connection, schema.name))
            for column in schema.columns where !existing.contains(column.name) {
                try connection.execute("ALTER TABLE \(quoted(schema.name)) ADD COLUMN \(quoted(column.name)) "
                                       + column.sqliteType)
                outcome.warnings.append("new column \(column.name) added to \(schema.name)")
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
        rejects = try RejectsWriter(path: rejectsPath, columns: fileColumns, resumeAt: nil, resumedEntries: 0)
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

    // MARK: - Loading a part (the loop is `RecordLoading.loadRecords`)

    func load(_ reader: EPFTableReader, part: TableFile) throws { try loadRecords(reader, part: part) }

    var writing: Bool { connection != nil && !options.dryRun }
    var insertTiming: InsertTiming { .sampled }
    /// Only when a full's price history is merged before the swap (`BackgroundPriceMerge`), which reads the staging
    /// table from connections of its own: elsewhere the load's final commit follows at once.
    var checkpointsPartEnds: Bool { mode == .full && prices?.commitsPartEnds == true }

    @inline(__always)
    func bindRow(_ record: EPFRecord) throws -> RejectReason? { try binder.bind(record, to: statement) }

    var exportDateColumn: Int? { binder.exportDateColumn }

    @inline(__always)
    func acceptRow(_ record: EPFRecord) {
        intake.accepted(record, binder: binder, rejects: rejects, outcome: &outcome)
    }

    @inline(__always)
    func writeRow() throws {
        guard let statement else { return }
        let before = connection?.lastInsertRowid
        try statement.runOnce()
        if mode == .incremental && connection?.lastInsertRowid != before { insertedRows += 1 }
        if let prices, let connection { try prices.rowWritten(connection, exportDate: outcome.exportDate) }
    }

    func checkpoint(part: Int, recordsDone: Int) throws {
        guard let connection else { return }
        try checkpoint(connection, part: part, recordsDone: recordsDone)
    }

    private func checkpoint(_ connection: SQLiteConnection, part: Int, recordsDone: Int) throws {
        let rejectsBytes = try rejects?.flush() ?? 0
        let update = try connection.prepare("""
            INSERT OR REPLACE INTO epf_progress (staging, table_name, source, source_size, source_mtime, part,
                location, records_done, rows, rejects, duplicates, rejects_bytes, export_date, updated, repaired,
                left_out)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)
            """)
        try update.bind([.text(staging), .text(schema.name), .text(source.path), .integer(source.size),
                         .integer(source.mtime), .integer(Int64(part)), .text(file.location),
                         .integer(Int64(recordsDone)), .integer(Int64(attempts)), .integer(Int64(outcome.rejects)),
                         .integer(0), .integer(rejectsBytes), outcome.exportDate.map { .integer($0) } ?? .null,
                         .text(StoreDatabase.now()), .integer(Int64(outcome.repaired)),
                         .integer(Int64(outcome.leftOut))])
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
                outcome.duplicates = Int(connection.changes)
                try createIndexes(connection, on: staging)
            }
            outcome.rows = attempts - outcome.duplicates
        } else {
            try createIndexes(connection, on: staging)
            if case .integer(let rows) = try connection.scalar("SELECT count(*) FROM \(quoted(staging))") {
                outcome.rows = Int(rows)
            }
            if schema.hasIntegerRowidKey { outcome.duplicates = max(0, attempts - outcome.rows) }
        }
        // Removing duplicate keys changed the staging table after the price merge began (it would have found them
        // out of order anyway): merged again in the swap.
        if outcome.duplicates != 0 { prices?.stagingChanged() }
        indexesClock.stop(.indexes, &phases, &phasesCPU)
        let commitClock = PhaseClock()
        defer { commitClock.stop(.committing, &phases, &phasesCPU) }
        try transaction.commit(connection)
        // The swap: one short transaction.
        let retired = "epf_retired_\(schema.name)"
        try connection.transaction {
            try connection.execute("DROP TABLE IF EXISTS \(quoted(retired))")
            try changeTracking?.recordFull(connection, staging: staging, exportDate: outcome.exportDate,
                                           feedDate: file.feedDate)
            let historyClock = PhaseClock()
            try prices?.publish(connection, exportDate: outcome.exportDate)
            historyClock.stop(.priceHistory, &phases, &phasesCPU)
            if try connection.tableExists(schema.name) {
                try connection.execute("ALTER TABLE \(quoted(schema.name)) RENAME TO \(quoted(retired))")
            }
            try connection.execute("ALTER TABLE \(quoted(staging)) RENAME TO \(quoted(schema.name))")
            try connection.execute("DELETE FROM epf_progress WHERE staging = \(sqlLiteral(staging))")
            try ledger?.recordApplied(outcome, file: file, source: source, on: connection)
        }
        try connection.execute("DROP TABLE IF EXISTS \(quoted(retired))")
    }

    private func finishIncremental(_ connection: SQLiteConnection, ledger: Ledger?) throws {
        let commitClock = PhaseClock()
        defer { commitClock.stop(.committing, &phases, &phasesCPU) }
        outcome.rows = attempts
        outcome.insertedRows = insertedRows
        try ledger?.recordApplied(outcome, file: file, source: source, on: connection)
        try changeTracking?.finishIncremental(connection, exportDate: outcome.exportDate, feedDate: file.feedDate)
        let historyClock = PhaseClock()
        try prices?.publish(connection, exportDate: outcome.exportDate)
        historyClock.stop(.priceHistory, &phases, &phasesCPU)
        try transaction.commit(connection)
    }

    /// Rolls back and, for a full load, drops the staging table: the previous data stays untouched.
    func abort() {
        statement = nil
        rejects?.discardIfEmpty()
        guard let connection, !options.dryRun else { return }
        prices?.abort(connection)
        transaction.rollBack(connection)
        if mode == .full {
            try? connection.execute("DROP TABLE IF EXISTS \(quoted(staging))")
            try? connection.execute("DELETE FROM epf_progress WHERE staging = \(sqlLiteral(staging))")
        }
    }
}

/// A table could not be applied for a reason the outcome message explains.
package struct LoadFailure: Error, CustomStringConvertible {
    package let description: String
    package init(_ message: String) { description = message }
}
