import EPFFormat
import EPFSQLite

/// Converts a database made before prices were numbers: its catalogue tables' DECIMAL columns (every price) were
/// declared TEXT, so SQL compared them as text (`max(retail_price)` was `99.990`, `retail_price = 0` never held).
/// Each such table is rebuilt with those columns REAL (`ColumnSpec.sqliteType`), the values converted as SQLite
/// converts them (`0.990` -> 0.99) and the rows, rowids and indexes kept.
///
/// Each table is converted in a transaction of its own, so the conversion is atomic per table and resumable: an
/// import stopped part-way leaves every table either as it was or converted, and the next import converts the
/// rest. A table a database holds but the catalogue does not know keeps its columns until a full import of it.
enum NumericPrices {
    /// A catalogue table with DECIMAL columns declared TEXT, and those columns.
    struct TextTable: Equatable {
        let table: String
        let columns: [String]
    }

    /// The catalogue tables of the database whose DECIMAL columns are still declared TEXT.
    static func textTables(_ connection: SQLiteConnection) throws -> [TextTable] {
        var found: [TextTable] = []
        let tables = try connection.query("SELECT name FROM main.sqlite_schema WHERE type = 'table' ORDER BY name")
        for row in tables {
            guard case .text(let name) = row.first, let known = EPFCatalogue.table(named: name) else { continue }
            let decimals = Set(zip(known.columns, known.types).compactMap { column, type in
                EPFColumnType(declared: type) == .decimal ? column : nil
            })
            guard !decimals.isEmpty else { continue }
            let textColumns = try connection.query("SELECT name FROM pragma_table_info(?1) WHERE upper(type) = 'TEXT'",
                                                   [.text(name)]).compactMap { row -> String? in
                guard case .text(let column) = row.first, decimals.contains(column) else { return nil }
                return column
            }
            if !textColumns.isEmpty { found.append(TextTable(table: name, columns: textColumns)) }
        }
        return found
    }

    /// Converts every table `textTables` lists, one transaction each; returns their names. Call outside a
    /// transaction. Throws `SQLiteError` (the table being converted is left as it was).
    @discardableResult
    static func convert(_ connection: SQLiteConnection) throws -> [String] {
        let tables = try textTables(connection)
        for table in tables {
            try connection.execute("BEGIN IMMEDIATE")
            do {
                try rebuild(connection, table)
                try connection.execute("COMMIT")
            } catch {
                try? connection.execute("ROLLBACK")
                throw error
            }
        }
        return tables.map(\.table)
    }

    /// Rebuilds one table with its `columns` REAL: a copy in rowid order (REAL affinity turns each decimal text
    /// into SQLite's double of it), then the old table dropped, the copy renamed and the indexes made again.
    private static func rebuild(_ connection: SQLiteConnection, _ table: TextTable) throws {
        let quote = SQLiteConnection.quote
        let copy = table.table + "__epf_numeric"
        let info = try connection.query("SELECT name, type, pk FROM pragma_table_info(?1) ORDER BY cid",
                                        [.text(table.table)])
        let keyCount = info.filter { row in if case .integer(let pk) = row[2] { return pk > 0 } else { return false } }
            .count
        var definitions: [String] = []
        for row in info {
            guard case .text(let name) = row[0] else { continue }
            let declared = if case .text(let type) = row[1] { type } else { "" }
            var definition = quote(name)
            let type = table.columns.contains(name) ? "REAL" : declared
            if !type.isEmpty { definition += " " + type }
            // Only the one-integer keys the store makes are in the table's definition (as the rowid); the others
            // are unique indexes, made again below.
            if case .integer(let pk) = row[2], pk > 0, keyCount == 1, declared.uppercased() == "INTEGER" {
                definition += " PRIMARY KEY"
            }
            definitions.append(definition)
        }
        let indexes = try connection.query(
            "SELECT sql FROM main.sqlite_schema WHERE type = 'index' AND tbl_name = ?1 AND sql IS NOT NULL",
            [.text(table.table)]).compactMap { row -> String? in
            if case .text(let sql) = row.first { return sql }
            return nil
        }
        try connection.execute("""
            DROP TABLE IF EXISTS main.\(quote(copy));
            CREATE TABLE main.\(quote(copy)) (\(definitions.joined(separator: ", ")));
            INSERT INTO main.\(quote(copy)) SELECT * FROM main.\(quote(table.table)) ORDER BY rowid;
            DROP TABLE main.\(quote(table.table));
            ALTER TABLE main.\(quote(copy)) RENAME TO \(quote(table.table));
            """)
        for index in indexes { try connection.execute(index) }
    }
}
