import EPFSQLite

/// Data computed from the imported tables (the search index, the query module's lookup documents), rebuilt by the
/// importer after tables changed, and its stamps: the `epf_derived` table (name, stamp, build time).
///
/// Each set's result carries a stamp: the id of the newest applied entry in `epf_ledger` when it was built.
/// Every change of a catalogue table commits a new applied ledger entry in the same transaction, so a stored
/// stamp equal to `DerivedData.currentStamp` proves the derived data was built from exactly the tables readers
/// see; readers use it only then, and otherwise compute from the tables themselves. The store records stamps
/// (EPFStore's `DerivedData.record`).
package enum DerivedData {
    /// The stamp of the tables as they are now: the newest applied `epf_ledger` entry, 0 without any.
    package static func currentStamp(_ connection: SQLiteConnection) throws -> Int64 {
        guard try connection.tableExists("epf_ledger") else { return 0 }
        if case .integer(let id) = try connection.scalar(
            "SELECT max(id) FROM epf_ledger WHERE outcome = 'applied'") {
            return id
        }
        return 0
    }

    /// The stamp recorded for `name`, nil when it was never built (or the bookkeeping table is absent).
    package static func storedStamp(_ connection: SQLiteConnection, name: String) throws -> Int64? {
        guard try connection.tableExists("epf_derived") else { return nil }
        if case .integer(let stamp) = try connection.scalar("SELECT stamp FROM epf_derived WHERE name = ?1",
                                                            [.text(name)]) {
            return stamp
        }
        return nil
    }
}

/// What one import run changed: enough for derived data to be updated in place instead of rebuilt.
package struct DerivedChanges: Sendable {
    /// The stamp before the run applied anything (`DerivedData.currentStamp`).
    package var stampBefore: Int64 = 0
    /// Tables applied by the run; true when one of their loads was a full export (which may change any row).
    package var tables: [String: Bool] = [:]
    /// The `application_id` of every row the run's incrementals wrote.
    package var applicationIds = Set<Int64>()

    /// No changes, stamp 0 (what the importer starts from).
    package init() {}
}
