import Foundation

/// Whether a table file holds a complete snapshot or only changed rows.
public enum ExportMode: String, Sendable, Codable {
    case full = "FULL"
    case incremental = "INCREMENTAL"
}

/// The flavour of the file: EPF relational (SOH/STX-LF) or EPF Flat (tab/newline).
public enum FileFlavor: String, Sendable, Codable {
    case relational
    case flat
}

/// The metadata records at the top of a table file.
public struct EPFHeader: Sendable, Equatable {
    /// Column names in file order (the leading `#` removed).
    public var columns: [String] = []
    /// `#primaryKey:` columns; empty when none is declared.
    public var primaryKey: [String] = []
    /// `#dbTypes:` entries, one per column as declared (may be fewer or more than the columns in broken files).
    public var dbTypes: [String] = []
    /// `#exportMode:`, nil when absent (EPF Flat).
    public var exportMode: ExportMode?
    /// The raw `#exportMode:` text when it is neither FULL nor INCREMENTAL.
    public var unknownExportMode: String?
    /// Number of `##legal` lines.
    public var legalLines = 0
    /// Other `#tag:` records, in order, as raw text.
    public var otherTags: [String] = []
    /// Relational or Flat.
    public var flavor: FileFlavor = .relational
    /// Bytes taken by the header records.
    public var byteCount: Int64 = 0

    /// A header with the given parts, for tests and writers.
    public init(columns: [String] = [], primaryKey: [String] = [], dbTypes: [String] = [],
                exportMode: ExportMode? = nil, flavor: FileFlavor = .relational) {
        self.columns = columns
        self.primaryKey = primaryKey
        self.dbTypes = dbTypes
        self.exportMode = exportMode
        self.flavor = flavor
    }

    /// Index of a column by name.
    public func index(of column: String) -> Int? { columns.firstIndex(of: column) }
}

/// A column type from `#dbTypes:`, reduced to what matters for storage.
public enum EPFColumnType: Sendable, Equatable, CustomStringConvertible {
    /// BIGINT, INTEGER, INT, SMALLINT, TINYINT.
    case integer
    /// BOOLEAN (0/1).
    case boolean
    /// DECIMAL(p,s) / NUMERIC.
    case decimal
    /// VARCHAR(n), LONGTEXT, CLOB, TEXT, CHAR.
    case text
    /// DATETIME, DATE, TIMESTAMP.
    case datetime

    /// Maps a declared type such as `VARCHAR(1000)` or `BIGINT`; unknown types are text.
    public init(declared: String) {
        let upper = declared.trimmingCharacters(in: .whitespaces).uppercased()
        let base = upper.prefix { $0.isLetter }
        switch base {
        case "BIGINT", "INTEGER", "INT", "SMALLINT", "TINYINT", "MEDIUMINT": self = .integer
        case "BOOLEAN", "BOOL", "BIT": self = .boolean
        case "DECIMAL", "NUMERIC", "NUMBER": self = .decimal
        case "DATETIME", "DATE", "TIMESTAMP": self = .datetime
        default: self = .text
        }
    }

    public var description: String {
        switch self {
        case .integer: return "integer"
        case .boolean: return "boolean"
        case .decimal: return "decimal"
        case .text: return "text"
        case .datetime: return "datetime"
        }
    }
}
