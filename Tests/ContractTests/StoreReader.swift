import EPFPostgres
import EPFSQLite
import EPFStore
import Foundation

/// Reads a table back from either store as the model's values: one optional string per column, in the model's
/// spelling (integers in decimal, dates ISO 8601 UTC, booleans 0 or 1, prices as written; the comparison reads
/// prices as numbers, `ContractMatrixTests.samePrices`).
protocol StoreReader {
    /// Nil when the table does not exist; the rows in no particular order otherwise. Throws when a value has a type
    /// its column must not hold.
    func rows(of table: TableSpec) throws -> [[String?]]?
    /// The price history (`epf_price_history`) as lines `export_date id storefront change old new currency`,
    /// prices as numbers with three decimals; nil when the table does not exist.
    func priceHistory() throws -> [String]?
}

/// A recorded price as the model writes it: three decimals, `∅` for NULL.
func historyPrice(_ text: String?) -> String {
    guard let text else { return "∅" }
    guard let value = Double(text) else { return "?\(text)" }
    return String(format: "%.3f", value)
}

/// One line of the price history, as both readers and the model spell it.
func historyLine(_ values: [String?]) -> String {
    guard values.count == 7 else { return "\(values)" }
    return [values[0] ?? "∅", values[1] ?? "∅", values[2] ?? "∅", values[3] ?? "∅", historyPrice(values[4]),
            historyPrice(values[5]), values[6] ?? "∅"].joined(separator: " ")
}

private let historyColumns = "export_date, id, storefront_id, change, old_price, new_price, currency"

struct ReadError: Error, CustomStringConvertible {
    let description: String
}

struct SQLiteReader: StoreReader {
    let path: String

    func priceHistory() throws -> [String]? {
        let connection = try SQLiteConnection(path: path, mode: .readOnly)
        guard try connection.tableExists("epf_price_history") else { return nil }
        return try connection.query("SELECT \(historyColumns) FROM epf_price_history").map { row in
            historyLine(row.map { value -> String? in
                switch value {
                case .null: return nil
                case .integer(let number): return "\(number)"
                case .text(let text): return text
                case .real(let number): return "\(number)"
                case .blob: return "blob"
                }
            })
        }
    }

    func rows(of table: TableSpec) throws -> [[String?]]? {
        let connection = try SQLiteConnection(path: path, mode: .readOnly)
        guard try connection.tableExists(table.name) else { return nil }
        let columns = table.columns.map { SQLiteConnection.quote($0.name) }.joined(separator: ", ")
        return try connection.query("SELECT \(columns) FROM \(SQLiteConnection.quote(table.name))").map { row in
            try zip(table.columns, row).map { column, value -> String? in
                let numeric: Bool
                switch column.kind {
                case .exportDate, .id, .integer, .rank, .boolean: numeric = true
                default: numeric = false
                }
                let decimal = column.kind == .decimal
                switch value {
                case .null: return nil
                case .integer(let number) where numeric: return "\(number)"
                // Prices are REAL, so SQL compares them as numbers; written as epf writes them back.
                case .real(let number) where decimal: return DecimalNumber.text(number)
                case .text(let text) where !numeric && !decimal: return text
                default:
                    throw ReadError(description: "\(table.name).\(column.name) holds \(value), not a "
                                    + (numeric ? "integer" : decimal ? "real" : "text"))
                }
            }
        }
    }
}

/// One connection for the reads after one export.
final class PostgresReader: StoreReader {
    let connection: PostgresConnection
    let schema: String

    init(url: String, schema: String) throws {
        connection = try PostgresConnection(url: url)
        self.schema = schema
    }

    func priceHistory() throws -> [String]? {
        guard try connection.query("SELECT to_regclass($1)::text", ["\"\(schema)\".epf_price_history"])
            .first?.first ?? nil != nil else { return nil }
        return try connection.query("SELECT export_date::text, id::text, storefront_id::text, change, old_price, "
                                    + "new_price, currency FROM \"\(schema)\".epf_price_history").map(historyLine)
    }

    func rows(of table: TableSpec) throws -> [[String?]]? {
        guard try connection.query("SELECT to_regclass($1)::text", ["\"\(schema)\".\"\(table.name)\""])
            .first?.first ?? nil != nil else { return nil }
        let columns = table.columns.map { column -> String in
            let name = "\"\(column.name)\""
            switch column.kind {
            case .date: return "to_char(\(name) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
            case .boolean: return "CASE WHEN \(name) THEN '1' WHEN NOT \(name) THEN '0' END"
            default: return "\(name)::text"
            }
        }.joined(separator: ", ")
        return try connection.query("SELECT \(columns) FROM \"\(schema)\".\"\(table.name)\"")
    }
}

extension SQLiteReader {
    /// Reads a database's `epf_settings` as `name=value` lines (none before the database or the table exists).
    static func settings(_ path: String) -> () throws -> [String] {
        {
            guard FileManager.default.fileExists(atPath: path) else { return [] }
            let connection = try SQLiteConnection(path: path, mode: .readOnly)
            guard try connection.tableExists("epf_settings") else { return [] }
            return try connection.query("SELECT name, value FROM epf_settings ORDER BY name").map { row in
                row.map { value in if case .text(let text) = value { text } else { "\(value)" } }
                    .joined(separator: "=")
            }
        }
    }
}

extension PostgresReader {
    /// Reads a schema's `epf_settings` as `name=value` lines (none before the schema or the table exists).
    static func settings(url: String, schema: String) -> () throws -> [String] {
        {
            let connection = try PostgresConnection(url: url)
            guard try connection.query("SELECT to_regclass($1)::text", ["\"\(schema)\".epf_settings"])
                .first?.first ?? nil != nil else { return [] }
            return try connection.query("SELECT name, value FROM \"\(schema)\".epf_settings ORDER BY name")
                .map { row in row.map { $0 ?? "∅" }.joined(separator: "=") }
        }
    }
}
