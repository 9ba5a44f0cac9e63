import EPFFormat
import Foundation

/// How far a database's ledger already holds one step of a `SyncPlan`, so `epf sync --plan` shows what a sync
/// would do, not the whole mirror.
package struct SyncStepProgress: Sendable, Equatable {
    /// What sync does with one input file (reading unit).
    package enum Disposition: Sendable, Equatable {
        /// The ledger shows it applied: skipped.
        case applied
        /// Its table holds newer data (`ExportOrderRule`'s superseded): read, and skipped.
        case superseded
        /// Sync applies it (or tries to, and says why not).
        case pending
    }

    /// Where a step stands: nothing left to do (`applied`; `superseded` when some of it is older than what the
    /// database holds), some of it left (`partial`), or all of it (`pending`).
    package enum State: String, Sendable {
        case applied
        case superseded
        case partial
        case pending
    }

    /// The step's input files (reading units, named by their first file), in the order sync reads them, each with
    /// what sync does with it.
    package var files: [(path: String, disposition: Disposition)]

    /// The files sync applies.
    package var pending: [String] { files.filter { $0.disposition == .pending }.map(\.path) }

    package var state: State {
        let left = pending.count
        if left == 0 { return files.contains { $0.disposition == .superseded } ? .superseded : .applied }
        return left == files.count ? .pending : .partial
    }

    package static func == (left: SyncStepProgress, right: SyncStepProgress) -> Bool {
        left.files.map(\.path) == right.files.map(\.path)
            && left.files.map(\.disposition) == right.files.map(\.disposition)
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

    /// For each step, what sync does with each input file, from the ledger as `ImportPass` decides: an input the
    /// ledger shows applied completely is skipped; one whose table (named by the file, as Apple names them) the
    /// ledger shows applied from the same export, or holding newer data (`ExportOrderRule`), is read and skipped
    /// (the ledger records an input whole only when its import had no failure, so an import stopped midway, or
    /// an incremental a newer full superseded, is not recorded whole); anything else is pending. With no ledger
    /// (no database yet) or with `force`, every file is pending. A path that holds no table file counts as one
    /// pending file: the import says why.
    package func progress(ledger: (any ImportLedger)?, force: Bool,
                          options: ReadOptions = ReadOptions()) throws -> [SyncStepProgress] {
        try steps.map { step in
            var files: [(path: String, disposition: SyncStepProgress.Disposition)] = []
            for path in step.paths {
                guard let units = try? FeedInput.units(at: path, options: options) else {
                    files.append((path, .pending))
                    continue
                }
                for unit in units {
                    guard let first = unit.first else { continue }
                    guard !force, let ledger else {
                        files.append((first, .pending))
                        continue
                    }
                    files.append((first, try Self.disposition(of: unit, ledger: ledger)))
                }
            }
            return SyncStepProgress(files: files)
        }
    }

    /// What sync does with one reading unit, given the ledger.
    static func disposition(of unit: [String], ledger: any ImportLedger) throws -> SyncStepProgress.Disposition {
        if try ledger.sourceApplied(SourceIdentity(paths: unit)) { return .applied }
        guard let first = unit.first else { return .pending }
        let table = FeedInput.tableName(fromFileName: (first as NSString).lastPathComponent).table
        guard EPFCatalogue.table(named: table) != nil, let day = FeedInput.feedAndDate(in: first)?.date,
              let mode = ImportOrder.exportMode(of: first) else { return .pending }
        let history = try ledger.appliedHistory(table: table)
        if history.contains(AppliedExport(day: day, full: mode == .full)) { return .applied }
        if case .superseded = ExportOrderRule.decide(table: table, mode: mode, day: day, history: history,
                                                     force: false) {
            return .superseded
        }
        return .pending
    }
}
