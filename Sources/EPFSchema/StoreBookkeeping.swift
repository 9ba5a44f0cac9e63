import EPFSQLite

/// What the importer's bookkeeping tables (`epf_tables`, `epf_ledger`, `epf_sources`) say, for the modules that
/// read a database epf built: the query engine, the server, the fetcher. They ask here rather than writing SQL
/// against those tables, so the store can change them without breaking a reader silently.
package enum StoreBookkeeping {
    /// Whether a database's table names include the importer's summary: it was built by `epf import`.
    package static func isImported(tableNames: Set<String>) -> Bool {
        tableNames.contains("epf_tables")
    }

    /// The newest `export_date` (ms since 1970 UTC) of any applied table, from the importer's per-table summary;
    /// nil when the database has no summary or it is empty.
    package static func newestExportDate(_ connection: SQLiteConnection) throws -> Int64? {
        guard try connection.tableExists("epf_tables") else { return nil }
        guard case .integer(let milliseconds)? = try connection.scalar("SELECT max(export_date) FROM epf_tables") else {
            return nil
        }
        return milliseconds
    }

    /// The `epf_settings` row of the storefronts an import keeps (`--storefronts`; absent: all of them), its value
    /// the kept storefront ids, comma-separated.
    package static let keptStorefrontsSetting = "storefronts"

    /// The storefronts the database keeps the price and popularity rows of (`--storefronts`), nil when it keeps all.
    package static func keptStorefronts(_ connection: SQLiteConnection) throws -> Set<Int64>? {
        guard try connection.tableExists("epf_settings"),
              case .text(let value)? = try connection.scalar("SELECT value FROM epf_settings WHERE name = ?1",
                                                             [.text(keptStorefrontsSetting)]) else { return nil }
        let ids = Set(value.split(separator: ",").compactMap { Int64($0) })
        return ids.isEmpty ? nil : ids
    }

    /// Whether a file with this MD5 (a whole input file, or one table file of one) was applied completely.
    package static func appliedFile(md5: String, _ connection: SQLiteConnection) throws -> Bool {
        guard try connection.tableExists("epf_sources"), try connection.tableExists("epf_ledger") else {
            return false
        }
        let value = try connection.scalar("""
            SELECT 1 FROM epf_sources WHERE md5 = ?1 AND outcome = 'applied'
            UNION ALL SELECT 1 FROM epf_ledger WHERE md5 = ?1 AND outcome = 'applied' LIMIT 1
            """, [.text(md5)])
        if case .integer? = value { return true }
        return false
    }

    /// The feed date (`YYYYMMDD`) of the newest full export the database applied, nil when it applied none.
    package static func newestAppliedFull(_ connection: SQLiteConnection) throws -> String? {
        guard try connection.tableExists("epf_ledger") else { return nil }
        guard case .text(let date)? = try connection.scalar(
            "SELECT max(feed_date) FROM epf_ledger WHERE mode = 'FULL' AND outcome = 'applied'") else {
            return nil
        }
        return date
    }
}
