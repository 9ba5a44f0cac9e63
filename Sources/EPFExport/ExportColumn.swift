import EPFFormat
import EPFParquet
import EPFSQLite

/// One column of an exported table: its Parquet column and how a stored value becomes a Parquet value.
struct ExportColumn {
    /// How stored values convert.
    enum Conversion: Equatable {
        /// Integers as INT64 (an integral REAL or integer text too).
        case integer
        /// Milliseconds since 1970 (`export_date`) as TIMESTAMP(UTC, MILLIS).
        case timestampMilliseconds
        /// Canonical date-time text (the import's DATETIME) as TIMESTAMP(UTC, MILLIS).
        case timestampText
        /// A DECIMAL column's value (decimal text, whole INTEGER or REAL) as DECIMAL(18, 3).
        case decimal
        /// REAL as DOUBLE.
        case double
        /// Anything as its text (UTF-8).
        case text
    }

    let name: String
    let conversion: Conversion

    var parquet: ParquetColumn {
        switch conversion {
        case .integer: return ParquetColumn(name: name, type: .int64)
        case .timestampMilliseconds, .timestampText: return ParquetColumn(name: name, type: .timestampMillis)
        case .decimal: return ParquetColumn(name: name, type: .decimal(precision: 18, scale: 3))
        case .double: return ParquetColumn(name: name, type: .double)
        case .text: return ParquetColumn(name: name, type: .string)
        }
    }

    /// The conversion of a column of an EPF table: the catalogue's type where it knows the column (DECIMAL and
    /// DATETIME are stored as text), else the SQLite declared type.
    static func conversion(table: String, column: String, declared: String) -> Conversion {
        let storage = declared.uppercased()
        if column == "export_date" && (storage.contains("INT") || storage.isEmpty) { return .timestampMilliseconds }
        var known: EPFColumnType?
        if let definition = EPFCatalogue.table(named: table), let index = definition.columns.firstIndex(of: column) {
            known = EPFColumnType(declared: definition.types[index])
        }
        if known == .decimal { return .decimal }
        if storage.contains("INT") { return .integer }
        if storage.contains("REAL") || storage.contains("FLOA") || storage.contains("DOUB") { return .double }
        if known == .datetime && storage.contains("TEXT") { return .timestampText }
        return .text
    }

    /// Reads column `index` of the current row of `statement` into column `index` of `writer`. Returns false, with
    /// nothing appended, when the value does not convert exactly (the caller then writes the column as text).
    @inline(__always)
    func append(from statement: SQLiteStatement, at index: Int32, to writer: ParquetFileWriter) throws -> Bool {
        try Self.append(conversion, from: statement, at: index, to: writer)
    }

    /// `append` of a column converted by `conversion` (a trivial value: no reference counting per value).
    @inline(__always)
    static func append(_ conversion: Conversion, from statement: SQLiteStatement, at index: Int32,
                       to writer: ParquetFileWriter) throws -> Bool {
        let column = Int(index)
        let storage = statement.columnStorage(index)
        if storage == .null {
            try writer.appendNull(column: column)
            return true
        }
        switch conversion {
        case .integer, .timestampMilliseconds:
            switch storage {
            case .integer:
                try writer.append(statement.columnInt64(index), column: column)
                return true
            case .real:
                let value = statement.columnDouble(index)
                guard value.rounded() == value, abs(value) < 9.2e18 else { return false }
                try writer.append(Int64(value), column: column)
                return true
            default:
                guard let text = statement.columnText(index), let value = EPFValues.integer(text) else { return false }
                try writer.append(value, column: column)
                return true
            }
        case .timestampText:
            guard storage == .text, let text = statement.columnText(index),
                  let value = ExactValues.milliseconds(text) else { return false }
            try writer.append(value, column: column)
            return true
        case .decimal:
            let value: Int64?
            switch storage {
            case .integer: value = ExactValues.thousandths(statement.columnInt64(index))
            case .real: value = ExactValues.thousandths(statement.columnDouble(index))
            default: value = statement.columnText(index).flatMap { ExactValues.thousandths($0) }
            }
            guard let value else { return false }
            try writer.append(value, column: column)
            return true
        case .double:
            guard storage == .real || storage == .integer else { return false }
            try writer.append(statement.columnDouble(index), column: column)
            return true
        case .text:
            try writer.append(bytes: statement.columnText(index) ?? UnsafeRawBufferPointer(start: nil, count: 0),
                              column: column)
            return true
        }
    }
}
