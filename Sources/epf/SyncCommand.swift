import EPFFormat
import EPFImport
import EPFPostgres
import EPFPostgresStore
import EPFQuery
import EPFStore
import Foundation
import JSONText

/// `epf sync`: applies what is missing from a local mirror of Apple's EPF tree.
enum SyncCommand: Command {
    static let name = "sync"
    static let summary = "Apply the newest full export and its incrementals from a mirror (for cron)"
    static let help = """
    USAGE: epf sync ROOT [--db FILE] [options]

    ROOT is a local mirror of Apple's EPF tree: dated full exports (YYYYMMDD/ directories holding
    itunesYYYYMMDD.tbz and the other feeds, or itunesYYYYMMDD entries directly in ROOT) with incremental/YYYYMMDD/
    below. sync finds the newest full export and the incrementals after it, skips what the ledger shows applied,
    applies the rest in order, and prints what it did. Safe to run every hour.

    OPTIONS:
    \(optionsHelp(declaredOptions))

    EXAMPLES:
      epf sync feeds --db epf.sqlite
      epf sync feeds --plan
      epf sync feeds --quiet --metrics-file epf-sync.prom
    """

    static let planOnly = Flag("plan", "Only print the steps sync takes, in order, each marked when the database "
                                   + "already holds it (with --json: {\"root\", \"steps\": [{\"mode\", \"date\", "
                                   + "\"paths\", \"status\", \"pending\"}]}).")

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let metricsFile = try arguments.read(JobMetrics.fileOption)
        return try JobRecorder.record(.sync, to: metricsFile) { recorder in
            var settings = try ImportRunner.settings(&arguments)
            recorder.database = settings.database
            recorder.schema = settings.schema
            settings.observeReport = { recorder.add($0) }
            return try run(&arguments, settings: settings)
        }
    }

    private static func run(_ arguments: inout Arguments, settings: ImportRunner.Settings) throws -> ExitCode {
        let planOnly = arguments.read(Self.planOnly)
        let positionals = try arguments.finish()
        guard positionals.count == 1, let root = positionals.first else { throw UsageError("give exactly one ROOT") }
        let plan: SyncPlan
        do {
            plan = try SyncPlan.read(root: root)
        } catch let error as ImportError {
            // A mirror without a full export, or unreadable, is missing input either way.
            throw CommandFailure(.noInput, error.description)
        }
        // What the database already holds: --plan leaves it out of what it says sync would apply.
        let progress = planOnly ? try planProgress(plan, settings: settings)
            : (try? planProgress(plan, settings: settings)) ?? []
        if planOnly && settings.json {
            ReportJSON.write(ReportJSON.syncPlan(plan, progress: progress, root: root))
            return .ok
        }
        // With --json, stdout holds the report alone (one JSON document).
        if planOnly || !settings.quiet && !settings.json {
            for (index, step) in plan.steps.enumerated() {
                let line = "\(step.mode == .full ? "full" : "incremental") \(step.date): "
                    + step.paths.joined(separator: ", ")
                say(line + (index < progress.count ? progressNote(progress[index]) : ""))
            }
            if planOnly, !progress.isEmpty, progress.allSatisfy({ $0.pending.isEmpty }) {
                say("nothing to apply: the database holds every step (--force applies them again)")
            }
        }
        if planOnly { return .ok }
        InterruptNotice.install(command: name)
        return try ImportRunner.run(paths: plan.orderedPaths, settings: settings)
    }

    /// Where each step stands in the database's ledger (nothing applied when there is no database yet).
    private static func planProgress(_ plan: SyncPlan, settings: ImportRunner.Settings) throws -> [SyncStepProgress] {
        let ledger: (any ImportLedger)?
        if PostgresURL.isPostgres(settings.database) {
            let target = try PostgresCLI.target(url: settings.database, schema: settings.schema)
            do {
                ledger = try PostgresImporter(target: target, options: settings.options).existingLedger()
            } catch let error as PostgresError {
                throw CommandFailure(.unavailable, "\(error)")
            }
        } else {
            // A database this user cannot read is answered as every command answers it (`forUnexplained`).
            ledger = try Importer(databasePath: settings.database, options: settings.options).existingLedger()
        }
        return try plan.progress(ledger: ledger, force: settings.options.force,
                                 options: settings.options.readOptions)
    }

    /// " (already applied)", " (superseded: ...)" or " (2 of 5 files already applied or superseded)" after a
    /// step's line; nothing for a step sync applies whole.
    private static func progressNote(_ progress: SyncStepProgress) -> String {
        switch progress.state {
        case .applied: return " (already applied)"
        case .superseded: return " (superseded: the database holds newer data of its tables)"
        case .pending: return ""
        case .partial:
            let done = progress.files.count - progress.pending.count
            return " (\(done) of \(progress.files.count) files already applied or superseded)"
        }
    }
}
