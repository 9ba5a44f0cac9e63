import Dispatch
import EPFStore
import Foundation

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
/// changes tables, on every core (`epf import --no-documents` skips it; lookups then always read the tables).
public struct LookupDocuments: DerivedDataBuilder {
    /// The table: `application_id INTEGER PRIMARY KEY, body BLOB` (UTF-8 JSON).
    public static let table = "epf_lookup_documents"
    /// The name of its stamp in `epf_derived`.
    public static let name = "lookup_documents"
    /// Apps built per snapshot and written per transaction while rebuilding.
    static let batchSize = 1_000

    public var name: String { Self.name }

    /// Threads building documents (each with its own read-only connection); the caller's thread writes them.
    public var threads: Int

    public init(threads: Int = ProcessInfo.processInfo.activeProcessorCount) {
        self.threads = max(1, threads)
    }

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
        var ids: [Int64] = []
        let select = try connection.prepare("SELECT application_id FROM application ORDER BY application_id")
        while try select.step() {
            if let id = select.int64(at: 0) { ids.append(id) }
        }
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
        // Written in id order, one transaction per batch, while the next batches are being built.
        let insert = try connection.prepare("INSERT INTO \(staging) (application_id, body) VALUES (?1, ?2)")
        var done = 0
        report(0, ids.count)
        for index in batches.indices {
            let documents = try pipeline.result(index)
            try connection.transaction {
                for document in documents {
                    try insert.bind(document.id, at: 1)
                    try document.body.withUnsafeBytes { body in
                        defer { insert.reset() }
                        try insert.bindBlobNoCopy(body, at: 2)
                        _ = try insert.step()
                    }
                }
            }
            done += documents.count
            report(done, max(ids.count, done))
        }
        try connection.transaction {
            try connection.execute("DROP TABLE IF EXISTS \(table)")
            try connection.execute("ALTER TABLE \(staging) RENAME TO \(table)")
            try DerivedData.record(connection, name: Self.name, stamp: stamp)
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
            engine = try QueryEngine(databasePath: databasePath, useLookupDocuments: false)
        } catch {
            // Report the failure through the batch the writer waits for next.
            guard let index = take() else { return }
            store(index, .failure(error))
            return
        }
        while let index = take() {
            store(index, Result { try engine.documents(for: batches[index]) })
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
