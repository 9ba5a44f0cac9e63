import EPFQuery
import EPFStore

/// The body of `/v1/status`: EPFStore's `StoreStatus` (tables with row counts and export dates from the
/// importer's bookkeeping, the last imports from its ledger, the file size) as JSON, plus server facts.
///
/// Keys follow `epf status --json` (`database`, `sizeBytes`, `tables`, `lastImports`), with `exportDate`
/// added as ISO 8601 next to the milliseconds. Callers cache the result: tables without bookkeeping are counted.
enum StatusReport {
    /// `dataExportDate` (the engine's newest `export_date`) stands in when no table has bookkeeping.
    static func build(databasePath: String, dataExportDate: Int64?, startedAt: Int64,
                      threads: Int) throws -> JSONValue {
        let connection = try SQLiteConnection(path: databasePath, mode: .readOnly, busyTimeoutMilliseconds: 1000)
        let status = try StoreStatus.read(connection, databasePath: databasePath, lastImports: 10)
        func date(_ milliseconds: Int64?) -> JSONValue {
            milliseconds.map { .string(EPFRoutes.isoDate(milliseconds: $0)) } ?? .null
        }
        func text(_ value: String?) -> JSONValue { value.map { .string($0) } ?? .null }
        let tables: [JSONValue] = status.tables.map { table in
            .object([
                ("name", .string(table.name)), ("rows", .int(table.rows)),
                ("exportDate", date(table.exportDate)), ("exportDateMs", table.exportDate.map { .int($0) } ?? .null),
                ("mode", text(table.mode)), ("updated", text(table.updated)),
            ])
        }
        let imports: [JSONValue] = status.lastImports.map { entry in
            .object([
                ("table", .string(entry.table)), ("location", .string(entry.location)), ("mode", text(entry.mode)),
                ("exportDate", date(entry.exportDate)), ("rows", .int(entry.rows)), ("rejects", .int(entry.rejects)),
                ("repaired", .int(entry.repaired)), ("duplicates", .int(entry.duplicates)),
                ("finished", text(entry.finished)),
                ("outcome", .string(entry.outcome)), ("message", text(entry.message)),
            ])
        }
        let exportDate = status.exportDate ?? dataExportDate
        return .object([
            ("database", .string(status.database)),
            ("sizeBytes", .int(status.sizeBytes)),
            ("exportDate", date(exportDate)),
            ("exportDateMs", exportDate.map { .int($0) } ?? .null),
            ("tables", .array(tables)),
            ("lastImport", imports.first ?? .null),
            ("lastImports", .array(imports)),
            ("server", .object([
                ("startedAt", .string(EPFRoutes.isoDate(milliseconds: startedAt * 1000))),
                ("threads", .int(Int64(threads))),
            ])),
        ])
    }
}
