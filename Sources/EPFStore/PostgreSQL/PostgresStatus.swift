import EPFImport
import EPFPostgres
import EPFSchema
import EPFStore
import Foundation

extension StoreStatus {
    /// Reads the status of a PostgreSQL schema: the same report as `read(_:databasePath:lastImports:)` gives for
    /// SQLite (so `epf status --json` has the same keys); the size is that of the schema's tables with their
    /// indexes and TOAST data, and `database` is the URL without password plus the schema.
    package static func read(_ connection: PostgresConnection, target: PostgresTarget, lastImports: Int = 10) throws
        -> StoreStatus {
        let size = try connection.scalar("""
            SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c
            JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind IN ('r', 'm')
            """, [target.schema]).flatMap { Int64($0) } ?? 0
        var tables: [Table] = []
        var known = Set<String>()
        if try target.tableExists(connection, "epf_tables") {
            for row in try connection.query("""
                SELECT table_name, rows, export_date, mode, updated FROM \(target.qualified("epf_tables"))
                WHERE to_regclass(quote_ident($1) || '.' || quote_ident(table_name)) IS NOT NULL ORDER BY table_name
                """, [target.schema]) where row.count == 5 {
                let name = row[0] ?? ""
                known.insert(name)
                tables.append(Table(name: name, rows: row[1].flatMap { Int64($0) } ?? 0,
                                    exportDate: row[2].flatMap { Int64($0) }, mode: row[3], updated: row[4]))
            }
        }
        let others = try connection.query("""
            SELECT tablename FROM pg_tables WHERE schemaname = $1 AND tablename NOT LIKE 'epf\\_%' ORDER BY tablename
            """, [target.schema])
        for row in others {
            guard let name = row.first ?? nil, !known.contains(name) else { continue }
            let rows = try connection.scalar("SELECT count(*) FROM \(target.qualified(name))").flatMap { Int64($0) }
            tables.append(Table(name: name, rows: rows ?? 0, exportDate: nil, mode: nil, updated: nil))
        }
        tables.sort { $0.name < $1.name }
        var imports: [Import] = []
        if try target.tableExists(connection, "epf_ledger") {
            let rows = try connection.query("""
                SELECT table_name, location, mode, export_date, rows, rejects, duplicates, finished, outcome, message,
                    repaired
                FROM \(target.qualified("epf_ledger")) ORDER BY id DESC LIMIT $1
                """, [String(lastImports)])
            for row in rows where row.count == 11 {
                imports.append(Import(table: row[0] ?? "", location: row[1] ?? "", mode: row[2],
                                      exportDate: row[3].flatMap { Int64($0) }, rows: row[4].flatMap { Int64($0) } ?? 0,
                                      rejects: row[5].flatMap { Int64($0) } ?? 0,
                                      repaired: row[10].flatMap { Int64($0) } ?? 0,
                                      duplicates: row[6].flatMap { Int64($0) } ?? 0, finished: row[7],
                                      outcome: row[8] ?? "", message: row[9]))
            }
        }
        var status = StoreStatus(database: target.display, sizeBytes: size, tables: tables, lastImports: imports,
                                 derived: [])
        if try target.tableExists(connection, "epf_settings") {
            let ledger = PostgresLedger(connection: connection, target: target)
            status.selection = try ledger.storedSelection()
            let history = HistoryRequest(setting: try ledger.setting(PriceRecording.setting))
            status.priceHistory = history.prices
            status.rankHistory = history.ranks
        }
        if try target.tableExists(connection, RankHistoryRead.daysTable) {
            let row = try connection.query("SELECT count(DISTINCT export_date), max(export_date) FROM "
                                           + target.qualified(RankHistoryRead.daysTable)).first
            status.rankDays = row?.first.flatMap { $0.flatMap { Int($0) } } ?? 0
            status.rankNewestDay = row.flatMap { $0.count > 1 ? $0[1].flatMap { Int64($0) } : nil }
        }
        if try target.tableExists(connection, PriceHistory.table) {
            status.priceChanges = try connection.scalar("SELECT count(*) FROM \(target.qualified(PriceHistory.table))")
                .flatMap { Int64($0) } ?? 0
        }
        if try target.tableExists(connection, "epf_ledger") {
            status.importRunning = try target.importLockHeld(connection)
            let bookkeeping = PostgresLedger(connection: connection, target: target)
            let settings = try target.tableExists(connection, "epf_settings")
            try status.setFulls(try bookkeeping.lastFulls()) { feed, date in
                guard settings else { return nil }
                return RetiredTables.tables(fromSetting: try bookkeeping.setting(RetiredTables.exportTablesSetting(
                    feed: feed, date: date)))
            }
            let ledger = target.qualified("epf_ledger")
            status.setIncrementalOnly(try connection.query(StoreStatus.incrementalOnlySQL(ledger: ledger))
                .compactMap { $0.first ?? nil })
            let entries = try connection.query(ImportFailures.ledgerSQL(ledger: ledger)).map { row in
                ImportFailures.Entry(id: row[0].flatMap { Int64($0) } ?? 0, table: row[1] ?? "", location: row[2] ?? "",
                                     source: row[3] ?? "", feed: row[4], feedDate: row[5],
                                     exportDate: row[6].flatMap { Int64($0) }, mode: row[7], outcome: row[8] ?? "",
                                     finished: row[9], message: row[10])
            }
            try status.settleClaims(ledger: entries) {
                var feeds: [String: String?] = [:]
                for row in try connection.query(ImportFailures.lastFeedsSQL(ledger: ledger)) where row.count == 2 {
                    if let table = row[0] { feeds[table] = row[1] }
                }
                return feeds
            }
        } else {
            status.dataAsOf = status.exportDate
        }
        return status
    }
}
