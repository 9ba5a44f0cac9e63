import EPFQuery
import EPFStore

/// The body of `/v1/status`: tables with cheap row counts, export dates and the last imports.
///
/// Read straight from the database through the engine's read-only `sql` so it needs nothing from the
/// importer: row counts are `max(rowid)` (exact for tables only appended to, cheap on any size), the export
/// date of a table is that of its last row, and `lastImport` is the newest row of `epf_ledger` when present.
enum StatusReport {
    static func build(engine: QueryEngine, databasePath: String, startedAt: Int64, threads: Int) throws -> JSONValue {
        let names = try engine.sql("""
            SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name
            """).rows.compactMap { row -> String? in
            if case .text(let name)? = row.first { return name }
            return nil
        }
        var tables: [JSONValue] = []
        for name in names {
            let quoted = "\"" + name.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
            let rows = try? engine.sql("SELECT max(rowid) FROM \(quoted)").rows.first?.first
            let exportDate = try? engine.sql("SELECT export_date FROM \(quoted) ORDER BY rowid DESC LIMIT 1")
                .rows.first?.first
            var fields: [(String, JSONValue)] = [("name", .string(name))]
            fields.append(("rows", rows.map(Self.integer) ?? .null))
            if case .integer(let milliseconds)? = exportDate {
                fields.append(("exportDate", .string(EPFRoutes.isoDate(milliseconds: milliseconds))))
            }
            tables.append(.object(fields))
        }
        var imports: [JSONValue] = []
        if names.contains("epf_ledger") {
            let result = try engine.sql("SELECT * FROM epf_ledger ORDER BY rowid DESC LIMIT 5")
            imports = result.rows.map { SQLResult.object(columns: result.columns, row: $0) }
        }
        let exportDate = try engine.dataExportDate()
        return .object([
            ("database", .string(databasePath)),
            ("exportDate", exportDate.map { .string(EPFRoutes.isoDate(milliseconds: $0)) } ?? .null),
            ("exportDateMs", exportDate.map { .int($0) } ?? .null),
            ("tables", .array(tables)),
            ("lastImport", imports.first ?? .null),
            ("recentImports", .array(imports)),
            ("server", .object([
                ("startedAt", .string(EPFRoutes.isoDate(milliseconds: startedAt * 1000))),
                ("threads", .int(Int64(threads))),
            ])),
        ])
    }

    private static func integer(_ value: SQLValue) -> JSONValue {
        if case .integer(let number) = value { return .int(number) }
        return value == .null ? .int(0) : .null
    }
}
