import Dispatch
import EPFSQLite
import EPFStore
import Foundation
import JSONText

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
/// Cost: about 2.7 KB per app on disk (2.9 GB for a million apps). After an import, only what its changes touch is
/// rebuilt: nothing when no table the documents show changed, the apps in the rows of incrementals of per-app
/// tables (prices, details, genres, devices, developer), and every document (on every core) after a full export or
/// a change to shared tables such as genre names (`epf import --no-documents` skips them; lookups then always read
/// the tables).
public struct LookupDocuments: DerivedDataBuilder {
    /// The table: `application_id INTEGER PRIMARY KEY, body BLOB` (UTF-8 JSON). Its name carries the documents'
    /// format, so documents an older epf stored (`olderTables`) are never read as current: lookups read the tables
    /// until the next import that applies anything rebuilds every document.
    public static let table = "epf_lookup_documents_v2"
    /// Document tables of older formats (v1: without screenshots, release notes, censored names and Apple's artwork
    /// sizes), dropped by the next rebuild.
    static let olderTables = ["epf_lookup_documents"]
    /// The name of its stamp in `epf_derived`.
    public static let name = "lookup_documents"
    /// Apps built per snapshot and written per transaction while rebuilding.
    static let batchSize = 1_000

    public var name: String { Self.name }

    /// Threads building documents (each with its own read-only connection); the caller's thread writes them.
    public var threads: Int

    /// A builder using `threads` builder threads (default: one per core).
    public init(threads: Int = ProcessInfo.processInfo.activeProcessorCount) {
        self.threads = max(1, threads)
    }

    /// Tables whose rows an app's document shows; a change to any other table leaves the documents as they are.
    static let shownTables: Set<String> = [
        "application", "application_price", "application_detail", "application_device_type", "genre_application",
        "artist_application", "artist", "genre", "device_type", "storefront",
    ]
    /// Tables keyed by app: an incremental of these changes only the documents of the apps in its rows.
    static let perAppTables: Set<String> = [
        "application", "application_price", "application_detail", "application_device_type", "genre_application",
        "artist_application",
    ]

    /// How much of the documents an import's changes require rebuilding.
    enum Scope: Equatable {
        /// Nothing they show changed: only the stamp is renewed.
        case none
        /// Incrementals of per-app tables: the documents of these apps.
        case apps([Int64])
        /// Everything (full exports, shared tables such as genre names, or documents that were not current).
        case all
    }

    static func scope(_ changes: DerivedChanges, storedStamp: Int64?, documentsExist: Bool) -> Scope {
        guard documentsExist, storedStamp == changes.stampBefore else { return .all }
        let shown = changes.tables.filter { shownTables.contains($0.key) }
        if shown.isEmpty { return .none }
        if shown.allSatisfy({ perAppTables.contains($0.key) && !$0.value }) {
            return .apps(changes.applicationIds.sorted())
        }
        return .all
    }

    public func rebuild(databasePath: String, connection: SQLiteConnection, stamp: Int64, changes: DerivedChanges,
                       report: (_ done: Int, _ total: Int) -> Void) throws -> Int {
        let staging = SQLiteConnection.quote(Self.table + "_new")
        let table = SQLiteConnection.quote(Self.table)
        try connection.execute("DROP TABLE IF EXISTS \(staging)")
        for older in Self.olderTables {
            try connection.execute("DROP TABLE IF EXISTS \(SQLiteConnection.quote(older))")
        }
        // No apps to document without an application table keyed by application_id (a hand-made or hostile one).
        let keyed = try connection.tableExists("application") && connection.query(
            "SELECT 1 FROM pragma_table_info('application') WHERE lower(name) = 'application_id'").count == 1
        guard keyed else {
            try connection.transaction {
                try connection.execute("DROP TABLE IF EXISTS \(table)")
                try DerivedData.record(connection, name: Self.name, stamp: stamp)
            }
            return 0
        }
        let scope = Self.scope(changes, storedStamp: try DerivedData.storedStamp(connection, name: Self.name),
                               documentsExist: try connection.tableExists(Self.table))
        switch scope {
        case .none:
            try connection.transaction { try DerivedData.record(connection, name: Self.name, stamp: stamp) }
            return 0
        case .apps(let ids):
            // In place: readers ignore the documents while their stamp is old, and see the updated ones with the
            // new stamp in the last transaction.
            let done = try write(ids, databasePath: databasePath, into: table, replacing: true,
                                 connection: connection, report: report)
            try connection.transaction { try DerivedData.record(connection, name: Self.name, stamp: stamp) }
            return done
        case .all:
            try connection.execute("""
                CREATE TABLE \(staging) (application_id INTEGER PRIMARY KEY, body BLOB NOT NULL)
                """)
            var ids: [Int64] = []
            let select = try connection.prepare("SELECT application_id FROM application ORDER BY application_id")
            while try select.step() {
                if let id = select.int64(at: 0) { ids.append(id) }
            }
            let done = try write(ids, databasePath: databasePath, into: staging, replacing: false,
                                 connection: connection, report: report)
            try connection.transaction {
                try connection.execute("DROP TABLE IF EXISTS \(table)")
                try connection.execute("ALTER TABLE \(staging) RENAME TO \(table)")
                try DerivedData.record(connection, name: Self.name, stamp: stamp)
            }
            return done
        }
    }

    /// Builds the documents of `ids` (ascending) on the builder threads and writes them into `target` in id
    /// order, one transaction per batch; with `replacing`, ids that are no app (any more) lose their document.
    /// Returns the number of documents written.
    private func write(_ ids: [Int64], databasePath: String, into target: String, replacing: Bool,
                       connection: SQLiteConnection, report: (_ done: Int, _ total: Int) -> Void) throws -> Int {
        let batches = stride(from: 0, to: ids.count, by: Self.batchSize).map {
            Array(ids[$0..<min($0 + Self.batchSize, ids.count)])
        }
        let pipeline = DocumentPipeline(batches: batches, window: threads * 2)
        let builders = DispatchGroup()
        let workers = min(threads, max(1, batches.count))
        DispatchQueue.global().async(group: builders) {
            DispatchQueue.concurrentPerform(iterations: workers) { _ in
                pipeline.build(databasePath: databasePath)
            }
        }
        defer {
            pipeline.cancel()
            builders.wait()
        }
        let insert = try connection.prepare("INSERT \(replacing ? "OR REPLACE " : "")INTO \(target) "
                                            + "(application_id, body) VALUES (?1, ?2)")
        let delete = try connection.prepare("DELETE FROM \(target) WHERE application_id = ?1")
        var done = 0
        report(0, ids.count)
        for index in batches.indices {
            let documents = try pipeline.result(index)
            try connection.transaction {
                for document in documents {
                    try insert.bind(document.id, at: 1)
                    try document.body.withUnsafeBytes { body in
                        try insert.bindBlobNoCopy(body, at: 2)
                        try insert.runOnce()
                    }
                }
                if replacing && documents.count < batches[index].count {
                    let built = Set(documents.map(\.id))
                    for id in batches[index] where !built.contains(id) {
                        defer { delete.reset() }
                        try delete.bind(id, at: 1)
                        _ = try delete.step()
                    }
                }
            }
            done += documents.count
            report(min(ids.count, (index + 1) * Self.batchSize), ids.count)
        }
        return done
    }
}

/// Batches of app ids handed to builder threads, and their documents handed back to the writer in order.
/// At most `window` batches are built ahead of the writer, so memory stays bounded.
private final class DocumentPipeline: @unchecked Sendable {
    typealias Documents = [(id: Int64, body: [UInt8])]

    private let condition = NSCondition()
    private let batches: [[Int64]]
    private let window: Int
    private var next = 0
    private var written = 0
    private var results: [Int: Result<Documents, Error>] = [:]
    private var cancelled = false

    init(batches: [[Int64]], window: Int) {
        self.batches = batches
        self.window = max(1, window)
    }

    /// A builder thread: its own engine, batches until none is left or the writer gave up.
    func build(databasePath: String) {
        let engine: QueryEngine
        do {
            // pread, not the map: a builder touches pages all over the file once, and mapped pages would count
            // in the import's resident memory (a daily's peak went from 157 MB to 539 MB with the map).
            engine = try QueryEngine(databasePath: databasePath, useLookupDocuments: false, mappedReads: false)
        } catch {
            // Report the failure through the batch the writer waits for next.
            guard let index = take() else { return }
            store(index, .failure(error))
            return
        }
        while let index = take() {
            store(index, Result { try engine.lookups.documents(for: batches[index]) })
        }
    }

    /// The next batch to build, waiting while the writer is `window` batches behind; nil when done.
    private func take() -> Int? {
        condition.lock()
        defer { condition.unlock() }
        while !cancelled && next < batches.count && next - written >= window { condition.wait() }
        guard !cancelled, next < batches.count else { return nil }
        next += 1
        return next - 1
    }

    private func store(_ index: Int, _ result: Result<Documents, Error>) {
        condition.lock()
        results[index] = result
        condition.broadcast()
        condition.unlock()
    }

    /// The documents of batch `index`, waiting until a builder has made them; rethrows a builder's error.
    func result(_ index: Int) throws -> Documents {
        condition.lock()
        defer { condition.unlock() }
        while results[index] == nil && !cancelled { condition.wait() }
        guard let result = results.removeValue(forKey: index) else { throw CancellationError() }
        written = index + 1
        condition.broadcast()
        return try result.get()
    }

    /// Stops handing out batches (the writer finished or failed).
    func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }
}
