import Foundation

/// Whether a table file holds a complete snapshot or only changed rows.
package enum ExportMode: String, Sendable, Codable {
    case full = "FULL"
    case incremental = "INCREMENTAL"
}

/// The flavour of the file: EPF relational (SOH/STX-LF) or EPF Flat (tab/newline).
package enum FileFlavor: String, Sendable, Codable {
    case relational
    case flat
}

/// The metadata records at the top of a table file.
package struct EPFHeader: Sendable, Equatable {
    /// Column names in file order (the leading `#` removed).
    package var columns: [String] = []
    /// `#primaryKey:` columns; empty when none is declared.
    package var primaryKey: [String] = []
    /// `#dbTypes:` entries, one per column as declared (may be fewer or more than the columns in broken files).
    package var dbTypes: [String] = []
    /// `#exportMode:`, nil when absent (EPF Flat).
    package var exportMode: ExportMode?
    /// The raw `#exportMode:` text when it is neither FULL nor INCREMENTAL.
    package var unknownExportMode: String?
    /// Number of `##legal` lines.
    package var legalLines = 0
    /// Other `#tag:` records, in order, as raw text.
    package var otherTags: [String] = []
    /// Relational or Flat.
    package var flavor: FileFlavor = .relational
    /// Bytes taken by the header records.
    package var byteCount: Int64 = 0

    /// A header with the given parts, for tests and writers.
    package init(columns: [String] = [], primaryKey: [String] = [], dbTypes: [String] = [],
                exportMode: ExportMode? = nil, flavor: FileFlavor = .relational) {
        self.columns = columns
        self.primaryKey = primaryKey
        self.dbTypes = dbTypes
        self.exportMode = exportMode
        self.flavor = flavor
    }

    /// Index of a column by name.
    package func index(of column: String) -> Int? { columns.firstIndex(of: column) }
}

/// A column type from `#dbTypes:`, reduced to what matters for storage.
package enum EPFColumnType: Sendable, Equatable, CustomStringConvertible {
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
    package init(declared: String) {
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

    package var description: String {
        switch self {
        case .integer: return "integer"
        case .boolean: return "boolean"
        case .decimal: return "decimal"
        case .text: return "text"
        case .datetime: return "datetime"
        }
    }
}
