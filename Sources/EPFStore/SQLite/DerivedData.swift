import EPFSchema
import EPFSQLite

extension DerivedData {
    /// Records `name`'s stamp, inside the caller's transaction (the one that makes the new data visible).
    package static func record(_ connection: SQLiteConnection, name: String, stamp: Int64) throws {
        try connection.execute("""
            CREATE TABLE IF NOT EXISTS epf_derived (name TEXT PRIMARY KEY, stamp INTEGER NOT NULL, built TEXT)
            """)
        let statement = try connection.prepare("INSERT OR REPLACE INTO epf_derived (name, stamp, built) "
                                               + "VALUES (?1, ?2, ?3)")
        try statement.bind([.text(name), .integer(stamp), .text(StoreDatabase.now())])
        _ = try statement.step()
    }
}
