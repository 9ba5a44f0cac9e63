#if canImport(Glibc)
import EPFSQLite
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import EPFSchema
import JSONText

/// One read session over an imported EPF database: the connection, the snapshot and the statement cache that
/// the query services (`LookupQueries`, `SearchQueries`, `ChangeQueries`, `CatalogueQueries`, `AppleQueries`,
/// `SQLQueries`) share; `QueryEngine` opens one and holds them.
///
/// Holds one read-only SQLite connection (opened `SQLITE_OPEN_READONLY` with an authorizer that denies
/// everything but reading) and a cache of prepared statements. Not `Sendable`: create one engine per
/// thread. Each public call runs in one read transaction, so it sees one consistent snapshot; small
/// tables (genres, storefronts, device and media types) are cached and reloaded when another
/// connection commits (`PRAGMA data_version`).
package final class ReadSession {
    /// The database path the engine reads.
    package let databasePath: String
    let connection: SQLiteConnection
    /// Prepared statements by SQL text, kept for the engine's life (see `cachedStatement`).
    var statements: [String: CachedStatement] = [:]
    var tables: Set<String> = []
    var dataVersion: Int64?
    var cache = SmallTables()
    var exportDateCache: Int64??
    var transaction: TransactionStatements?
    /// True while `reading` runs its body: nested calls join the open transaction.
    var inTransaction = false
    /// Whether to read lookup documents at all, and whether the stored ones are those of the current tables
    /// (checked whenever the data version changes).
    private let useLookupDocuments: Bool
    var documentsCurrent = false
    var rankFunctionRegistered = false
    /// Counts schema changes seen (tables added or dropped by an import): services drop statements they keep
    /// for longer than a call when it moves.
    private(set) var schemaGeneration = 0

    /// Opens the database read-only. With `useLookupDocuments` (the default) default app lookups are answered
    /// from the lookup documents the importer stores (see `LookupDocuments`) whenever they are those of the
    /// current tables. With `mappedReads` (the default) pages are read from a map of the whole file, the fastest
    /// for a long-lived server; without, through `pread` and a page cache of its own (32 MB), so that a
    /// short-lived reader inside an import (the document builders) does not add every page it touched to the
    /// process's resident memory.
    ///
    /// Throws `QueryError.databaseMissing` when no file is at the path, `QueryError.databaseEmpty` when it
    /// holds none of the EPF tables, and `QueryError.sqlite` when SQLite cannot read it.
    ///
    /// `workload` sizes SQLite's page cache: `.lookups` (the default) for many point reads, `.scans` for ad-hoc
    /// SQL (`epf sql`).
    package init(databasePath: String, useLookupDocuments: Bool = true, mappedReads: Bool = true,
                workload: ReadWorkload = .lookups) throws {
        self.databasePath = databasePath
        self.useLookupDocuments = useLookupDocuments
        var info = stat()
        guard stat(databasePath, &info) == 0 else { throw QueryError.databaseMissing(path: databasePath) }
        guard info.st_size > 0 else { throw QueryError.databaseEmpty(path: databasePath) }
        // SQLite's memory statistics take a global mutex on every allocation (about 5% of a lookup); nothing
        // reads them. Takes effect only when this is the process's first connection.
        SQLiteConnection.disableMemoryStatistics()
        do {
            // Pages are read from one map of the whole file (SQLite's own map stops at 2 GiB in Debian's build).
            connection = try SQLiteConnection(path: databasePath, mode: .readOnly,
                                              vfs: mappedReads ? MappedVFS.registeredName() : nil)
        } catch let error as SQLiteError {
            throw QueryError.sqlite(error)
        }
        do {
            // Set before the authorizer, which denies "PRAGMA x = y": memory-mapped reads avoid a pread per
            // page, and (for lookups) a larger cache keeps the upper levels of the big indexes.
            try connection.execute("PRAGMA mmap_size = \(mappedReads ? "1099511627776" : "0"); "
                                   + "PRAGMA cache_size = \(workload.cacheSize)")
        } catch let error as SQLiteError {
            throw QueryError.sqlite(error)
        }
        connection.denyEverythingButReading()
        try loadTables()
        // EPF catalogue tables, or anything `epf import` loaded (EPF Flat and match tables too, which the
        // importer's bookkeeping tables vouch for).
        let imported = StoreBookkeeping.isImported(tableNames: tables)
            && tables.contains(where: { !$0.hasPrefix("epf_") && !$0.hasPrefix("sqlite_") })
        guard imported || !tables.isDisjoint(with: ReadSession.contentTables) else {
            throw QueryError.databaseEmpty(path: databasePath)
        }
    }

    /// What a session mostly reads, which sets the size of SQLite's page cache.
    package enum ReadWorkload: Sendable {
        /// Many point reads (lookups, search, the server): a 32 MB cache keeps the upper levels of the big indexes.
        case lookups
        /// Ad-hoc SQL that scans, groups and sorts (`epf sql`): SQLite's default cache (2 MB), as the sqlite3 shell
        /// has. SQLite sizes the in-memory runs of a sort (GROUP BY, ORDER BY) by the cache, at least 4 MB; with
        /// 32 MB runs a GROUP BY over millions of rows took twice the CPU time (most likely as a run sorted as a
        /// linked list no longer fits the CPU's caches), while scans and joins did not change (docs/performance.md).
        case scans

        /// The `PRAGMA cache_size` value.
        var cacheSize: Int { self == .lookups ? -32768 : -2000 }
    }

    static let contentTables: Set<String> = [
        "application", "collection", "song", "video", "artist", "genre", "storefront", "application_price",
    ]

    /// Whether the database holds a table (as of the last change seen).
    package func hasTable(_ name: String) -> Bool { tables.contains(name) }

    // MARK: Plumbing

    /// Runs `body` in one read transaction: every engine call made inside sees the same snapshot of the
    /// database, without a transaction of its own. `body` gets SQLite's `PRAGMA data_version` for the snapshot:
    /// it changes whenever another connection (an import) has committed, so a cache of answers keyed by it is
    /// never stale. Throws `QueryError.sqlite` when the transaction cannot start, and whatever `body` throws.
    package func withSnapshot<T>(_ body: (_ dataVersion: Int64) throws -> T) throws -> T {
        try reading { try body(dataVersion ?? 0) }
    }

    /// Runs `body` inside one read transaction, refreshing cached schema and small tables when the file changed.
    /// Inside another `reading` call it just runs `body` in that transaction.
    func reading<T>(_ body: () throws -> T) throws -> T {
        if inTransaction {
            do {
                return try body()
            } catch let error as SQLiteError {
                throw QueryError.sqlite(error)
            }
        }
        let transaction = try transactionStatements()
        do {
            try transaction.begin.step()
            transaction.begin.reset()
        } catch let error as SQLiteError {
            throw QueryError.sqlite(error)
        }
        inTransaction = true
        defer {
            inTransaction = false
            _ = try? transaction.commit.step()
            transaction.commit.reset()
        }
        let current: Int64?
        do {
            defer { transaction.version.reset() }
            current = try transaction.version.step() ? transaction.version.int64(at: 0) : nil
        } catch let error as SQLiteError {
            throw QueryError.sqlite(error)
        }
        if current != dataVersion {
            if dataVersion != nil { try loadTables() }
            dataVersion = current
            cache = SmallTables()
            exportDateCache = nil
            do {
                documentsCurrent = try useLookupDocuments && tables.contains(LookupDocuments.table)
                    && DerivedData.storedStamp(connection, name: LookupDocuments.name)
                        == DerivedData.currentStamp(connection)
            } catch let error as SQLiteError {
                throw QueryError.sqlite(error)
            }
        }
        do {
            return try body()
        } catch let error as SQLiteError {
            throw QueryError.sqlite(error)
        }
    }

    /// `BEGIN`, `COMMIT` and `PRAGMA data_version`, prepared once: every public call runs them.
    func transactionStatements() throws -> TransactionStatements {
        if let transaction { return transaction }
        do {
            let prepared = TransactionStatements(begin: try connection.prepare("BEGIN"),
                                                 commit: try connection.prepare("COMMIT"),
                                                 version: try connection.prepare("PRAGMA data_version"))
            transaction = prepared
            return prepared
        } catch let error as SQLiteError {
            throw QueryError.sqlite(error)
        }
    }

    func loadTables() throws {
        schemaGeneration += 1
        do {
            let rows = try connection.query("SELECT name FROM sqlite_schema WHERE type IN ('table', 'view')")
            tables = Set(rows.compactMap { row in
                if case .text(let name) = row.first { return name }
                return nil
            })
        } catch let error as SQLiteError {
            if error.isNotADatabase {
                throw QueryError.databaseEmpty(path: databasePath)
            }
            throw QueryError.sqlite(error)
        }
    }

    // MARK: Small tables

    struct SmallTables {
        var loaded = false
        var genres: [Int64: (name: String, parent: Int64?)] = [:]
        var deviceTypes: [Int64: String] = [:]
        var mediaTypes: [Int64: String] = [:]
        var storefronts: [Int64: StorefrontRow] = [:]
        var storefrontByCountry: [String: Int64] = [:]
        /// The last country asked of `storefrontID(country:)` and its answer: most requests ask the same one.
        var lastCountry: (country: String, storefront: Int64?)?
        /// The storefronts the database keeps (`--storefronts`), nil for all (`StoreBookkeeping.keptStorefronts`).
        var keptStorefronts: Set<Int64>?
        /// The chart tables present without an `export_date` column (a file whose header lacked it was imported).
        var chartTablesWithoutExportDate: Set<String> = []
    }

    /// The storefront of a country (lowercase alpha-2), nil when the data has none.
    func storefrontID(country: String) throws -> Int64? {
        if cache.loaded, let last = cache.lastCountry, last.country == country { return last.storefront }
        let storefront = try smallTables().storefrontByCountry[country]
        cache.lastCountry = (country, storefront)
        return storefront
    }

    func smallTables() throws -> SmallTables {
        if cache.loaded { return cache }
        var small = SmallTables()
        small.loaded = true
        if tables.contains("genre") {
            for row in try connection.query("SELECT genre_id, parent_id, name FROM genre") {
                guard case .integer(let id) = row[0] else { continue }
                var parent: Int64?
                if case .integer(let number) = row[1] { parent = number }
                small.genres[id] = (Self.text(row[2]) ?? String(id), parent)
            }
        }
        if tables.contains("device_type") {
            for row in try connection.query("SELECT device_type_id, name FROM device_type") {
                guard case .integer(let id) = row[0] else { continue }
                small.deviceTypes[id] = Self.text(row[1]) ?? String(id)
            }
        }
        if tables.contains("media_type") {
            for row in try connection.query("SELECT media_type_id, name FROM media_type") {
                guard case .integer(let id) = row[0] else { continue }
                small.mediaTypes[id] = Self.text(row[1]) ?? String(id)
            }
        }
        if tables.contains("storefront") {
            for row in try connection.query("SELECT storefront_id, country_code, name FROM storefront") {
                guard case .integer(let id) = row[0] else { continue }
                let code = (Self.text(row[1]) ?? "").uppercased()
                let country = CountryCodes.alpha2(fromAlpha3: code)
                small.storefronts[id] = StorefrontRow(storefrontId: id, country: country, countryCode: code,
                                                      name: Self.text(row[2]) ?? code)
                if let country, small.storefrontByCountry[country] == nil { small.storefrontByCountry[country] = id }
            }
        }
        small.keptStorefronts = try StoreBookkeeping.keptStorefronts(connection)
        for chart in RankChart.allCases where tables.contains(chart.table) {
            let found = try connection.scalar("SELECT 1 FROM pragma_table_info(?1) WHERE name = 'export_date'",
                                              [.text(chart.table)])
            if found == nil { small.chartTablesWithoutExportDate.insert(chart.table) }
        }
        cache = small
        return small
    }

    static func text(_ value: SQLValue) -> String? {
        switch value {
        case .text(let text): return text
        case .integer(let number): return String(number)
        default: return nil
        }
    }

    /// "US" -> "us"; nil stays nil; throws `badArgument` for anything not an ISO 3166 alpha-2 (or alpha-3) code.
    func normalizedCountry(_ country: String?) throws -> String? {
        guard let country else { return nil }
        if CountryCodes.isAlpha2(country) { return country.lowercased() }
        if country.utf8.count == 3, let alpha2 = CountryCodes.alpha2(fromAlpha3: country) { return alpha2 }
        throw QueryError.badArgument(name: "country",
                                     message: "'\(country)' is not an ISO 3166 country code (e.g. us, gb, jp)")
    }

    /// "en", "EN", "en-US", "pt_BR" -> lowercase; throws `badArgument` for anything else.
    func normalizedLanguage(_ language: String?) throws -> String? {
        guard let language else { return nil }
        let lower = language.lowercased()
        let valid = (2...12).contains(lower.utf8.count)
            && lower.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D
                || $0 == 0x5F }
        guard valid else {
            throw QueryError.badArgument(name: "lang",
                                         message: "'\(language)' is not a language code (e.g. en, fr, pt-BR)")
        }
        return lower
    }
}


/// The statements around every public call (see `ReadSession.reading`).
struct TransactionStatements {
    let begin: SQLiteStatement
    let commit: SQLiteStatement
    let version: SQLiteStatement
}
