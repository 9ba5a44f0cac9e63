import EPFSQLite

/// Data computed from the imported tables (such as the query module's lookup documents), rebuilt by the
/// importer after tables changed.
///
/// Each builder's result carries a stamp: the id of the newest applied entry in `epf_ledger` when it was built.
/// Every change of a catalogue table commits a new applied ledger entry in the same transaction, so a stored
/// stamp equal to `DerivedData.currentStamp` proves the derived data was built from exactly the tables readers
/// see; readers use it only then, and otherwise compute from the tables themselves.
public protocol DerivedDataBuilder {
    /// The name under which the stamp is kept in `epf_derived`.
    var name: String { get }
    /// Brings the data up to date with the tables now committed in the database at `databasePath`, writing
    /// through `connection` (the importer's, holding the import lock), and records `stamp` with
    /// `DerivedData.record`. `changes` says what this import changed, so a builder whose data was current before
    /// it may update only what those changes touch. `report` receives progress (items done, items in all).
    /// Returns the number of items written. Throws on any SQLite failure; the data keeps its old stamp (so
    /// readers ignore it) until the transaction that records the new one.
    func rebuild(databasePath: String, connection: SQLiteConnection, stamp: Int64, changes: DerivedChanges,
                 report: (_ done: Int, _ total: Int) -> Void) throws -> Int
}

/// What one import run changed: enough for derived data to be updated in place instead of rebuilt.
public struct DerivedChanges: Sendable {
    /// The stamp before the run applied anything (`DerivedData.currentStamp`).
    public var stampBefore: Int64 = 0
    /// Tables applied by the run; true when one of their loads was a full export (which may change any row).
    public var tables: [String: Bool] = [:]
    /// The `application_id` of every row the run's incrementals wrote.
    public var applicationIds = Set<Int64>()

    /// No changes, stamp 0 (what the importer starts from).
    public init() {}
}

/// Bookkeeping of derived data: the `epf_derived` table (name, stamp, build time).
public enum DerivedData {
    /// The stamp of the tables as they are now: the newest applied `epf_ledger` entry, 0 without any.
    public static func currentStamp(_ connection: SQLiteConnection) throws -> Int64 {
        guard try connection.tableExists("epf_ledger") else { return 0 }
        if case .integer(let id) = try connection.scalar(
            "SELECT max(id) FROM epf_ledger WHERE outcome = 'applied'") {
            return id
        }
        return 0
    }

    /// The stamp recorded for `name`, nil when it was never built (or the bookkeeping table is absent).
    public static func storedStamp(_ connection: SQLiteConnection, name: String) throws -> Int64? {
        guard try connection.tableExists("epf_derived") else { return nil }
        if case .integer(let stamp) = try connection.scalar("SELECT stamp FROM epf_derived WHERE name = ?1",
                                                            [.text(name)]) {
            return stamp
        }
        return nil
    }

    /// Records `name`'s stamp, inside the caller's transaction (the one that makes the new data visible).
    public static func record(_ connection: SQLiteConnection, name: String, stamp: Int64) throws {
        try connection.execute("""
            CREATE TABLE IF NOT EXISTS epf_derived (name TEXT PRIMARY KEY, stamp INTEGER NOT NULL, built TEXT)
            """)
        let statement = try connection.prepare("INSERT OR REPLACE INTO epf_derived (name, stamp, built) "
                                               + "VALUES (?1, ?2, ?3)")
        try statement.bind([.text(name), .integer(stamp), .text(StoreDatabase.now())])
        _ = try statement.step()
    }
}
