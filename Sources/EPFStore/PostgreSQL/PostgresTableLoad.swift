import EPFFormat
import EPFImport
import EPFPostgres
import EPFStore
import Foundation

/// `RowBinder`'s values into a row of PostgreSQL's binary COPY format.
final class CopyRowSink: RowSink {
    let writer: BinaryCopyWriter

    init(writer: BinaryCopyWriter) { self.writer = writer }

    func bindNull(at index: Int32) throws { writer.writeNull() }

    func bind(_ value: Int64, at index: Int32) throws { writer.writeInteger(value, column: Int(index) - 1) }

    func bindTextNoCopy(_ bytes: UnsafeRawPointer, count: Int, at index: Int32) throws {
        guard writer.writeText(bytes, count: count, column: Int(index) - 1) else {
            throw LoadFailure("a value of column \(index) could not be encoded for PostgreSQL")
        }
    }
}

/// Loads one table (all its parts) from EPF records into PostgreSQL, with the contract of `TableLoad`:
///
/// FULL: rows are COPied (binary) into a staging table, committed every `checkpointRecords` with a progress row so
/// a killed load (or a dropped connection) resumes there; then, in one transaction, the keys and indexes are built
/// and the staging table is renamed into place, so readers see the whole old table or the whole new one.
/// INCREMENTAL: rows are COPied into a temporary table, then upserted with one
/// `INSERT ... ON CONFLICT DO UPDATE ... WHERE excluded.export_date >= t.export_date`, in one transaction that
/// commits only when the file has verified.
final class PostgresTableLoad {
    let connection: PostgresConnection?
    let target: PostgresTarget
    /// What every store keeps of a load (options, file, outcome, counts, rejects, phases). Only the loading
    /// thread touches it; the record loop reads and counts in it for every row through `TableLoading`'s accessors,
    /// so its accesses go unchecked (run unspecialized across the module boundary, the loop's dynamic exclusivity
    /// checks cost about 80 instructions a row).
    @exclusivity(unchecked) var state: LoadState
    let schema: TableSchema
    let binder: RowBinder
    let writer: BinaryCopyWriter
    private let sink: CopyRowSink
    let keyIndexes: [Int]
    /// Records the price changes of a price table's load (see `PriceHistory`), with `--history prices`.
    var prices: PostgresPriceRecorder?
    /// Records a popularity table's day of ranks (see `PostgresRankRecorder`), with `--history ranks`.
    var ranks: PostgresRankRecorder?
    /// Column types of the existing table an incremental goes into, by name (the file's may differ).
    var targetTypes: [String: String] = [:]
    var inTransaction = false
    var copying = false
    /// True when rows reach a database (not a dry run, a database is open); read on every row.
    let writing: Bool

    var table: String { schema.name }
    var mode: ExportMode { state.mode }
    var staging: String { "epf_staging_\(schema.name)" }
    let incoming = "epf_incoming"

    init(connection: PostgresConnection?, target: PostgresTarget, options: ImportOptions, file: TableFile,
         header: EPFHeader, source: SourceIdentity, rejectsDirectory: String,
         progress: ((ImportProgress) -> Void)?) throws {
        self.connection = connection
        self.target = target
        let schema = KnownSchemas.resolve(table: file.table, header: header)
        self.schema = schema
        state = LoadState(options: options, file: file, header: header, schema: schema, source: source,
                          rejectsDirectory: rejectsDirectory, progress: progress)
        binder = RowBinder(schema: schema, fileColumns: header.columns.count, policy: options.badValues)
        writer = BinaryCopyWriter(kinds: schema.columns.prefix(binder.columnCount).map(PostgresTarget.kind))
        sink = CopyRowSink(writer: writer)
        keyIndexes = schema.primaryKey.compactMap { schema.index(of: $0) }
        writing = connection != nil && !options.dryRun
        guard "epf_retired_\(file.table)".utf8.count <= 63 else {
            throw LoadFailure("table name '\(file.table)' is too long for PostgreSQL (at most 51 bytes)")
        }
        if let connection, !options.dryRun {
            try prepare(connection)
        }
    }

    // MARK: - Preparing the target

    func quoted(_ name: String) -> String { PostgresTarget.quote(name) }
    func qualified(_ name: String) -> String { target.qualified(name) }
    var loadedColumns: ArraySlice<ColumnSpec> { schema.columns.prefix(binder.columnCount) }
    var columnList: String { loadedColumns.map { quoted($0.name) }.joined(separator: ", ") }
    var keyList: String { schema.primaryKey.map(quoted).joined(separator: ", ") }

    private func createTableSQL(_ name: String, extraColumns: [(name: String, type: String)],
                                withKey: Bool) -> String {
        var definitions = schema.columns.map { "\(quoted($0.name)) \(PostgresTarget.kind($0).sqlType)" }
        definitions += extraColumns.map { "\(quoted($0.name)) \($0.type)" }
        if withKey && !keyIndexes.isEmpty {
            definitions.append("CONSTRAINT \(quoted(indexName("pk"))) PRIMARY KEY (\(keyList))")
        }
        return "CREATE TABLE \(qualified(name)) (\(definitions.joined(separator: ", ")))"
    }

    /// Index names are unique per schema and at most 63 bytes: the table (cut), a role and a random token.
    func indexName(_ role: String) -> String {
        let token = String(UInt64(Date().timeIntervalSince1970 * 1000), radix: 36)
            + String(UInt32.random(in: 0...UInt32.max), radix: 36)
        return "\(schema.name.prefix(40))_\(role)_\(token)"
    }

    func begin(_ connection: PostgresConnection) throws {
        try connection.execute("BEGIN")
        inTransaction = true
    }

    func commit(_ connection: PostgresConnection) throws {
        try connection.execute("COMMIT")
        inTransaction = false
    }

    private func startCopy(_ connection: PostgresConnection, into table: String) throws {
        writer.startStream()
        try connection.beginCopy("COPY \(table) (\(columnList)) FROM STDIN (FORMAT binary)")
        copying = true
    }

    func endCopy(_ connection: PostgresConnection) throws {
        writer.finishStream()
        try writer.flush(to: connection)
        copying = false
        try connection.endCopy()
    }

    private func prepare(_ connection: PostgresConnection) throws {
        prices = try PostgresPriceRecorder(connection, target: target, table: schema.name, mode: mode,
                                           loaded: mode == .full ? staging : incoming, feedDate: state.file.feedDate,
                                           enabled: state.options.recordsPriceHistory)
        ranks = PostgresRankRecorder(target: target, table: schema.name, mode: mode, staging: staging,
                                     feedDate: state.file.feedDate, enabled: state.options.recordsRankHistory)
        switch mode {
        case .full: try prepareFull(connection)
        case .incremental: try prepareIncremental(connection)
        }
        try prices?.began(connection)
    }

    private func prepareFull(_ connection: PostgresConnection) throws {
        let row = try connection.query("""
            SELECT source, source_size, source_mtime, part, records_done, rows, rejects, rejects_bytes, repaired,
                left_out
            FROM \(qualified("epf_progress")) WHERE staging = $1
            """, [staging]).first
        var resumeRejectsBytes: Int64?
        if let row, row.count == 10, try target.tableExists(connection, staging), row[0] == state.source.path,
           row[1] == String(state.source.size), row[2] == String(state.source.mtime),
           let part = row[3].flatMap({ Int($0) }), let done = row[4].flatMap({ Int($0) }) {
            state.resume = (part, done)
            state.attempts = row[5].flatMap { Int($0) } ?? 0
            state.outcome.rejects = row[6].flatMap { Int($0) } ?? 0
            resumeRejectsBytes = row[7].flatMap { Int64($0) }
            state.outcome.repaired = row[8].flatMap { Int($0) } ?? 0
            state.outcome.leftOut = row[9].flatMap { Int($0) } ?? 0
            state.outcome.warnings.append("resuming an interrupted load after \(done) records of part \(part)")
            try begin(connection)
        } else {
            try begin(connection)
            try connection.execute("DROP TABLE IF EXISTS \(qualified(staging))")
            try connection.execute("DELETE FROM \(qualified("epf_progress")) WHERE staging = $1", [staging])
            // Never drop a column silently: columns of the current table missing from the new file stay (NULL).
            let fileNames = Set(schema.columns.map(\.name))
            let kept = try target.columns(connection, schema.name).filter { !fileNames.contains($0.name) }
            if !kept.isEmpty {
                state.outcome.warnings.append("columns no longer in the feed kept as NULL: "
                                              + kept.map(\.name).joined(separator: ", "))
            }
            try connection.execute(createTableSQL(staging, extraColumns: kept, withKey: false)
                                   + " WITH (autovacuum_enabled = false)")
        }
        state.rejects = try RejectsWriter(path: state.rejectsPath, columns: state.fileColumns,
                                          resumeAt: resumeRejectsBytes,
                                          resumedEntries: state.outcome.rejects + state.outcome.repaired)
        try startCopy(connection, into: qualified(staging))
    }

    private func prepareIncremental(_ connection: PostgresConnection) throws {
        try begin(connection)
        if try !target.tableExists(connection, schema.name) {
            state.outcome.warnings.append("incremental for a table that does not exist yet: created \(schema.name)")
            try connection.execute(createTableSQL(schema.name, extraColumns: [], withKey: true))
            try createSecondaryIndexes(connection, on: schema.name)
        } else {
            let columns = try target.columns(connection, schema.name)
            for column in columns { targetTypes[column.name] = column.type }
            let existing = Set(columns.map(\.name))
            for column in schema.columns where !existing.contains(column.name) {
                try connection.execute("ALTER TABLE \(qualified(schema.name)) ADD COLUMN \(quoted(column.name)) "
                                       + PostgresTarget.kind(column).sqlType)
                state.outcome.warnings.append("new column \(column.name) added to \(schema.name)")
            }
            if !keyIndexes.isEmpty {
                // ON CONFLICT needs a unique index on exactly the key columns.
                let hasUnique = try connection.scalar("""
                    SELECT 1 FROM pg_index i WHERE i.indrelid = to_regclass($1) AND i.indisunique
                    AND (SELECT array_agg(a.attname::text ORDER BY k.n)
                         FROM unnest(i.indkey) WITH ORDINALITY k(attnum, n)
                         JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum) = $2::text[]
                    """, [qualified(schema.name), "{" + schema.primaryKey.joined(separator: ",") + "}"]) != nil
                if !hasUnique {
                    try connection.execute("CREATE UNIQUE INDEX \(quoted(indexName("pk"))) ON "
                                           + "\(qualified(schema.name)) (\(keyList))")
                }
            }
        }
        state.rejects = try RejectsWriter(path: state.rejectsPath, columns: state.fileColumns, resumeAt: nil,
                                          resumedEntries: 0)
        // The rows travel with the file's types; the upsert casts where the table's columns differ.
        let definitions = loadedColumns.map { "\(quoted($0.name)) \(PostgresTarget.kind($0).sqlType)" }
        try connection.execute("CREATE TEMPORARY TABLE \(quoted(incoming)) (\(definitions.joined(separator: ", "))) "
                               + "ON COMMIT DROP")
        try startCopy(connection, into: quoted(incoming))
    }

    func createSecondaryIndexes(_ connection: PostgresConnection, on table: String) throws {
        for (number, columns) in KnownSchemas.indexes(for: schema).enumerated() {
            try connection.execute("CREATE INDEX \(quoted(indexName("i\(number)"))) ON \(qualified(table)) "
                                   + "(\(columns.map(quoted).joined(separator: ", ")))")
        }
    }

    // MARK: - Loading a part (the loop is `TableLoading.loadRecords`)

    /// Rows are appended to a buffer; only sending it costs, and this load times that itself.
    var insertTiming: InsertTiming { .byStore }
    var checkpointsPartEnds: Bool { true }

    func bindRow(_ record: EPFRecord) throws -> RejectReason? {
        writer.beginRow()
        guard let reason = try binder.bind(record, to: writing ? sink : nil) else { return nil }
        writer.discardRow()
        return reason
    }

    var exportDateColumn: Int? { binder.exportDateColumn }

    @inline(__always)
    func acceptRow(_ record: EPFRecord) {
        state.accept(record, binder: binder)
    }

    func writeRow() throws {
        guard writing, let connection else {
            writer.discardRow()
            return
        }
        if writer.pendingBytes >= writer.flushThreshold {
            let sendStarted = Monotonic.now()
            try writer.flush(to: connection)
            state.insertNanoseconds &+= Monotonic.now() &- sendStarted
        }
    }

    func checkpoint(part: Int, recordsDone: Int) throws {
        guard let connection else { return }
        try checkpoint(connection, part: part, recordsDone: recordsDone)
    }

    /// Ends the COPY, records how far the load got and commits both, then opens the next transaction and COPY.
    private func checkpoint(_ connection: PostgresConnection, part: Int, recordsDone: Int) throws {
        try endCopy(connection)
        let rejectsBytes = try state.rejects?.flush() ?? 0
        try connection.execute("""
            INSERT INTO \(qualified("epf_progress")) (staging, table_name, source, source_size, source_mtime, part,
                location, records_done, rows, rejects, duplicates, rejects_bytes, export_date, updated, repaired,
                left_out)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 0, $11, $12, $13, $14, $15)
            ON CONFLICT (staging) DO UPDATE SET table_name = excluded.table_name, source = excluded.source,
                source_size = excluded.source_size, source_mtime = excluded.source_mtime, part = excluded.part,
                location = excluded.location, records_done = excluded.records_done, rows = excluded.rows,
                rejects = excluded.rejects, rejects_bytes = excluded.rejects_bytes,
                export_date = excluded.export_date, updated = excluded.updated, repaired = excluded.repaired,
                left_out = excluded.left_out
            """, [staging, schema.name, state.source.path, String(state.source.size), String(state.source.mtime),
                  String(part), state.file.location, String(recordsDone), String(state.attempts),
                  String(state.outcome.rejects), String(rejectsBytes), state.outcome.exportDate.map(String.init),
                  StoreDatabase.now(), String(state.outcome.repaired), String(state.outcome.leftOut)])
        try commit(connection)
        try begin(connection)
        try startCopy(connection, into: qualified(staging))
    }
}
