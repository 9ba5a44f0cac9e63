import EPFFormat
import EPFParquet
import EPFSQLite
import EPFSchema
import Foundation
import Glibc
import JSONText

/// What `ParquetExport.run` writes, and how.
package struct ExportOptions: Sendable {
    /// The directory the tables go to (created when missing).
    package var directory: String
    /// The tables to export (feed tables, `epf_changes`, `epf_price_history`); nil for all of them.
    package var tables: [String]?
    /// Only rows of exports dated this (milliseconds since 1970, midnight UTC) or later.
    package var since: Int64?
    /// Row groups, compression.
    package var writer: ParquetWriterOptions
    /// The most bytes the open files of a table split by storefront hold together (see `TableExporter`).
    package var partitionBudgetBytes: Int
    /// The footer's `created_by`.
    package var createdBy: String

    package init(directory: String, tables: [String]? = nil, since: Int64? = nil,
                writer: ParquetWriterOptions = ParquetWriterOptions(), partitionBudgetBytes: Int = 128 << 20,
                createdBy: String = "epf") {
        self.directory = directory
        self.tables = tables
        self.since = since
        self.writer = writer
        self.partitionBudgetBytes = partitionBudgetBytes
        self.createdBy = createdBy
    }
}

/// One exported table.
package struct ExportedTable: Sendable {
    package let name: String
    package let rows: Int64
    /// The `export_date` of the feed file last imported into it (milliseconds), nil for the change tables.
    package let exportDate: Int64?
    package let files: [ExportedFile]
    /// The columns as written: name and Parquet type.
    package let columns: [(name: String, type: String)]
    /// Columns written as text rather than their type, and why.
    package let notes: [String]
    /// Whether the table is split by storefront (`storefront=US/`).
    package let partitioned: Bool
    package let seconds: Double
}

/// `epf export`: the database's tables as Apache Parquet files, one directory per table.
///
/// Each table is written into a hidden staging directory of the export directory (`.NAME.export-PID`) and moved
/// into place when complete, replacing the previous export of that table; `_manifest.json` (export date, tables,
/// files, row counts, columns) is written last under a temporary name and renamed. An interrupted export leaves
/// no half-written file under a final name; its staging directories are removed by the next export.
///
/// The tables are read in one read transaction, so they are one consistent snapshot even while an import runs.
package enum ParquetExport {
    /// The manifest's file name.
    package static let manifestName = "_manifest.json"

    /// The tables an export can write, in order: the feed's tables (those `epf import` loaded), then the change log
    /// and the price history when the database has them.
    package static func availableTables(_ connection: SQLiteConnection) throws -> [String] {
        var present: Set<String> = []
        for row in try connection.query("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')") {
            if case .text(let name) = row.first { present.insert(name) }
        }
        var names: [String] = []
        if present.contains("epf_tables") {
            for row in try connection.query("SELECT table_name FROM epf_tables ORDER BY table_name") {
                if case .text(let name) = row.first, present.contains(name), !name.hasPrefix("epf_") {
                    names.append(name)
                }
            }
        }
        for special in [ChangeLog.table, PriceHistory.table] where present.contains(special) { names.append(special) }
        return names
    }

    /// Exports the tables of the database at `databasePath` (see `ExportOptions`); `progress` is told of each table
    /// when it is in place. Throws `ExportError`.
    package static func run(databasePath: String, options: ExportOptions,
                           progress: (ExportedTable) -> Void = { _ in }) throws -> [ExportedTable] {
        guard FileManager.default.fileExists(atPath: databasePath) else {
            throw ExportError.databaseMissing(path: databasePath)
        }
        do {
            return try export(databasePath: databasePath, options: options, progress: progress)
        } catch let error as SQLiteError {
            throw ExportError.sqlite(error)
        } catch let error as ParquetError {
            throw ExportError.parquet(error)
        }
    }

    private static func export(databasePath: String, options: ExportOptions,
                               progress: (ExportedTable) -> Void) throws -> [ExportedTable] {
        let connection = try SQLiteConnection(path: databasePath, mode: .readOnly)
        // Reads through a page cache of its own, not a map: a map's pages would count in the resident memory.
        try connection.execute("PRAGMA mmap_size = 0; PRAGMA cache_size = -32768")
        try connection.execute("BEGIN")
        defer { try? connection.execute("COMMIT") }
        let available = try availableTables(connection)
        guard !available.isEmpty else { throw ExportError.databaseEmpty(path: databasePath) }
        var chosen = available
        if let wanted = options.tables {
            for name in wanted where !available.contains(name) {
                throw ExportError.unknownTable(name: name, available: available)
            }
            chosen = available.filter(wanted.contains)
        }
        let exportDates = try feedExportDates(connection)
        let directory = options.directory.hasSuffix("/") && options.directory.count > 1
            ? String(options.directory.dropLast()) : options.directory
        try makeDirectories(directory)
        removeStaleStaging(in: directory)
        var exported: [ExportedTable] = []
        for name in chosen {
            let started = Date()
            let source = try source(of: name, connection: connection, since: options.since)
            let staging = "\(directory)/.\(name).export-\(getpid())"
            try? FileManager.default.removeItem(atPath: staging)
            try TableExporter.makeDirectory(staging)
            let exporter = TableExporter(connection: connection, source: source, directory: staging,
                                         options: options.writer, partitionBudgetBytes: options.partitionBudgetBytes,
                                         createdBy: options.createdBy)
            let files: [ExportedFile]
            do {
                files = try exporter.run()
                try moveIntoPlace(staging, as: "\(directory)/\(name)", in: directory, table: name)
            } catch {
                try? FileManager.default.removeItem(atPath: staging)
                throw error
            }
            let table = ExportedTable(
                name: name, rows: files.reduce(0) { $0 + $1.rows }, exportDate: exportDates[name], files: files,
                columns: exporter.source.columns.map { ($0.name, typeText($0.parquet.type)) }, notes: exporter.notes,
                partitioned: source.partitionColumn != nil, seconds: Date().timeIntervalSince(started))
            exported.append(table)
            progress(table)
        }
        try writeManifest(exported, options: options, directory: directory, exportDates: exportDates)
        return exported
    }

    /// The query of one table, and how its columns convert.
    private static func source(of name: String, connection: SQLiteConnection, since: Int64?) throws -> ExportSource {
        var columns: [ExportColumn] = []
        if name == PriceHistory.table {
            // A view over the packed changes: one row per change, its columns typed here.
            let conversions: [(String, ExportColumn.Conversion)] = [
                ("export_date", .timestampMilliseconds), ("seq", .integer), ("kind", .text), ("id", .integer),
                ("storefront_id", .integer), ("change", .text), ("old_price", .decimal), ("new_price", .decimal),
                ("currency", .text),
            ]
            columns = conversions.map { ExportColumn(name: $0.0, conversion: $0.1) }
        } else {
            for row in try connection.query("PRAGMA table_info(\(SQLiteConnection.quote(name)))") {
                guard row.count >= 3, case .text(let column) = row[1] else { continue }
                let declared: String
                if case .text(let text) = row[2] { declared = text } else { declared = "" }
                columns.append(ExportColumn(name: column, conversion: ExportColumn.conversion(
                    table: name, column: column, declared: declared)))
            }
        }
        let list = columns.map { SQLiteConnection.quote($0.name) }.joined(separator: ", ")
        var sql = "SELECT \(list) FROM \(SQLiteConnection.quote(name))"
        var bindings: [SQLValue] = []
        if let since, columns.contains(where: { $0.name == "export_date" }) {
            sql += " WHERE export_date >= ?1"
            bindings.append(.integer(since))
        }
        let partitioned = PriceHistory.tracked[name] != nil
        return ExportSource(name: name, sql: sql, bindings: bindings, columns: columns,
                            partitionColumn: partitioned ? columns.firstIndex { $0.name == "storefront_id" } : nil)
    }

    /// `epf_tables`' export date of each feed table (milliseconds).
    private static func feedExportDates(_ connection: SQLiteConnection) throws -> [String: Int64] {
        guard try connection.tableExists("epf_tables") else { return [:] }
        var dates: [String: Int64] = [:]
        for row in try connection.query("SELECT table_name, export_date FROM epf_tables") {
            if row.count == 2, case .text(let name) = row[0], case .integer(let date) = row[1] { dates[name] = date }
        }
        return dates
    }

    static func typeText(_ type: ParquetColumnType) -> String {
        switch type {
        case .int64: return "INT64"
        case .timestampMillis: return "TIMESTAMP(UTC, MILLIS)"
        case .decimal(let precision, let scale): return "DECIMAL(\(precision),\(scale))"
        case .double: return "DOUBLE"
        case .string: return "STRING"
        }
    }

    private static func makeDirectories(_ path: String) throws {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw ExportError.system(call: "mkdir", path: path, errno: errno == 0 ? EIO : errno)
        }
    }

    /// Replaces `target` with `staging`: the old directory is renamed aside first, then removed.
    private static func moveIntoPlace(_ staging: String, as target: String, in directory: String,
                                      table: String) throws {
        let aside = "\(directory)/.\(table).old-\(getpid())"
        var hadOld = false
        if rename(target, aside) == 0 {
            hadOld = true
        } else if errno != ENOENT {
            throw ExportError.system(call: "rename", path: target, errno: errno)
        }
        guard rename(staging, target) == 0 else {
            let code = errno
            if hadOld { rename(aside, target) }
            throw ExportError.system(call: "rename", path: staging, errno: code)
        }
        if hadOld { try? FileManager.default.removeItem(atPath: aside) }
    }

    /// Removes what exports no longer running left: staging and set-aside directories (`.NAME.export-PID`,
    /// `.NAME.old-PID`) and a manifest's temporary file (`._manifest.json.partial-PID`).
    private static func removeStaleStaging(in directory: String) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] where name.hasPrefix(".") {
            guard let dash = name.lastIndex(of: "-"),
                  name.contains(".export-") || name.contains(".old-") || name.contains(".partial-"),
                  let pid = Int32(name[name.index(after: dash)...]) else { continue }
            if pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH {
                try? FileManager.default.removeItem(atPath: "\(directory)/\(name)")
            }
        }
    }

    /// `_manifest.json`: when, from which feed export, and each table's rows, files and columns.
    private static func writeManifest(_ tables: [ExportedTable], options: ExportOptions, directory: String,
                                      exportDates: [String: Int64]) throws {
        let latest = exportDates.values.max()
        func date(_ milliseconds: Int64?) -> JSONValue {
            milliseconds.map { .string(EPFValues.isoTimestamp(milliseconds: $0)) } ?? .null
        }
        let document = JSONValue.object([
            ("format", .string("epf-parquet")), ("version", .int(1)),
            ("exportedAt", date(Int64(Date().timeIntervalSince1970 * 1000))),
            ("exportDate", date(latest)),
            ("since", date(options.since)),
            ("tables", .array(tables.map { table in
                .object([
                    ("name", .string(table.name)), ("rows", .int(table.rows)), ("exportDate", date(table.exportDate)),
                    ("partitionedBy", table.partitioned ? .string("storefront") : .null),
                    ("columns", .array(table.columns.map {
                        .object([("name", .string($0.name)), ("type", .string($0.type))])
                    })),
                    ("files", .array(table.files.map {
                        .object([("path", .string($0.path)), ("rows", .int($0.rows))])
                    })),
                    ("notes", .array(table.notes.map { .string($0) })),
                ])
            })),
        ])
        let path = "\(directory)/\(manifestName)"
        let temporary = "\(directory)/.\(manifestName).partial-\(getpid())"
        do {
            try Data(document.serialized() + [0x0A]).write(to: URL(fileURLWithPath: temporary))
        } catch {
            throw ExportError.system(call: "write", path: temporary, errno: errno == 0 ? EIO : errno)
        }
        guard rename(temporary, path) == 0 else { throw ExportError.system(call: "rename", path: path, errno: errno) }
    }
}
