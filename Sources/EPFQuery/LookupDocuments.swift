import EPFStore

/// Every app's default Lookup object (no country, no language), serialized once at import time.
///
/// A default app lookup joins seven tables (app, price, developer, genres, devices, languages) and builds about
/// thirty fields; on a catalogue of a million apps the pages it needs are spread over gigabytes, so each lookup
/// costs tens of microseconds. The documents table turns it into one read by primary key, which is what lets
/// `epf serve` answer random app ids at network speed. The documents are made by `QueryEngine` itself from the
/// tables (so they are byte for byte what a lookup from the tables returns) and carry the stamp of the tables
/// they were made from (`DerivedData`); the engine uses them only while that stamp is current, so between a
/// table change and the end of the rebuild lookups simply read the tables.
///
/// Cost: about 2.7 KB per app on disk (2.7 GB for a million apps) and the rebuild after each import that
/// changes tables (`epf import --no-documents` skips it; lookups then always read the tables).
public struct LookupDocuments: DerivedDataBuilder {
    /// The table: `application_id INTEGER PRIMARY KEY, body BLOB` (UTF-8 JSON).
    public static let table = "epf_lookup_documents"
    /// The name of its stamp in `epf_derived`.
    public static let name = "lookup_documents"
    /// Apps read per snapshot and written per transaction while rebuilding.
    static let batchSize = 2_000

    public var name: String { Self.name }

    public init() {}

    public func rebuild(databasePath: String, connection: SQLiteConnection, stamp: Int64,
                       report: (_ done: Int, _ total: Int) -> Void) throws -> Int {
        let staging = SQLiteConnection.quote(Self.table + "_new")
        let table = SQLiteConnection.quote(Self.table)
        try connection.execute("DROP TABLE IF EXISTS \(staging)")
        guard try connection.tableExists("application") else {
            try connection.transaction {
                try connection.execute("DROP TABLE IF EXISTS \(table)")
                try DerivedData.record(connection, name: Self.name, stamp: stamp)
            }
            return 0
        }
        try connection.execute("CREATE TABLE \(staging) (application_id INTEGER PRIMARY KEY, body BLOB NOT NULL)")
        var total = 0
        if case .integer(let count) = try connection.scalar("SELECT count(*) FROM application") { total = Int(count) }
        // Reads and writes alternate (a batch read in one snapshot, then written in one transaction), so the
        // reader never holds a snapshot while the writer commits.
        let engine = try QueryEngine(databasePath: databasePath, useLookupDocuments: false)
        let insert = try connection.prepare("INSERT INTO \(staging) (application_id, body) VALUES (?1, ?2)")
        var last = Int64.min
        var done = 0
        report(0, total)
        while true {
            let batch = try engine.documentBatch(after: last, limit: Self.batchSize)
            guard let final = batch.last else { break }
            try connection.transaction {
                for document in batch {
                    try insert.bind([.integer(document.id), .blob(document.body)])
                    _ = try insert.step()
                    insert.reset()
                }
            }
            last = final.id
            done += batch.count
            report(done, max(total, done))
        }
        try connection.transaction {
            try connection.execute("DROP TABLE IF EXISTS \(table)")
            try connection.execute("ALTER TABLE \(staging) RENAME TO \(table)")
            try DerivedData.record(connection, name: Self.name, stamp: stamp)
        }
        return done
    }
}
