import Dispatch
import EPFConcurrency
import EPFSchema
import EPFSQLite
import Foundation

/// Stores derived documents (`DerivedDataBuilder`, such as the query module's lookup documents) after an import:
/// the documents' table, their stamp, and the threads that make them while this connection writes them.
///
/// After a full export or a change to a table every document shows, all documents are made into a staging table
/// that replaces the old one in one transaction; after incrementals that touch only some ids, those ids'
/// documents are replaced in place. Either way the stamp is recorded in the last transaction, so readers, which
/// use the documents only while their stamp is current, never read half-built ones.
enum DerivedDocuments {
    /// Ids made per batch and written per transaction.
    static let batchSize = 1_000

    /// Brings `builder`'s documents up to date with the tables now committed in the database at `databasePath`,
    /// writing through `connection` (the importer's, holding the import lock), and records `stamp`. `changes`
    /// says what this import changed, so documents that were current before it are updated only where those
    /// changes touch them. `report` receives progress (items done, items in all). Returns the number of documents
    /// written. Throws on any SQLite failure or a failure to make a document; the documents keep their old stamp
    /// (so readers ignore them) until the transaction that records the new one.
    static func rebuild(_ builder: any DerivedDataBuilder, databasePath: String, connection: SQLiteConnection,
                        stamp: Int64, changes: DerivedChanges,
                        report: (_ done: Int, _ total: Int) -> Void) throws -> Int {
        let staging = SQLiteConnection.quote(builder.table + "_new")
        let table = SQLiteConnection.quote(builder.table)
        let key = SQLiteConnection.quote(builder.keyColumn)
        try connection.execute("DROP TABLE IF EXISTS \(staging)")
        for older in builder.olderTables {
            try connection.execute("DROP TABLE IF EXISTS \(SQLiteConnection.quote(older))")
        }
        // Nothing to document without the key table keyed by its key column (a hand-made or hostile one).
        let keyed = try connection.tableExists(builder.keyTable) && connection.query(
            "SELECT 1 FROM pragma_table_info(?1) WHERE lower(name) = ?2",
            [.text(builder.keyTable), .text(builder.keyColumn.lowercased())]).count == 1
        guard keyed else {
            try connection.transaction {
                try connection.execute("DROP TABLE IF EXISTS \(table)")
                try DerivedData.record(connection, name: builder.name, stamp: stamp)
            }
            return 0
        }
        let scope = builder.scope(changes, storedStamp: try DerivedData.storedStamp(connection, name: builder.name),
                                  documentsExist: try connection.tableExists(builder.table))
        switch scope {
        case .none:
            try connection.transaction { try DerivedData.record(connection, name: builder.name, stamp: stamp) }
            return 0
        case .apps(let ids):
            // In place: readers ignore the documents while their stamp is old, and see the updated ones with the
            // new stamp in the last transaction.
            let done = try write(builder, ids, databasePath: databasePath, into: table, replacing: true,
                                 connection: connection, report: report)
            try connection.transaction { try DerivedData.record(connection, name: builder.name, stamp: stamp) }
            return done
        case .all:
            try connection.execute("""
                CREATE TABLE \(staging) (\(key) INTEGER PRIMARY KEY, body BLOB NOT NULL)
                """)
            var ids: [Int64] = []
            let select = try connection.prepare(
                "SELECT \(key) FROM \(SQLiteConnection.quote(builder.keyTable)) ORDER BY \(key)")
            while try select.step() {
                if let id = select.int64(at: 0) { ids.append(id) }
            }
            let done = try write(builder, ids, databasePath: databasePath, into: staging, replacing: false,
                                 connection: connection, report: report)
            try connection.transaction {
                try connection.execute("DROP TABLE IF EXISTS \(table)")
                try connection.execute("ALTER TABLE \(staging) RENAME TO \(table)")
                try DerivedData.record(connection, name: builder.name, stamp: stamp)
            }
            return done
        }
    }

    /// Makes the documents of `ids` (ascending) on the builder's threads and writes them into `target` in id
    /// order, one transaction per batch; with `replacing`, ids that have no document (any more) lose theirs.
    /// Returns the number of documents written.
    private static func write(_ builder: any DerivedDataBuilder, _ ids: [Int64], databasePath: String,
                              into target: String, replacing: Bool, connection: SQLiteConnection,
                              report: (_ done: Int, _ total: Int) -> Void) throws -> Int {
        let batches = stride(from: 0, to: ids.count, by: batchSize).map {
            Array(ids[$0..<min($0 + batchSize, ids.count)])
        }
        let pipeline = DocumentPipeline(batches: batches, window: builder.threads * 2)
        let makers = DispatchGroup()
        let workers = min(max(1, builder.threads), max(1, batches.count))
        DispatchQueue.global().async(group: makers) {
            DispatchQueue.concurrentPerform(iterations: workers) { _ in
                pipeline.build(builder, databasePath: databasePath)
            }
        }
        defer {
            pipeline.cancel()
            makers.wait()
        }
        let key = SQLiteConnection.quote(builder.keyColumn)
        let insert = try connection.prepare("INSERT \(replacing ? "OR REPLACE " : "")INTO \(target) "
                                            + "(\(key), body) VALUES (?1, ?2)")
        let delete = try connection.prepare("DELETE FROM \(target) WHERE \(key) = ?1")
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
            report(min(ids.count, (index + 1) * batchSize), ids.count)
        }
        return done
    }
}

/// Batches of ids handed to maker threads, and their documents handed back to the writer in order.
/// At most `window` batches are made ahead of the writer, so memory stays bounded.
private final class DocumentPipeline: Sendable {
    typealias Documents = [(id: Int64, body: [UInt8])]

    /// What the makers and the writer share: the next batch to hand out, the batches written, the documents made
    /// and not yet written, whether the writer gave up.
    private struct Progress: Sendable {
        var next = 0
        var written = 0
        var results: [Int: Result<Documents, any Error>] = [:]
        var cancelled = false
    }

    private let batches: [[Int64]]
    private let window: Int
    private let progress = Monitor(Progress())

    init(batches: [[Int64]], window: Int) {
        self.batches = batches
        self.window = max(1, window)
    }

    /// A maker thread: its own reader, batches until none is left or the writer gave up.
    func build(_ builder: any DerivedDataBuilder, databasePath: String) {
        let make: ([Int64]) throws -> Documents
        do {
            make = try builder.documentMaker(databasePath: databasePath)
        } catch {
            // Report the failure through the batch the writer waits for next.
            guard let index = take() else { return }
            store(index, .failure(error))
            return
        }
        while let index = take() {
            store(index, Result { try make(batches[index]) })
        }
    }

    /// The next batch to build, waiting while the writer is `window` batches behind; nil when done.
    private func take() -> Int? {
        let count = batches.count, window = window
        return progress.wait(until: { $0.cancelled || $0.next >= count || $0.next - $0.written < window }) { state in
            guard !state.cancelled, state.next < count else { return nil }
            state.next += 1
            return state.next - 1
        }
    }

    private func store(_ index: Int, _ result: Result<Documents, any Error>) {
        progress.withLock { $0.results[index] = result }
    }

    /// The documents of batch `index`, waiting until a maker has made them; rethrows a maker's error.
    func result(_ index: Int) throws -> Documents {
        let result = progress.wait(until: { $0.results[index] != nil || $0.cancelled }) { state in
            let result = state.results.removeValue(forKey: index)
            if result != nil { state.written = index + 1 }
            return result
        }
        guard let result else { throw CancellationError() }
        return try result.get()
    }

    /// Stops handing out batches (the writer finished or failed).
    func cancel() {
        progress.withLock { $0.cancelled = true }
    }
}
