import EPFFormat
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

    /// The storefront of a chart's `country` (an ISO code) and the code as answers spell it: the storefront
    /// table's, else Apple's list (a database of popularity tables alone has no storefront table). Throws
    /// `badArgument` (`country`) for an unknown one, or one the database does not keep (`requireKept`).
    func chartStorefront(_ country: String) throws -> (code: String, id: Int64) {
        var found: (code: String, id: Int64)?
        if let code = try normalizedCountry(country), let id = try storefrontID(country: code) {
            found = (code, id)
        } else if let id = AppleStorefronts.id(forCountryCode: country),
                  let entry = AppleStorefronts.entry(id: id) {
            found = (entry.linkCode, Int64(id))
        }
        guard let found else {
            throw QueryError.badArgument(name: "country", message: "unknown storefront '\(country.prefix(40))'")
        }
        try requireKept(storefront: found.id, country: country)
        return found
    }

    /// Throws `ChartUnavailable` when chart table `table` has no `export_date` column (a file whose header lacked
    /// it was imported): its rows have no day to answer with.
    func requireExportDate(in table: String) throws {
        guard try smallTables().chartTablesWithoutExportDate.contains(table) else { return }
        throw ChartUnavailable(description: "\(table) has no export_date column (the header of the file imported "
                               + "lacked it), so its ranks have no day: import a popularity file that has it")
    }

    /// Throws `badArgument` (`country`) when the database keeps other storefronts only (`--storefronts`): its
    /// charts and ranks there were left out at import, not empty.
    func requireKept(storefront: Int64, country: String) throws {
        guard let kept = try smallTables().keptStorefronts, !kept.contains(storefront) else { return }
        let byID = Dictionary(try smallTables().storefrontByCountry.map { ($0.value, $0.key) },
                              uniquingKeysWith: { first, _ in first })
        let names = kept.sorted().map { id in
            byID[id] ?? AppleStorefronts.entry(id: Int(id)).map(\.linkCode) ?? String(id)
        }.joined(separator: ",")
        throw QueryError.badArgument(name: "country", message: "storefront '\(country.prefix(40))' is not kept in "
                                     + "this database: it was imported with --storefronts \(names)")
    }
}

