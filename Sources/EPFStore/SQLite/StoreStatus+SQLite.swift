import EPFImport
import EPFSchema
import EPFSQLite
import Foundation

extension StoreStatus {
    /// Reads the status through any connection (read-only is enough). Tables without bookkeeping rows (made by an
    /// older version or by hand) are counted directly.
    package static func read(_ connection: SQLiteConnection, databasePath: String, lastImports: Int = 10) throws
        -> StoreStatus {
        var size: Int64 = 0
        for suffix in ["", "-wal"] {
            if let attributes = try? FileManager.default.attributesOfItem(atPath: databasePath + suffix),
               let bytes = attributes[.size] as? NSNumber {
                size += bytes.int64Value
            }
        }
        var tables: [Table] = []
        let hasBookkeeping = try connection.tableExists("epf_tables")
        var known = Set<String>()
        if hasBookkeeping {
            let statement = try connection.prepare(
                "SELECT table_name, rows, export_date, mode, updated FROM epf_tables ORDER BY table_name")
            while try statement.step() {
                let name = statement.text(at: 0) ?? ""
                guard try connection.tableExists(name) else { continue }
                known.insert(name)
                tables.append(Table(name: name, rows: statement.int64(at: 1) ?? 0, exportDate: statement.int64(at: 2),
                                    mode: statement.text(at: 3), updated: statement.text(at: 4)))
            }
        }
        let others = try connection.query("""
            SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'epf\\_%' ESCAPE '\\'
            AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name
            """)
        for row in others {
            guard case .text(let name) = row.first, !known.contains(name) else { continue }
            let count = try connection.scalar("SELECT count(*) FROM \(SQLiteConnection.quote(name))")
            var rows: Int64 = 0
            if case .integer(let value) = count { rows = value }
            tables.append(Table(name: name, rows: rows, exportDate: nil, mode: nil, updated: nil))
        }
        tables.sort { $0.name < $1.name }
        var derived: [Derived] = []
        if try connection.tableExists("epf_derived") {
            let current = try DerivedData.currentStamp(connection)
            for row in try connection.query("SELECT name, stamp, built FROM epf_derived ORDER BY name") {
                guard row.count == 3, case .text(let name) = row[0] else { continue }
                var built: String?
                if case .text(let text) = row[2] { built = text }
                derived.append(Derived(name: name, built: built, current: row[1] == .integer(current)))
            }
        }
        var imports: [Import] = []
        if try connection.tableExists("epf_ledger") {
            // A database made before repairs were counted has no `repaired` column (read-only: not added here).
            let repaired = try StoreDatabase.hasColumn(connection, table: "epf_ledger", column: "repaired")
                ? "repaired" : "0"
            let statement = try connection.prepare("""
                SELECT table_name, location, mode, export_date, rows, rejects, duplicates, finished, outcome, message,
                    \(repaired)
                FROM epf_ledger ORDER BY id DESC LIMIT ?1
                """)
            try statement.bind(.integer(Int64(lastImports)), at: 1)
            while try statement.step() {
                imports.append(Import(table: statement.text(at: 0) ?? "", location: statement.text(at: 1) ?? "",
                                      mode: statement.text(at: 2), exportDate: statement.int64(at: 3),
                                      rows: statement.int64(at: 4) ?? 0, rejects: statement.int64(at: 5) ?? 0,
                                      repaired: statement.int64(at: 10) ?? 0,
                                      duplicates: statement.int64(at: 6) ?? 0, finished: statement.text(at: 7),
                                      outcome: statement.text(at: 8) ?? "", message: statement.text(at: 9)))
            }
        }
        var status = StoreStatus(database: databasePath, sizeBytes: size, tables: tables, lastImports: imports,
                                 derived: derived)
        if try connection.tableExists("epf_settings") {
            let ledger = Ledger(connection: connection)
            status.selection = try ledger.storedSelection()
            let history = HistoryRequest(setting: try ledger.setting(PriceRecording.setting))
            status.priceHistory = history.prices
            status.rankHistory = history.ranks
        }
        if let ranks = try RankHistoryRead(connection) {
            let days = try ranks.recordedDays()
            status.rankDays = days.count
            status.rankNewestDay = days.last
        }
        if let rows = try PriceHistorySequence.rows(connection) {
            // Kept by the loads, without counting the table.
            status.priceChanges = rows
        }
        status.importRunning = ImportLock.isHeld(databasePath: databasePath)
        if try connection.tableExists("epf_ledger") {
            let ledger = Ledger(connection: connection)
            let settings = try connection.tableExists("epf_settings")
            try status.setFulls(try ledger.lastFulls()) { feed, date in
                guard settings else { return nil }
                return RetiredTables.tables(fromSetting: try ledger.setting(RetiredTables.exportTablesSetting(
                    feed: feed, date: date)))
            }
            status.setIncrementalOnly(try connection.query(StoreStatus.incrementalOnlySQL(ledger: "epf_ledger"))
                .compactMap { row in if case .text(let name) = row.first { name } else { nil } })
            let entries = try connection.query(ImportFailures.ledgerSQL(ledger: "epf_ledger")).map(Self.entry)
            try status.settleClaims(ledger: entries) {
                var feeds: [String: String?] = [:]
                for row in try connection.query(ImportFailures.lastFeedsSQL(ledger: "epf_ledger")) where row.count == 2 {
                    guard case .text(let table) = row[0] else { continue }
                    if case .text(let feed) = row[1] { feeds[table] = feed } else { feeds[table] = .some(nil) }
                }
                return feeds
            }
        } else {
            status.dataAsOf = status.exportDate
        }
        return status
    }

    /// A ledger row of `ImportFailures.ledgerSQL`.
    private static func entry(_ row: [SQLValue]) -> ImportFailures.Entry {
        func text(_ index: Int) -> String? {
            guard index < row.count, case .text(let text) = row[index] else { return nil }
            return text
        }
        func integer(_ index: Int) -> Int64? {
            guard index < row.count, case .integer(let value) = row[index] else { return nil }
            return value
        }
        return ImportFailures.Entry(id: integer(0) ?? 0, table: text(1) ?? "", location: text(2) ?? "",
                                    source: text(3) ?? "", feed: text(4), feedDate: text(5), exportDate: integer(6),
                                    mode: text(7), outcome: text(8) ?? "", finished: text(9), message: text(10))
    }
}
