import EPFSQLite

/// A prepared statement kept in the engine's statement cache, with its result columns by name.
final class CachedStatement {
    let statement: SQLiteStatement
    let columns: [String: Int32]

    init(_ statement: SQLiteStatement) {
        self.statement = statement
        var columns: [String: Int32] = [:]
        for index in 0..<statement.columnCount {
            let name = statement.columnName(at: index).lowercased()
            if columns[name] == nil { columns[name] = index }
        }
        self.columns = columns
    }

    /// The text of the named result column, nil when it is NULL or the statement has no such column.
    func text(_ name: String) -> String? {
        guard let index = columns[name] else { return nil }
        return statement.text(at: index)
    }

    /// The integer of the named result column (digits stored as text count too), else nil.
    func int(_ name: String) -> Int64? {
        guard let index = columns[name] else { return nil }
        switch statement.value(at: index) {
        case .integer(let number): return number
        case .text(let text): return Int64(text)
        default: return nil
        }
    }
}

extension ReadSession {
    /// The cached statement for `sql`, prepared on first use, with its bindings cleared.
    /// Throws `QueryError.sqlite` when SQLite cannot prepare it.
    func cachedStatement(_ sql: String) throws -> CachedStatement {
        if let cached = statements[sql] {
            cached.statement.clearBindings()
            return cached
        }
        do {
            let cached = CachedStatement(try connection.prepare(sql))
            statements[sql] = cached
            return cached
        } catch let error as SQLiteError {
            throw QueryError.sqlite(error)
        }
    }

    /// Runs the cached statement for `sql` with `bindings` as ?1, ?2, ...: hands its first row to `read`, and
    /// returns nil when there is none. The statement is reset before this returns, whatever happens.
    @inline(__always)
    func firstRow<T>(_ sql: String, _ bindings: [SQLValue],
                     _ read: (CachedStatement) throws -> T?) throws -> T? {
        let cached = try cachedStatement(sql)
        defer { cached.statement.reset() }
        for (index, value) in bindings.enumerated() { try cached.statement.bind(value, at: Int32(index + 1)) }
        guard try cached.statement.step() else { return nil }
        return try read(cached)
    }

    /// `firstRow` with one integer bound to ?1 (an id), without building an array of bindings: the stored
    /// document read is on every lookup's path.
    @inline(__always)
    func firstRow<T>(_ sql: String, id: Int64, _ read: (CachedStatement) throws -> T?) throws -> T? {
        let cached = try cachedStatement(sql)
        defer { cached.statement.reset() }
        try cached.statement.bind(id, at: 1)
        guard try cached.statement.step() else { return nil }
        return try read(cached)
    }

    /// Runs the cached statement for `sql` with `bindings` as ?1, ?2, ..., handing each row to `body` until it
    /// returns false. The statement is reset before this returns, whatever happens.
    func forEachRow(_ sql: String, _ bindings: [SQLValue], _ body: (CachedStatement) throws -> Bool) throws {
        let cached = try cachedStatement(sql)
        defer { cached.statement.reset() }
        for (index, value) in bindings.enumerated() { try cached.statement.bind(value, at: Int32(index + 1)) }
        while try cached.statement.step() {
            guard try body(cached) else { return }
        }
    }
}
