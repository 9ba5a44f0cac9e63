import EPFFormat

/// How far a database's ledger already holds one step of a `SyncPlan`, so `epf sync --plan` shows what a sync
/// would apply, not the whole mirror.
package struct SyncStepProgress: Sendable, Equatable {
    /// Where a step stands: every input file applied, some, or none.
    package enum State: String, Sendable {
        case applied
        case partial
        case pending
    }

    /// The step's input files (reading units, named by their first file), in the order sync reads them.
    package var files: [String]
    /// The files the ledger does not show applied completely: what sync reads again.
    package var pending: [String]

    package var state: State {
        if pending.isEmpty { return .applied }
        return pending.count == files.count ? .pending : .partial
    }
}

extension SyncPlan {
    /// One step: the full first, then each incremental, oldest first.
    package struct Step: Sendable {
        package var mode: ExportMode
        package var date: String
        package var paths: [String]
    }

    /// The steps in the order sync applies them.
    package var steps: [Step] {
        [Step(mode: .full, date: fullDate, paths: fullPaths)]
            + incrementals.map { Step(mode: .incremental, date: $0.date, paths: $0.paths) }
    }

    /// For each step, the input files the ledger shows applied completely (as `ImportPass` skips them) and the
    /// rest; with no ledger (no database yet) or with `force`, every file is pending. A path that holds no table
    /// file counts as one pending file: the import says why.
    package func progress(ledger: (any ImportLedger)?, force: Bool,
                          options: ReadOptions = ReadOptions()) throws -> [SyncStepProgress] {
        try steps.map { step in
            var files: [String] = []
            var pending: [String] = []
            for path in step.paths {
                guard let units = try? FeedInput.units(at: path, options: options) else {
                    files.append(path)
                    pending.append(path)
                    continue
                }
                for unit in units {
                    guard let first = unit.first else { continue }
                    files.append(first)
                    let applied = try !force && (ledger?.sourceApplied(SourceIdentity(paths: unit)) ?? false)
                    if !applied { pending.append(first) }
                }
            }
            return SyncStepProgress(files: files, pending: pending)
        }
    }
}
