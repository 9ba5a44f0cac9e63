import EPFSQLite

/// A service that reads through a `ReadSession`: the session's plumbing under the names the queries use.
protocol SessionReading: AnyObject {
    var session: ReadSession { get }
}

extension SessionReading {
    var connection: SQLiteConnection { session.connection }
    var tables: Set<String> { session.tables }
    var documentsCurrent: Bool { session.documentsCurrent }

    @inline(__always)
    func reading<T>(_ body: () throws -> T) throws -> T { try session.reading(body) }

    @inline(__always)
    func cachedStatement(_ sql: String) throws -> CachedStatement { try session.cachedStatement(sql) }

    @inline(__always)
    func firstRow<T>(_ sql: String, _ bindings: [SQLValue], _ read: (CachedStatement) throws -> T?) throws -> T? {
        try session.firstRow(sql, bindings, read)
    }

    @inline(__always)
    func firstRow<T>(_ sql: String, id: Int64, _ read: (CachedStatement) throws -> T?) throws -> T? {
        try session.firstRow(sql, id: id, read)
    }

    @inline(__always)
    func forEachRow(_ sql: String, _ bindings: [SQLValue], _ body: (CachedStatement) throws -> Bool) throws {
        try session.forEachRow(sql, bindings, body)
    }

    func smallTables() throws -> ReadSession.SmallTables { try session.smallTables() }
    func storefrontID(country: String) throws -> Int64? { try session.storefrontID(country: country) }
    func normalizedCountry(_ country: String?) throws -> String? { try session.normalizedCountry(country) }
    func normalizedLanguage(_ language: String?) throws -> String? { try session.normalizedLanguage(language) }
}

