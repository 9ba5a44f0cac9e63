import EPFFormat
import EPFParquet
import EPFSQLite
import Foundation
import Glibc

/// What one table is exported from: a query and its columns, and whether it is split by storefront.
struct ExportSource {
    /// The table's name, and the name of its directory in the export.
    let name: String
    /// `SELECT` of the columns, in order.
    let sql: String
    let bindings: [SQLValue]
    var columns: [ExportColumn]
    /// The index of `storefront_id` for the price tables, written Hive-style as `storefront=US/`.
    let partitionColumn: Int?
}

/// One Parquet file of an export: its path below the export directory and its rows.
package struct ExportedFile: Sendable {
    package let path: String
    package let rows: Int64
}

/// Writes one table into a directory: one file (`part-0.parquet`), or one per storefront
/// (`storefront=US/part-0.parquet`) for the price tables, each split into row groups.
///
/// Memory stays bounded whatever the table's size: a file's row group is written out at `rowGroupRows` rows or
/// `rowGroupBytes`; with one file per storefront open at once, the row group holding the most bytes is also
/// written out whenever all of them together hold more than `partitionBudgetBytes`.
final class TableExporter {
    private let connection: SQLiteConnection
    private(set) var source: ExportSource
    private let directory: String
    private let options: ParquetWriterOptions
    private let partitionBudgetBytes: Int
    private let createdBy: String
    /// Columns written as text because a value did not convert exactly, with why.
    private(set) var notes: [String] = []

    init(connection: SQLiteConnection, source: ExportSource, directory: String, options: ParquetWriterOptions,
         partitionBudgetBytes: Int, createdBy: String) {
        self.connection = connection
        self.source = source
        self.directory = directory
        self.options = options
        self.partitionBudgetBytes = partitionBudgetBytes
        self.createdBy = createdBy
    }

    /// A value that does not convert exactly: its column and its text.
    private struct Refused: Error {
        let column: Int
        let value: String
    }

    /// Writes the table; returns its files. A value that does not convert to its column's type exactly (a
    /// decimal with four fraction digits, a date that is not one) makes that column text, and the table is
    /// written again from the start.
    func run() throws -> [ExportedFile] {
        while true {
            do {
                return try write()
            } catch let refused as Refused {
                let column = source.columns[refused.column]
                notes.append("\(column.name) written as text: '\(refused.value.prefix(40))' is not a "
                             + "\(Self.typeName(column.parquet.type))")
                source.columns[refused.column] = ExportColumn(name: column.name, conversion: .text)
                try Self.removeContents(of: directory)
            }
        }
    }

    private static func typeName(_ type: ParquetColumnType) -> String {
        switch type {
        case .int64: return "64-bit integer"
        case .timestampMillis: return "date"
        case .decimal(let precision, let scale): return "DECIMAL(\(precision),\(scale))"
        case .double: return "double"
        case .string: return "text"
        }
    }

    private func write() throws -> [ExportedFile] {
        let statement = try connection.prepare(source.sql)
        try statement.bind(source.bindings)
        let parquetColumns = source.columns.map(\.parquet)
        var writers: [Int64: ParquetFileWriter] = [:]
        var names: [Int64: String] = [:]
        var single: ParquetFileWriter?
        var lastPartition: Int64?
        var lastWriter: ParquetFileWriter?
        defer {
            single?.abandon()
            for writer in writers.values { writer.abandon() }
        }
        func writer(forPartition partition: Int64) throws -> ParquetFileWriter {
            if partition == lastPartition, let lastWriter { return lastWriter }
            let found: ParquetFileWriter
            if let existing = writers[partition] {
                found = existing
            } else {
                let name = AppleStorefronts.entry(id: Int(partition))?.linkCode.uppercased() ?? String(partition)
                found = try makeWriter(partition: name, columns: parquetColumns)
                writers[partition] = found
                names[partition] = name
            }
            lastPartition = partition
            lastWriter = found
            return found
        }
        if source.partitionColumn == nil { single = try makeWriter(partition: nil, columns: parquetColumns) }
        let conversions = source.columns.map(\.conversion)
        let count = Int32(conversions.count)
        var rows = 0
        while try statement.step() {
            let target: ParquetFileWriter
            if let partitionColumn = source.partitionColumn {
                target = try writer(forPartition: statement.columnInt64(Int32(partitionColumn)))
            } else if let single {
                target = single
            } else {
                break
            }
            for index in 0..<count {
                guard try ExportColumn.append(conversions[Int(index)], from: statement, at: index, to: target) else {
                    throw Refused(column: Int(index), value: statement.text(at: index) ?? "")
                }
            }
            try target.endRow()
            rows += 1
            if rows & 4095 == 0 && writers.count > 1 { try keepWithinBudget(writers.values) }
        }
        if source.partitionColumn != nil && writers.isEmpty {
            // No rows: one empty file still gives readers the schema.
            writers[-1] = try makeWriter(partition: "none", columns: parquetColumns)
            names[-1] = "none"
        }
        var files: [ExportedFile] = []
        if let single {
            try single.finish()
            files.append(ExportedFile(path: "\(source.name)/part-0.parquet", rows: single.rows))
        }
        for (partition, writer) in writers.sorted(by: { $0.key < $1.key }) {
            try writer.finish()
            files.append(ExportedFile(path: "\(source.name)/storefront=\(names[partition] ?? "none")/part-0.parquet",
                                      rows: writer.rows))
        }
        return files
    }

    /// Writes out the fullest row groups until the open files together hold at most `partitionBudgetBytes`.
    private func keepWithinBudget(_ writers: Dictionary<Int64, ParquetFileWriter>.Values) throws {
        var held = writers.map { ($0, $0.bufferedBytes) }
        var total = held.reduce(0) { $0 + $1.1 }
        while total > partitionBudgetBytes, let fullest = held.indices.max(by: { held[$0].1 < held[$1].1 }) {
            try held[fullest].0.flushRowGroup()
            total -= held[fullest].1
            held[fullest].1 = 0
        }
    }

    private func makeWriter(partition: String?, columns: [ParquetColumn]) throws -> ParquetFileWriter {
        var path = directory
        if let partition {
            path += "/storefront=\(partition)"
            try Self.makeDirectory(path)
        }
        return try ParquetFileWriter(path: path + "/part-0.parquet", columns: columns, options: options,
                                     createdBy: createdBy)
    }

    static func makeDirectory(_ path: String) throws {
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else {
            throw ExportError.system(call: "mkdir", path: path, errno: errno)
        }
    }

    static func removeContents(of directory: String) throws {
        let manager = FileManager.default
        for name in (try? manager.contentsOfDirectory(atPath: directory)) ?? [] {
            try manager.removeItem(atPath: directory + "/" + name)
        }
    }
}
