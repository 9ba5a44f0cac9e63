import EPFFormat
import EPFImport
import EPFSQLite
import Foundation

/// The import ledger: one row per table file applied or refused, plus one row per input file fully applied, so a
/// re-run knows what is already done.
final class Ledger: AppliedTableLedger {
    let connection: SQLiteConnection

    init(connection: SQLiteConnection) {
        self.connection = connection
    }

    /// True when this input file (same path, size and modification time) was applied completely before.
    ///
    /// A mirror that was moved keeps what it applied: the same file of the same export (`exportName`, from the
    /// `<feed>YYYYMMDD` component on) with the same size counts as applied wherever it now is.
    func sourceApplied(_ source: SourceIdentity) throws -> Bool {
        try connection.scalar("""
            SELECT 1 FROM epf_sources WHERE outcome = 'applied' AND size = ?2
            AND ((source = ?1 AND mtime = ?3) OR substr(source, -length(?4) - 1) = '/' || ?4) LIMIT 1
            """, [.text(source.path), .integer(source.size), .integer(source.mtime), .text(source.exportName)]) != nil
    }

    /// True when this table file of this input file was applied before (for finishing a partly applied archive).
    /// Like `sourceApplied`, the same table file of a moved mirror counts.
    func tableApplied(_ file: TableFile, source: SourceIdentity) throws -> Bool {
        try hasEntry(file, source: source, outcome: "outcome = 'applied'")
    }

    /// As `tableApplied`, for a chart table's older day loaded only for its ranks (a FULL marked superseded; the
    /// incrementals a full supersedes are marked so too, but are never FULL).
    func ranksRecorded(_ file: TableFile, source: SourceIdentity) throws -> Bool {
        try hasEntry(file, source: source, outcome: "outcome = 'superseded' AND mode = 'FULL'")
    }

    /// Whether the ledger has a row of this table file of this input file (or of a moved mirror's) matching
    /// `outcome`, an SQL condition.
    private func hasEntry(_ file: TableFile, source: SourceIdentity, outcome: String) throws -> Bool {
        let location = SourceIdentity.exportName(of: file.location) ?? file.location
        return try connection.scalar("""
            SELECT 1 FROM epf_ledger WHERE \(outcome) AND source_size = ?2
            AND ((source = ?1 AND source_mtime = ?3 AND location = ?4)
                 OR (substr(source, -length(?5) - 1) = '/' || ?5 AND substr(location, -length(?6) - 1) = '/' || ?6))
            LIMIT 1
            """, [.text(source.path), .integer(source.size), .integer(source.mtime), .text(file.location),
                  .text(source.exportName), .text(location)]) != nil
    }

    func setting(_ name: String) throws -> String? {
        if case .text(let value) = try connection.scalar("SELECT value FROM epf_settings WHERE name = ?1",
                                                         [.text(name)]) {
            return value
        }
        return nil
    }

    func setSetting(_ name: String, to value: String?) throws {
        let statement: SQLiteStatement
        if let value {
            statement = try connection.prepare("INSERT OR REPLACE INTO epf_settings (name, value, updated) "
                                               + "VALUES (?1, ?2, ?3)")
            try statement.bind([.text(name), .text(value), .text(StoreDatabase.now())])
        } else {
            statement = try connection.prepare("DELETE FROM epf_settings WHERE name = ?1")
            try statement.bind([.text(name)])
        }
        try statement.step()
    }

    func hasAppliedTables() throws -> Bool {
        try connection.scalar("SELECT 1 FROM epf_ledger WHERE outcome = 'applied' LIMIT 1") != nil
    }

    func appliedHistory(table: String) throws -> [AppliedExport] {
        try connection.query(ExportOrderRule.historySQL(ledger: "epf_ledger", parameter: "?1"), [.text(table)])
            .compactMap { row in
                guard row.count == 3 else { return nil }
                var feedDate: String?
                var exportDate: Int64?
                var mode: String?
                if case .text(let text) = row[0] { feedDate = text }
                if case .integer(let value) = row[1] { exportDate = value }
                if case .text(let text) = row[2] { mode = text }
                return ExportOrderRule.entry(feedDate: feedDate, exportDate: exportDate, mode: mode)
            }
    }

    /// Each table's last applied full (`MixedExports.lastFullsSQL`).
    func lastFulls() throws -> [MixedExports.TableFull] {
        func text(_ value: SQLValue) -> String? { if case .text(let text) = value { text } else { nil } }
        func integer(_ value: SQLValue) -> Int64? { if case .integer(let value) = value { value } else { nil } }
        return try connection.query(MixedExports.lastFullsSQL(ledger: "epf_ledger")).compactMap { row in
            guard row.count == 6, let table = text(row[0]), let source = text(row[1]) else { return nil }
            return MixedExports.TableFull(table: table, source: source, feed: text(row[2]), feedDate: text(row[3]),
                                          exportDate: integer(row[4]), order: integer(row[5]) ?? 0)
        }
    }

    /// Records a completely applied input file.
    func recordSource(_ source: SourceIdentity, feedDate: String?, md5: String?) throws {
        try connection.transaction {
            let statement = try connection.prepare("""
                INSERT OR REPLACE INTO epf_sources (source, size, mtime, md5, feed_date, finished, outcome)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'applied')
                """)
            try statement.bind([.text(source.path), .integer(source.size), .integer(source.mtime),
                                md5.map { .text($0) } ?? .null, feedDate.map { .text($0) } ?? .null,
                                .text(StoreDatabase.now())])
            try statement.step()
        }
    }

    func insertEntry(_ outcome: TableOutcome, file: TableFile, source: SourceIdentity) throws {
        let statement = try connection.prepare("""
            INSERT INTO epf_ledger (source, source_size, source_mtime, location, feed, feed_date, table_name, part,
                export_date, mode, md5, rows, rejects, duplicates, bytes, started, finished, outcome, message, repaired)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)
            """)
        let started = Date(timeIntervalSinceNow: -outcome.seconds)
        let formatter = ISO8601DateFormatter()
        try statement.bind([
            .text(source.path), .integer(source.size), .integer(source.mtime), .text(file.location),
            file.feed.map { .text($0) } ?? .null, file.feedDate.map { .text($0) } ?? .null, .text(outcome.table),
            file.part.map { .integer(Int64($0)) } ?? .null, outcome.exportDate.map { .integer($0) } ?? .null,
            outcome.mode.map { .text($0) } ?? .null, file.verifiedMD5.map { .text($0) } ?? .null,
            .integer(Int64(outcome.rows)), .integer(Int64(outcome.rejects)), .integer(Int64(outcome.duplicates)),
            .integer(outcome.bytes), .text(formatter.string(from: started)), .text(StoreDatabase.now()),
            .text(outcome.status == .failed ? "failed" : outcome.status == .superseded ? "superseded" : "applied"),
            (outcome.message ?? (outcome.warnings.isEmpty ? nil : outcome.warnings.joined(separator: "; ")))
                .map { .text($0) } ?? .null,
            .integer(Int64(outcome.repaired)),
        ])
        try statement.step()
    }

    func supersedeIncrementals(of table: String) throws {
        let supersede = try connection.prepare(Ledger.supersedeRowsSQL)
        try supersede.bind([.text(table)])
        try supersede.step()
        try connection.execute(Ledger.supersedeSQL)
    }

    func summary(of table: String) throws -> (rows: Int64?, exportDate: Int64?)? {
        guard let row = try connection.query("SELECT rows, export_date FROM epf_tables WHERE table_name = ?1",
                                             [.text(table)]).first, row.count == 2 else { return nil }
        func integer(_ value: SQLValue) -> Int64? {
            if case .integer(let number) = value { return number }
            return nil
        }
        return (integer(row[0]), integer(row[1]))
    }

    func countRows(of table: String) throws -> Int64? {
        if case .integer(let value) = try connection.scalar("SELECT count(*) FROM \(SQLiteConnection.quote(table))") {
            return value
        }
        return nil
    }

    func writeSummary(table: String, rows: Int64, exportDate: Int64?, mode: String?, location: String) throws {
        let statement = try connection.prepare("""
            INSERT OR REPLACE INTO epf_tables (table_name, rows, export_date, mode, location, updated)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6)
            """)
        try statement.bind([.text(table), .integer(rows), exportDate.map { .integer($0) } ?? .null,
                            mode.map { .text($0) } ?? .null, .text(location), .text(StoreDatabase.now())])
        try statement.step()
    }

    /// Records a refused table in its own transaction (best effort: the ledger must not hide the real error).
    func record(_ outcome: TableOutcome, file: TableFile, source: SourceIdentity) {
        try? connection.transaction {
            try insertEntry(outcome, file: file, source: source)
        }
    }

    /// Forgets the whole input files whose incrementals a full superseded (`supersedeRowsSQL` marks them first).
    static let supersedeSQL = """
        DELETE FROM epf_sources WHERE source IN (SELECT source FROM epf_ledger WHERE outcome = 'superseded')
        """

    /// Marks the applied incrementals of table ?1 superseded, then forgets their input files.
    static let supersedeRowsSQL = """
        UPDATE epf_ledger SET outcome = 'superseded'
        WHERE table_name = ?1 AND outcome = 'applied' AND mode = 'INCREMENTAL'
        """
}

extension Ledger: ImportLedger {}
