import EPFFormat
import EPFImport
import EPFPostgres
import EPFStore
import Foundation

/// The import ledger in the PostgreSQL schema: the same tables and rows as `Ledger` keeps in SQLite.
final class PostgresLedger: ImportLedger, AppliedTableLedger {
    let connection: PostgresConnection
    let target: PostgresTarget

    init(connection: PostgresConnection, target: PostgresTarget) {
        self.connection = connection
        self.target = target
    }

    private func table(_ name: String) -> String { target.qualified(name) }

    /// As `Ledger.sourceApplied`: a moved mirror keeps what it applied.
    func sourceApplied(_ source: SourceIdentity) throws -> Bool {
        try connection.scalar("""
            SELECT 1 FROM \(table("epf_sources")) WHERE outcome = 'applied' AND size = $2
            AND ((source = $1 AND mtime = $3) OR right(source, length($4) + 1) = '/' || $4) LIMIT 1
            """, [source.path, String(source.size), String(source.mtime), source.exportName]) != nil
    }

    func tableApplied(_ file: TableFile, source: SourceIdentity) throws -> Bool {
        try hasEntry(file, source: source, outcome: "outcome = 'applied'")
    }

    /// As `Ledger.ranksRecorded`.
    func ranksRecorded(_ file: TableFile, source: SourceIdentity) throws -> Bool {
        try hasEntry(file, source: source, outcome: "outcome = 'superseded' AND mode = 'FULL'")
    }

    /// As `Ledger.hasEntry`.
    private func hasEntry(_ file: TableFile, source: SourceIdentity, outcome: String) throws -> Bool {
        let location = SourceIdentity.exportName(of: file.location) ?? file.location
        return try connection.scalar("""
            SELECT 1 FROM \(table("epf_ledger")) WHERE \(outcome) AND source_size = $2
            AND ((source = $1 AND source_mtime = $3 AND location = $4)
                 OR (right(source, length($5) + 1) = '/' || $5 AND right(location, length($6) + 1) = '/' || $6))
            LIMIT 1
            """, [source.path, String(source.size), String(source.mtime), file.location, source.exportName,
                  location]) != nil
    }

    func setting(_ name: String) throws -> String? {
        try connection.scalar("SELECT value FROM \(table("epf_settings")) WHERE name = $1", [name])
    }

    func setSetting(_ name: String, to value: String?) throws {
        if let value {
            try connection.execute("""
                INSERT INTO \(table("epf_settings")) (name, value, updated) VALUES ($1, $2, $3)
                ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated = excluded.updated
                """, [name, value, StoreDatabase.now()])
        } else {
            try connection.execute("DELETE FROM \(table("epf_settings")) WHERE name = $1", [name])
        }
    }

    func hasAppliedTables() throws -> Bool {
        try connection.scalar("SELECT 1 FROM \(table("epf_ledger")) WHERE outcome = 'applied' LIMIT 1") != nil
    }

    func appliedHistory(table name: String) throws -> [AppliedExport] {
        try connection.query(ExportOrderRule.historySQL(ledger: table("epf_ledger"), parameter: "$1"), [name])
            .compactMap { row in
                guard row.count == 3 else { return nil }
                return ExportOrderRule.entry(feedDate: row[0], exportDate: row[1].flatMap { Int64($0) }, mode: row[2])
            }
    }

    /// Each table's last applied full (`MixedExports.lastFullsSQL`).
    func lastFulls() throws -> [MixedExports.TableFull] {
        try connection.query(MixedExports.lastFullsSQL(ledger: table("epf_ledger"))).compactMap { row in
            guard row.count == 6, let table = row[0], let source = row[1] else { return nil }
            return MixedExports.TableFull(table: table, source: source, feed: row[2], feedDate: row[3],
                                          exportDate: row[4].flatMap { Int64($0) },
                                          order: row[5].flatMap { Int64($0) } ?? 0)
        }
    }

    func recordSource(_ source: SourceIdentity, feedDate: String?, md5: String?) throws {
        try connection.execute("""
            INSERT INTO \(table("epf_sources")) (source, size, mtime, md5, feed_date, finished, outcome)
            VALUES ($1, $2, $3, $4, $5, $6, 'applied')
            ON CONFLICT (source) DO UPDATE SET size = excluded.size, mtime = excluded.mtime, md5 = excluded.md5,
                feed_date = excluded.feed_date, finished = excluded.finished, outcome = excluded.outcome
            """, [source.path, String(source.size), String(source.mtime), md5, feedDate, StoreDatabase.now()])
    }

    func insertEntry(_ outcome: TableOutcome, file: TableFile, source: SourceIdentity) throws {
        let started = Date(timeIntervalSinceNow: -outcome.seconds)
        let message = outcome.message ?? (outcome.warnings.isEmpty ? nil : outcome.warnings.joined(separator: "; "))
        try connection.execute("""
            INSERT INTO \(table("epf_ledger")) (source, source_size, source_mtime, location, feed, feed_date,
                table_name, part, export_date, mode, md5, rows, rejects, duplicates, bytes, started, finished,
                outcome, message, repaired)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)
            """, [
                source.path, String(source.size), String(source.mtime), file.location, file.feed, file.feedDate,
                outcome.table, file.part.map(String.init), outcome.exportDate.map(String.init), outcome.mode,
                file.verifiedMD5, String(outcome.rows), String(outcome.rejects), String(outcome.duplicates),
                String(outcome.bytes), ISO8601DateFormatter().string(from: started), StoreDatabase.now(),
                outcome.status == .failed ? "failed" : outcome.status == .superseded ? "superseded" : "applied",
                message, String(outcome.repaired),
            ])
    }

    func supersedeIncrementals(of name: String) throws {
        try connection.execute("""
            UPDATE \(table("epf_ledger")) SET outcome = 'superseded'
            WHERE table_name = $1 AND outcome = 'applied' AND mode = 'INCREMENTAL'
            """, [name])
        try connection.execute("""
            DELETE FROM \(table("epf_sources")) WHERE source IN
                (SELECT source FROM \(table("epf_ledger")) WHERE outcome = 'superseded')
            """)
    }

    func summary(of name: String) throws -> (rows: Int64?, exportDate: Int64?)? {
        guard let row = try connection.query("SELECT rows, export_date FROM \(table("epf_tables")) "
                                             + "WHERE table_name = $1", [name]).first, row.count == 2 else {
            return nil
        }
        return (row[0].flatMap { Int64($0) }, row[1].flatMap { Int64($0) })
    }

    func countRows(of name: String) throws -> Int64? {
        try connection.scalar("SELECT count(*) FROM \(table(name))").flatMap { Int64($0) }
    }

    func writeSummary(table name: String, rows: Int64, exportDate: Int64?, mode: String?, location: String) throws {
        try connection.execute("""
            INSERT INTO \(table("epf_tables")) (table_name, rows, export_date, mode, location, updated)
            VALUES ($1, $2, $3, $4, $5, $6)
            ON CONFLICT (table_name) DO UPDATE SET rows = excluded.rows, export_date = excluded.export_date,
                mode = excluded.mode, location = excluded.location, updated = excluded.updated
            """, [name, String(rows), exportDate.map(String.init), mode, location, StoreDatabase.now()])
    }

    /// Records a refused table in its own transaction (best effort: the ledger must not hide the real error).
    func record(_ outcome: TableOutcome, file: TableFile, source: SourceIdentity) {
        try? insertEntry(outcome, file: file, source: source)
    }
}
