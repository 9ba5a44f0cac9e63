import EPFFormat
import EPFQuery
import JSONText

/// `epf changes`: the Apple IDs the exports since a date removed from the store, added or updated.
enum ChangesCommand: Command {
    static let name = "changes"
    static let summary = "List the ids removed, added or updated by the exports since a date"
    static let help = """
    USAGE: epf changes --since YYYY-MM-DD [--kind KIND] [--json | --csv] [--db FILE]

    EPF never says that an item left the store: it is only missing from the next full export. epf compares
    each full export of application, collection, song, video and artist with the table it replaces and
    records the ids that disappeared (removed) and appeared (added); an incremental records the ids it
    inserted (added) or changed (updated). The first load of a table is the baseline and records nothing.

    OPTIONS:
      --since DATE   List the changes of exports dated DATE (UTC) or later. Required.
      --kind KIND    Only one kind: app, collection, song, video or artist.
      --json         One JSON array of {"id", "kind", "change", "exportDate"} objects.
      --csv          RFC 4180 CSV with a header row (CRLF line ends), for scripts.
      --db FILE      Database (default: $EPF_DB, else ./epf.sqlite).

    Without --json or --csv, prints a table: export date, change, kind, id. Changes are listed by export
    date, then in the order they were recorded.

    EXAMPLES:
      epf changes --since 2026-11-01
      epf changes --since 2026-11-20 --kind app --csv > changes.csv
    """

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let path = try databasePath(&arguments)
        let since = try arguments.option("since")
        let kind = try arguments.option("kind")
        let json = arguments.flag("json")
        let csv = arguments.flag("csv")
        let positionals = try arguments.finish()
        guard positionals.isEmpty else { throw UsageError("unexpected argument '\(positionals[0])'") }
        guard !(csv && json) else { throw UsageError("choose one of --csv and --json") }
        guard let since else { throw UsageError("--since DATE is required (YYYY-MM-DD)") }
        _ = try QueryCLI.run { try ChangeQueries.changesSince(since, kind: kind) }
        var rows: [[String]] = []
        var first = true
        if json { Output.shared.write("[") }
        if csv { Output.shared.write("export_date,change,kind,id\r\n") }
        try QueryCLI.run {
            let engine = try QueryEngine(databasePath: path)
            var cursor: String?
            repeat {
                let page = try engine.changes.page(since: since, kind: kind, limit: ChangeQueries.maximumChangesPage,
                                              cursor: cursor)
                for change in page.changes {
                    let fields = [EPFValues.isoDate(milliseconds: change.exportDate), change.change, change.kind,
                                  String(change.id)]
                    if json {
                        var bytes = change.json.serialized()
                        bytes.insert(contentsOf: Array((first ? "\n" : ",\n").utf8), at: 0)
                        Output.shared.write(String(decoding: bytes, as: UTF8.self))
                    } else if csv {
                        Output.shared.write(fields.map(SQLCommand.csvField).joined(separator: ",") + "\r\n")
                    } else {
                        rows.append(fields)
                    }
                    first = false
                }
                cursor = page.nextCursor
            } while cursor != nil
        }
        if json {
            Output.shared.write(first ? "]\n" : "\n]\n")
        } else if !csv {
            printTable(header: ["EXPORT", "CHANGE", "KIND", "ID"], rows: rows, rightAligned: [3], boldHeader: true)
        }
        return .ok
    }
}
