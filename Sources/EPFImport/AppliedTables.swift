import EPFFormat

/// What a store's ledger writes for a table it applied: the primitives each store does in its own SQL, for
/// `ImportLedger.recordApplied`, the one policy both stores follow.
package protocol AppliedTableLedger {
    /// Inserts the ledger row (`epf_ledger`) of a table file's outcome.
    func insertEntry(_ outcome: TableOutcome, file: TableFile, source: SourceIdentity) throws
    /// Marks the applied incrementals of `table` superseded, and forgets their input files (`epf_sources`).
    func supersedeIncrementals(of table: String) throws
    /// The row count and date `epf_tables` holds for `table`, nil when it has no row.
    func summary(of table: String) throws -> (rows: Int64?, exportDate: Int64?)?
    /// The rows `table` holds (`count(*)`).
    func countRows(of table: String) throws -> Int64?
    /// Writes (inserts or replaces) `table`'s row of `epf_tables`.
    func writeSummary(table: String, rows: Int64, exportDate: Int64?, mode: String?, location: String) throws
}

extension AppliedTableLedger {
    /// Records an applied table inside the caller's transaction, and updates the table summary:
    /// - the ledger row, as applied;
    /// - a full replaces what the table's incrementals applied: they no longer count as applied, so that one
    ///   imported again (after a full taken back with --force) is applied again, not skipped as unchanged;
    /// - the row count: a full's rows; an incremental's, the previous count plus the rows it added (`count(*)` only
    ///   when there is no previous count);
    /// - the date: a full sets it (one applied with --force over newer data takes it back); an incremental moves it
    ///   forward only (one older than the newest applied changes no row dated later). A file without rows has no
    ///   export_date of its own: the day of its export's folder stands for it.
    /// Records, inside the caller's transaction, a chart table's older day loaded only to record its ranks
    /// (`RankRecording.recordsOnly`): a ledger row marked superseded, so later imports of the same file skip it
    /// (`ImportLedger.ranksRecorded`); the table and its summary keep their newer day.
    package func recordRanksOnly(_ outcome: TableOutcome, file: TableFile, source: SourceIdentity) throws {
        var recorded = outcome
        recorded.status = .superseded
        try insertEntry(recorded, file: file, source: source)
    }

    package func recordApplied(_ outcome: TableOutcome, file: TableFile, source: SourceIdentity) throws {
        var applied = outcome
        applied.status = .applied
        try insertEntry(applied, file: file, source: source)
        let full = outcome.mode == ExportMode.full.rawValue
        if full { try supersedeIncrementals(of: outcome.table) }
        var rows = Int64(outcome.rows)
        var exportDate = outcome.exportDate ?? file.feedDate.flatMap(ImportFailures.midnight)
        if !full {
            let current = try summary(of: outcome.table)
            if let previous = current?.rows {
                rows = previous + Int64(outcome.insertedRows)
            } else if let count = try countRows(of: outcome.table) {
                rows = count
            }
            if let date = current?.exportDate { exportDate = max(exportDate ?? date, date) }
        }
        try writeSummary(table: outcome.table, rows: rows, exportDate: exportDate, mode: outcome.mode,
                         location: outcome.location)
    }
}
