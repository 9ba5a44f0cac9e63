import EPFFormat
import EPFImport
import EPFPostgres
import EPFStore
import Foundation

extension PostgresTableLoad: TableLoading {
    /// Verifies and makes the table visible (or keeps the old data). Returns the final outcome.
    func finish(ledger: PostgresLedger?) -> TableOutcome {
        finishLoad(ledger: ledger)
    }

    var canPublish: Bool { !state.options.dryRun && connection != nil }

    func publish(ledger: PostgresLedger?) throws {
        guard let connection else { return }
        switch mode {
        case .full: try finishFull(connection, ledger: ledger)
        case .incremental: try finishIncremental(connection, ledger: ledger)
        }
    }

    /// Builds the key and indexes, then renames the staging table into place, in one transaction. Duplicate keys:
    /// the later row wins (the staging table is append-only with autovacuum off, so `ctid` order is load order).
    private func finishFull(_ connection: PostgresConnection, ledger: PostgresLedger?) throws {
        let indexesClock = PhaseClock()
        if copying { try endCopy(connection) }
        try prices?.willPublish(connection)
        if inTransaction { try commit(connection) }
        try begin(connection)
        let table = qualified(staging)
        if !keyIndexes.isEmpty {
            let addKey = "ALTER TABLE \(table) ADD CONSTRAINT \(quoted(indexName("pk"))) PRIMARY KEY (\(keyList))"
            do {
                try connection.execute(addKey)
            } catch let error as PostgresError where error.isUniqueViolation {
                try connection.execute("ROLLBACK")
                try connection.execute("BEGIN")
                let deleted = try connection.scalar("""
                    WITH d AS (DELETE FROM \(table) WHERE ctid IN (SELECT ctid FROM (SELECT ctid, row_number() OVER
                        (PARTITION BY \(keyList) ORDER BY ctid DESC) AS n FROM \(table)) AS ranked WHERE n > 1)
                        RETURNING 1)
                    SELECT count(*) FROM d
                    """)
                state.outcome.duplicates = deleted.flatMap { Int($0) } ?? 0
                try connection.execute(addKey)
            }
        }
        state.outcome.rows = state.attempts - state.outcome.duplicates
        try createSecondaryIndexes(connection, on: staging)
        try connection.execute("ANALYZE \(table)")
        state.stop(indexesClock, .indexes)
        let commitClock = PhaseClock()
        defer { state.stop(commitClock, .committing) }
        if state.recordsOnly {
            // An older day of a chart table: its ranks are recorded, its rows dropped; the table keeps its day.
            try ranks?.publish(connection, exportDate: state.outcome.exportDate)
            try connection.execute("DROP TABLE \(table)")
            try connection.execute("DELETE FROM \(qualified("epf_progress")) WHERE staging = $1", [staging])
            try ledger?.recordRanksOnly(state.outcome, file: state.file, source: state.source)
            try commit(connection)
            return
        }
        // The swap, in the same transaction: readers see the old table until the commit, then the new one.
        let retired = "epf_retired_\(schema.name)"
        try connection.execute("DROP TABLE IF EXISTS \(qualified(retired))")
        if let prices {
            let historyClock = PhaseClock()
            try prices.publish(connection, exportDate: state.outcome.exportDate)
            state.stop(historyClock, .priceHistory)
        }
        if let ranks {
            let historyClock = PhaseClock()
            try ranks.publish(connection, exportDate: state.outcome.exportDate)
            state.stop(historyClock, .rankHistory)
        }
        if try target.tableExists(connection, schema.name) {
            try connection.execute("ALTER TABLE \(qualified(schema.name)) RENAME TO \(quoted(retired))")
        }
        try connection.execute("ALTER TABLE \(table) RENAME TO \(quoted(schema.name))")
        try connection.execute("ALTER TABLE \(qualified(schema.name)) RESET (autovacuum_enabled)")
        try connection.execute("DELETE FROM \(qualified("epf_progress")) WHERE staging = $1", [staging])
        try ledger?.recordApplied(state.outcome, file: state.file, source: state.source)
        try commit(connection)
        try connection.execute("DROP TABLE IF EXISTS \(qualified(retired))")
    }

    /// Upserts the COPied rows with one statement: per key the file's row with the newest export_date (the later
    /// of equals) replaces the table's row unless the table's is newer.
    private func finishIncremental(_ connection: PostgresConnection, ledger: PostgresLedger?) throws {
        let commitClock = PhaseClock()
        defer { state.stop(commitClock, .committing) }
        if copying { try endCopy(connection) }
        let columns = columnList
        let values = loadedColumns.map(castExpression).joined(separator: ", ")
        let source = quoted(incoming)
        var sql: String
        if keyIndexes.isEmpty {
            sql = "WITH r AS (INSERT INTO \(qualified(schema.name)) (\(columns)) SELECT \(values) FROM \(source) "
                + "RETURNING 1) SELECT count(*) FROM r"
        } else {
            // Of a key's rows in the file, the one SQLite's row-by-row upsert would leave: the newest dated row,
            // the later on a tie. A row without a date never replaces a dated one, so it comes last (PostgreSQL's
            // DESC would put NULLs first, letting an undated row win over a dated one).
            let newest = binder.exportDateColumn != nil ? "export_date DESC NULLS LAST, " : ""
            let keys = Set(schema.primaryKey)
            let updates = loadedColumns.filter { !keys.contains($0.name) }
                .map { "\(quoted($0.name)) = excluded.\(quoted($0.name))" }
            sql = "WITH r AS (INSERT INTO \(qualified(schema.name)) AS t (\(columns)) "
                + "SELECT DISTINCT ON (\(keyList)) \(values) FROM \(source) ORDER BY \(keyList), \(newest)ctid DESC "
                + "ON CONFLICT (\(keyList)) "
            if updates.isEmpty {
                sql += "DO NOTHING"
            } else {
                sql += "DO UPDATE SET \(updates.joined(separator: ", "))"
                if binder.exportDateColumn != nil {
                    sql += " WHERE excluded.export_date >= t.export_date OR t.export_date IS NULL"
                }
            }
            sql += " RETURNING (xmax = 0) AS inserted) SELECT count(*) FILTER (WHERE inserted) FROM r"
        }
        if let prices {
            let historyClock = PhaseClock()
            try prices.willPublish(connection)
            state.stop(historyClock, .priceHistory)
        }
        state.outcome.insertedRows = try connection.scalar(sql).flatMap { Int($0) } ?? 0
        if let prices {
            let recordClock = PhaseClock()
            try prices.publish(connection, exportDate: state.outcome.exportDate)
            state.stop(recordClock, .priceHistory)
        }
        state.outcome.rows = state.attempts
        try ledger?.recordApplied(state.outcome, file: state.file, source: state.source)
        try commit(connection)
    }

    /// A column of the incoming rows as the table's type: the same, or cast (0/1 integers and booleans both
    /// ways, anything to text, text to the table's type, which fails the table when a value does not convert).
    private func castExpression(_ column: ColumnSpec) -> String {
        let name = quoted(column.name)
        let fileType = PostgresTarget.kind(column).sqlType
        guard let tableType = targetTypes[column.name], tableType != fileType else { return name }
        switch (fileType, tableType) {
        case ("boolean", "bigint"), ("boolean", "integer"): return "\(name)::integer::\(tableType)"
        case ("bigint", "boolean"): return "(\(name) <> 0)"
        case ("timestamptz", "text"):
            return "to_char(\(name) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
        default: return "\(name)::text::\(tableType)"
        }
    }

    /// Rolls back and, for a full load, drops the staging table: the previous data stays untouched. A dropped
    /// connection leaves the committed checkpoints for the next run only when this cannot reach the server.
    func abort() {
        state.rejects?.discardIfEmpty()
        guard let connection, !state.options.dryRun else { return }
        prices?.abort(connection)
        if copying {
            try? connection.endCopy(failure: "epf: load aborted")
            copying = false
        }
        if inTransaction {
            try? connection.execute("ROLLBACK")
            inTransaction = false
        }
        if mode == .full {
            try? connection.execute("DROP TABLE IF EXISTS \(qualified(staging))")
            try? connection.execute("DELETE FROM \(qualified("epf_progress")) WHERE staging = $1", [staging])
        }
    }
}
