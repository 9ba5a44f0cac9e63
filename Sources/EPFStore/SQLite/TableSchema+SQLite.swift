import EPFImport
import EPFSQLite

extension ColumnSpec {
    /// The SQLite column type: INTEGER for ids, integers and booleans; REAL for DECIMAL (prices compare, sort and
    /// sum as numbers; see `DecimalNumber` and docs/import.md); TEXT for everything else (DATETIME as ISO-8601
    /// text).
    var sqliteType: String {
        switch type {
        case .integer, .boolean: return "INTEGER"
        case .decimal: return "REAL"
        case .text, .datetime: return "TEXT"
        }
    }
}

extension TableSchema {
    /// `CREATE TABLE` as the SQLite store makes the table: every column with its SQLite type, a one-integer key
    /// as the rowid, then `extraColumns` untyped (columns an older file had and this one lacks).
    package func createTableSQL(named name: String? = nil, extraColumns: [String] = []) -> String {
        var definitions: [String] = columns.map { column in
            var text = "\(SQLiteConnection.quote(column.name)) \(column.sqliteType)"
            if hasIntegerRowidKey && column.name == primaryKey[0] { text += " PRIMARY KEY" }
            return text
        }
        definitions += extraColumns.map(SQLiteConnection.quote)
        return "CREATE TABLE \(SQLiteConnection.quote(name ?? self.name)) (\(definitions.joined(separator: ", ")))"
    }

    /// The indexes the SQLite store gives the table `target` (this table or its staging copy), their names
    /// ending in `suffix`: the unique key index when the key is not the rowid, then the secondary indexes.
    package func createIndexSQL(on target: String, suffix: String) -> [String] {
        func list(_ names: [String]) -> String { names.map(SQLiteConnection.quote).joined(separator: ", ") }
        var statements: [String] = []
        if !hasIntegerRowidKey && !primaryKey.isEmpty && primaryKey.allSatisfy({ index(of: $0) != nil }) {
            statements.append("CREATE UNIQUE INDEX \(SQLiteConnection.quote("\(name)__pk__\(suffix)")) ON "
                              + "\(SQLiteConnection.quote(target)) (\(list(primaryKey)))")
        }
        for indexColumns in KnownSchemas.indexes(for: self) {
            let indexName = "\(name)__\(indexColumns.joined(separator: "_"))__\(suffix)"
            statements.append("CREATE INDEX \(SQLiteConnection.quote(indexName)) ON \(SQLiteConnection.quote(target)) "
                              + "(\(list(indexColumns)))")
        }
        return statements
    }
}
