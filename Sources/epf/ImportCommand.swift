import EPFFormat
import EPFImport
import EPFPostgres
import EPFQuery
import EPFStore
import Foundation
import JSONText

/// `epf import`: applies feed files to the database.
enum ImportCommand: Command {
    static let name = "import"
    static let summary = "Load EPF files (full or incremental) into the database, verified and atomic"
    static let help = """
    USAGE: epf import PATH... [--db FILE] [options]

    Applies each PATH (a table file, .gz, .tbz archive, or a v3/v4/v5 feed directory) in export-date order, full
    exports before incrementals. A FULL table is built aside and swapped in atomically; an INCREMENTAL upserts by
    primary key and never replaces a row with an older export_date. A table whose row count differs from
    #recordsWritten, whose file is truncated or whose .md5 does not match is not applied: the old data stays.
    Bad rows go to <db>.rejects/. A killed import resumes from its last checkpoint when run again; re-running a
    finished import is a no-op.

    OPTIONS:
    \(optionsHelp(declaredOptions))

    EXIT STATUS:
      0 all applied; 65 some tables not applied (the rest were); 66 missing input; 64 usage; 73 not enough space
      (refused before writing, or stopped at the first write that found no room: the table being written keeps
      its previous data; run again once there is space); 75 another import is running on the database.

    EXAMPLES:
      epf import feeds/itunes20260105 feeds/pricing20260105 --db epf.sqlite
      epf import feeds/v5/itunes20260105/application.tbz --only '^application'
      epf import feeds/incremental/20260106/itunes20260106 --json
      epf import feeds/incremental/20260106/pricing20260106 --dry-run
    """

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let settings = try ImportRunner.settings(&arguments)
        let paths = try arguments.finish()
        guard !paths.isEmpty else { throw UsageError("give at least one PATH to import") }
        InterruptNotice.install(command: name)
        return try ImportRunner.run(paths: try expandingMirrors(paths, quiet: settings.quiet || settings.json),
                                    settings: settings)
    }

    /// A mirror of Apple's tree given as a path (`SyncPlan.isMirror`) stands for what `epf sync` applies from
    /// it: its newest full export and the incrementals after it, said in a note on stderr. Any other path stays.
    static func expandingMirrors(_ paths: [String], quiet: Bool) throws -> [String] {
        try paths.flatMap { path -> [String] in
            guard SyncPlan.isMirror(path) else { return [path] }
            let plan = try SyncPlan.read(root: path)
            if !quiet {
                printError("note: \(path) is a mirror: importing its newest full export (\(plan.fullDate)) and the "
                           + "\(plan.incrementals.count) incremental\(plan.incrementals.count == 1 ? "" : "s") "
                           + "after it, as epf sync does")
            }
            return plan.orderedPaths
        }
    }
}
