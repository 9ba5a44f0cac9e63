import EPFFormat

/// The ledger of a store: what an import asks before applying and records after. `Ledger` keeps it in SQLite,
/// `PostgresLedger` in the PostgreSQL schema.
package protocol ImportLedger: AnyObject {
    /// True when this input file (same path, size and modification time) was applied completely before.
    func sourceApplied(_ source: SourceIdentity) throws -> Bool
    /// True when this table file of this input file was applied before.
    func tableApplied(_ file: TableFile, source: SourceIdentity) throws -> Bool
    /// True when this table file of this input file, an older day of a chart table, was loaded before only to
    /// record its ranks (`RankRecording.recordsOnly`; its ledger row: a FULL `superseded`).
    func ranksRecorded(_ file: TableFile, source: SourceIdentity) throws -> Bool
    /// Records a completely applied input file.
    func recordSource(_ source: SourceIdentity, feedDate: String?, md5: String?) throws
    /// Records a refused table (best effort).
    func record(_ outcome: TableOutcome, file: TableFile, source: SourceIdentity)
    /// The value of an `epf_settings` row, nil when there is none.
    func setting(_ name: String) throws -> String?
    /// Sets (or, with nil, removes) an `epf_settings` row.
    func setSetting(_ name: String, to value: String?) throws
    /// True when the ledger shows any table applied.
    func hasAppliedTables() throws -> Bool
    /// The exports applied to a table since its last full (all of them when it has none), oldest first
    /// (`ExportOrderRule.historySQL`).
    func appliedHistory(table: String) throws -> [AppliedExport]
}

extension ImportLedger {
    /// The storefronts and languages an import keeps (`RowSelection.settle`): what `request` asks, else what the
    /// database keeps; a new selection is recorded before any table is loaded. Throws `ImportError.badOption` for
    /// a request the database's tables contradict (unless `force`).
    func settleSelection(_ request: RowSelection.Request, force: Bool, record: Bool = true) throws
        -> RowSelection {
        let stored = try storedSelection()
        let settled = try RowSelection.settle(request, stored: stored, databaseHasTables: try hasAppliedTables(),
                                              force: force)
        guard record else { return settled }
        if settled.storefronts != stored.storefronts {
            try setSetting(RowSelection.storefrontsSetting, to: settled.storedStorefronts)
        }
        if settled.languages != stored.languages {
            try setSetting(RowSelection.languagesSetting, to: settled.storedLanguages)
        }
        return settled
    }

    /// The selection the database keeps.
    package func storedSelection() throws -> RowSelection {
        RowSelection(storedStorefronts: try setting(RowSelection.storefrontsSetting),
                     storedLanguages: try setting(RowSelection.languagesSetting))
    }
}

extension ImportOptions {
    /// Sets `rows`, the selection this import applies, and `recordsPriceHistory` and `recordsRankHistory` through
    /// the store's ledger (`settleSelection`, `settleHistory`). A dry run records nothing: it settles the selection
    /// against what `readOnly`, the ledger of the database it would import into, keeps (so it leaves out what the
    /// import would and is refused as the import would be), or without one from the requests alone.
    package mutating func settleRows<Ledger: ImportLedger, ReadOnly: ImportLedger>(ledger: Ledger?,
                                                                                  readOnly: ReadOnly? = nil) throws {
        if let ledger {
            rows = try ledger.settleSelection(selectionRequest, force: force)
            let history = try ledger.settleHistory(historyRequest)
            (recordsPriceHistory, recordsRankHistory) = (history.prices, history.ranks)
        } else if let readOnly {
            rows = try readOnly.settleSelection(selectionRequest, force: force, record: false)
            let history = try historyRequest ?? HistoryRequest(setting: readOnly.setting(PriceRecording.setting))
            (recordsPriceHistory, recordsRankHistory) = (history.prices, history.ranks)
        } else {
            recordsPriceHistory = historyRequest?.prices ?? false
            recordsRankHistory = historyRequest?.ranks ?? false
            rows = try RowSelection.settle(selectionRequest, stored: RowSelection(), databaseHasTables: false,
                                           force: true)
        }
    }
}
