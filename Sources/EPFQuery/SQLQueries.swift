import EPFSQLite

/// Read-only SQL through the session's connection (its authorizer denies everything but reading).
package final class SQLQueries: SessionReading {
    let session: ReadSession

    init(session: ReadSession) { self.session = session }
}

/// Read-only SQL for analysts.
extension SQLQueries {
    /// Runs one read-only SQL statement and returns up to `maxRows` rows.
    ///
    /// Throws `QueryError.refused` for anything that is not a single read-only statement (writes, ATTACH,
    /// `PRAGMA x = y`, VACUUM, several statements): the connection is read-only and the authorizer denies
    /// them, so nothing changes. Throws `QueryError.sqlite` for syntax errors and missing tables.
    package func run(_ text: String, maxRows: Int? = nil) throws -> SQLResult {
        var rows: [[SQLValue]] = []
        var columns: [String] = []
        var truncated = false
        try stream(text, columns: { columns = $0 }, row: { values in
            if let maxRows, rows.count >= maxRows {
                truncated = true
                return false
            }
            rows.append(values)
            return true
        })
        return SQLResult(columns: columns, rows: rows, truncated: truncated)
    }

    /// Runs one read-only SQL statement, handing over the column names, then each row until `row` returns false.
    ///
    /// Same refusals as `run(_:maxRows:)`.
    package func stream(_ text: String, columns: ([String]) throws -> Void,
                          row: ([SQLValue]) throws -> Bool) throws {
        let statement: SQLiteStatement
        do {
            let (first, rest) = try connection.splitFirstStatement(text)
            guard !first.isEmpty else {
                throw QueryError.badArgument(name: "sql", message: "no SQL statement given")
            }
            if !(try connection.splitFirstStatement(rest).first.isEmpty) {
                throw QueryError.refused(sql: text, reason: "only one statement may be run")
            }
            statement = try connection.prepare(first)
        } catch let error as SQLiteError {
            throw Self.sqlError(error, sql: text)
        }
        guard statement.isReadOnly else { throw QueryError.refused(sql: text, reason: "not a read-only statement") }
        let count = statement.columnCount
        try columns((0..<count).map { statement.columnName(at: $0) })
        do {
            defer { statement.reset() }
            while try statement.step() {
                guard try row((0..<count).map { statement.value(at: $0) }) else { break }
            }
        } catch let error as SQLiteError {
            throw Self.sqlError(error, sql: text)
        }
    }

    static func sqlError(_ error: SQLiteError, sql: String) -> QueryError {
        if error.isReadOnlyViolation {
            let detail = error.message == "not authorized" ? "" : ": \(error.message)"
            return .refused(sql: sql, reason: "writes and schema changes are not allowed\(detail)")
        }
        return .sqlite(error)
    }
}
