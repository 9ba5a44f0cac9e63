import EPFFormat
import EPFImport
import EPFPostgres
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

    static let planOnly = Flag("plan", "Only print what would be applied, in order (with --json: {\"root\", "
                                   + "\"steps\": [{\"mode\", \"date\", \"paths\"}]}).")

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
        if planOnly && settings.json {
            ReportJSON.write(ReportJSON.syncPlan(plan, root: root))
            return .ok
        }
        // With --json, stdout holds the report alone (one JSON document).
        if planOnly || !settings.quiet && !settings.json {
            say("full \(plan.fullDate): \(plan.fullPaths.joined(separator: ", "))")
            for incremental in plan.incrementals {
                say("incremental \(incremental.date): \(incremental.paths.joined(separator: ", "))")
            }
        }
        if planOnly { return .ok }
        InterruptNotice.install(command: name)
        return try ImportRunner.run(paths: plan.orderedPaths, settings: settings)
    }
}
