import EPFQuery
import EPFSQLite
import EPFStore

/// `epf sql`: one read-only SQL statement against the database.
enum SQLCommand: Command {
    static let name = "sql"
    static let summary = "Run one read-only SQL query (table, --csv or --json)"
    static let help = """
    USAGE: epf sql "SELECT ..." [--csv | --json] [--db FILE]

    Runs one SQL statement on a connection opened read-only, with an authorizer that denies anything
    but reading: INSERT, UPDATE, DELETE, CREATE, DROP, ATTACH, DETACH, VACUUM (INTO), "PRAGMA x = y"
    (e.g. writable_schema) and more than one statement are refused with exit status 65, and nothing
    changes. SQL errors (syntax, unknown table) also exit 65.

    OPTIONS:
    \(optionsHelp(declaredOptions))

    Without --csv or --json, prints an aligned table (lines cut to the terminal width on a terminal).

    EXAMPLES:
      epf sql "SELECT application_id, title FROM application ORDER BY title LIMIT 10"
      epf sql "SELECT currency_code, count(*) FROM application_price GROUP BY 1" --csv > currencies.csv
      epf sql "SELECT * FROM storefront" --json
    """

    static let csv = Flag("csv", "RFC 4180 CSV with a header row (CRLF line ends), for scripts.")
    static let json = CommonOptions.json("A JSON array of objects keyed by column name.")

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let path = try databasePath(&arguments)
        let csv = arguments.read(Self.csv)
        let json = arguments.read(Self.json)
        let positionals = try arguments.finish()
        guard !(csv && json) else { throw UsageError("choose one of --csv and --json") }
        guard positionals.count == 1 else { throw UsageError("give the SQL as one argument (quote it)") }
        let text = positionals[0]
        try QueryCLI.run {
            let engine = try QueryEngine(databasePath: path, workload: .scans)
            if csv {
                var columnNames: [String] = []
                try engine.sql.stream(text, columns: { names in
                    columnNames = names
                    Output.shared.write(names.map(csvField).joined(separator: ",") + "\r\n")
                }, row: { values in
                    Output.shared.write(values.map { csvField(plain($0, null: "")) }.joined(separator: ",") + "\r\n")
                    return true
                })
                _ = columnNames
            } else if json {
                var columnNames: [String] = []
                var first = true
                try engine.sql.stream(text, columns: { names in
                    columnNames = names
                    Output.shared.write("[")
                }, row: { values in
                    var bytes = SQLResult.object(columns: columnNames, row: values).serialized()
                    bytes.insert(contentsOf: Array((first ? "\n" : ",\n").utf8), at: 0)
                    first = false
                    Output.shared.write(String(decoding: bytes, as: UTF8.self))
                    return true
                })
                Output.shared.write(first ? "]\n" : "\n]\n")
            } else {
                let result = try engine.sql.run(text)
                printTable(header: result.columns, rows: result.rows.map { $0.map { plain($0, null: "NULL") } },
                           width: terminalWidth(), rightAligned: numericColumns(result), boldHeader: true)
            }
        }
        return .ok
    }

    /// A value as text: integers as numbers, reals as their shortest plain decimal (a price as `0.99`, `1225000`),
    /// blobs as x'hex', NULL as `null`.
    static func plain(_ value: SQLValue, null: String) -> String {
        switch value {
        case .null: return null
        case .integer(let number): return String(number)
        case .real(let number): return DecimalNumber.text(number)
        case .text(let text): return text
        case .blob(let bytes): return "x'" + SQLResult.hex(bytes) + "'"
        }
    }

    /// RFC 4180: quote fields holding a comma, quote, CR or LF; double inner quotes.
    static func csvField(_ text: String) -> String {
        // Bytes, not characters: "\r\n" is one Character, and breaking text into Characters cost more than the rest.
        guard text.utf8.contains(where: { $0 == 0x2C || $0 == 0x22 || $0 == 0x0A || $0 == 0x0D }) else {
            return text
        }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// Columns whose non-NULL values are all numbers.
    static func numericColumns(_ result: SQLResult) -> Set<Int> {
        var numeric = Set(0..<result.columns.count)
        for row in result.rows {
            for (index, value) in row.enumerated() {
                switch value {
                case .integer, .real, .null: continue
                default: numeric.remove(index)
                }
            }
        }
        return numeric
    }
}
