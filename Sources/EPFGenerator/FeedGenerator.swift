import EPFConcurrency
import EPFFormat
import Foundation

/// One file the generator wrote.
package struct GeneratedFile: Sendable, Codable, Equatable {
    /// Absolute path.
    package var path: String
    /// The feed it belongs to.
    package var feed: FeedName
    /// The table it holds; nil for a whole-feed archive or an `.md5` sidecar.
    package var table: String?
    /// Size on disk in bytes.
    package var bytes: Int64
    /// MD5 of the file (archives only; the sidecar holds the same digest).
    package var md5: String?
}

/// One table the generator wrote, wherever it lives (plain file, `.gz`, or a member of a `.tbz`).
package struct GeneratedTable: Sendable, Codable, Equatable {
    /// The feed it belongs to.
    package var feed: FeedName
    /// Table name.
    package var table: String
    /// Data records written (duplicates and decoys included); what `#recordsWritten` says in a clean feed.
    package var rows: Int
    /// Size of the uncompressed table file in bytes.
    package var bytes: Int64
    /// The file holding it; for archives, the archive.
    package var path: String
    /// The tar member name, when the table sits in an archive.
    package var member: String?
}

/// What `FeedGenerator.write` produced.
package struct GeneratedFeed: Sendable {
    /// The options used.
    package var options: GeneratorOptions
    /// Feed directories (v3, v5) or archives (v3-archive), per feed.
    package var feedPaths: [FeedName: URL] = [:]
    /// Every file written, in order.
    package var files: [GeneratedFile] = []
    /// Every table written, in order.
    package var tables: [GeneratedTable] = []
    /// Injected damage (empty unless `options.dirt`).
    package var dirt: [DirtEntry] = []
    /// Where the dirt manifest was written (`dirt<YYYYMMDD>.json` in the output directory), if any.
    package var manifest: URL?
    /// Wall-clock seconds spent.
    package var seconds: Double = 0

    /// Data records per table name.
    package var rowCounts: [String: Int] {
        Dictionary(tables.map { ($0.table, $0.rows) }, uniquingKeysWith: +)
    }

    /// Total uncompressed bytes of all table files.
    package var uncompressedBytes: Int64 { tables.reduce(0) { $0 + $1.bytes } }

    /// The entry of a table, if written.
    package func table(_ name: String) -> GeneratedTable? { tables.first { $0.table == name } }
}

/// How a single table file is stored (`FeedGenerator.writeTable`).
package enum FileCompression: String, Sendable, CaseIterable {
    /// The raw table file.
    case none
    /// gzip (zlib).
    case gzip
    /// A bare bzip2 stream.
    case bzip2
    /// A bzip2-compressed tar holding `itunes<YYYYMMDD>/<table>` (the v5 form), without a sidecar.
    case tarBzip2
}

/// Writes synthetic EPF feeds: deterministic (same options, same bytes), realistic and fast.
///
/// ```swift
/// var options = GeneratorOptions()
/// options.apps = 1_000
/// let full = try FeedGenerator.write(options, to: out)          // out/itunes20260105/application ...
/// let model = FeedModel(options)
/// let day1 = try FeedGenerator.write(model.incrementalOptions(day: 1), to: out)   // out/itunes20260106/...
/// let expected = try model.rows("application", throughDay: 1)  // what a database should hold now
/// ```
///
/// Every row is a pure function of `(seed, index)`: apps 0 ... 7 have fixed titles (`FixedApp.all`), app IDs
/// lie in 284,000,000 ..< 1,700,000,000, artists in 100,000,000 ..< 284,000,000, collections from
/// 1,700,000,000, songs from 1,800,000,000 and videos from 2,000,000,000, so an ID tells its kind.
package enum FeedGenerator {
    /// The tables an export with these options writes, in order: all (full) or those that change and the day's
    /// charts (incremental, plus a zero-row `storefront` with dirt), filtered by `options.tables`. With a scale, the
    /// music tables Apple dropped in 2025 are left out unless `options.tables` names them.
    package static func tables(for options: GeneratorOptions) -> [EPFTable] {
        GeneratedTables.all.filter { schema in
            if let only = options.tables, !only.contains(schema.name) { return false }
            if options.tables == nil {
                // v5 ranks apps in four charts and ships key_value; v3 has one chart table.
                let v5Only = GeneratedTables.v5Only.contains(schema.name)
                if options.layout == .v5 ? schema.name == "application_popularity_per_genre" : v5Only {
                    return false
                }
            }
            if schema.feed == .match, !options.match, options.tables == nil { return false }
            if options.scale != nil, options.tables == nil, GeneratedTables.musicTables.contains(schema.name) {
                return false
            }
            if options.mode == .full || GeneratedTables.dailyTables.contains(schema.name) { return true }
            return GeneratedTables.incrementalTables.contains(schema.name) || (options.dirt && schema.name == "storefront")
        }
    }

    /// Writes every feed of one export into `directory` (created if missing) in the chosen layout, and
    /// `dirt<YYYYMMDD>.json` when `options.dirt`. Throws `GeneratorError` for bad options or I/O failures,
    /// naming the option or file.
    package static func write(_ options: GeneratorOptions, to directory: URL) throws -> GeneratedFeed {
        try options.validate()
        let started = ContinuousClock.now
        let plan = Plan(options)
        let dirt = options.dirt ? DirtLog() : nil
        var result = GeneratedFeed(options: options)
        try makeDirectory(directory)
        let stamp = options.dateStamp
        let mtime = options.exportDate / 1000
        var jobs: [TableJob] = []
        for feed in FeedName.allCases {
            let schemas = tables(for: options).filter { $0.feed == feed }
            guard !schemas.isEmpty else { continue }
            let folder = "\(feed.rawValue)\(stamp)"
            switch options.layout {
            case .v3, .v5:
                let feedDirectory = directory.appendingPathComponent(folder)
                try makeDirectory(feedDirectory)
                result.feedPaths[feed] = feedDirectory
                jobs += schemas.map { TableJob(schema: $0, folder: folder, directory: feedDirectory.path) }
            case .v3Archive:
                let path = directory.appendingPathComponent(folder + ".tbz").path
                result.feedPaths[feed] = URL(fileURLWithPath: path)
                let archive = try Archive(path: path)
                try archive.tar.addDirectory(folder + "/", mtime: mtime)
                for schema in schemas {
                    let member = "\(folder)/\(schema.name)"
                    result.tables.append(try archive.add(schema, plan: plan, member: member, mtime: mtime, dirt: dirt))
                }
                result.files += try archive.close(feed: feed, table: nil)
            }
        }
        for outcome in try runInParallel(jobs, plan: plan, threads: options.threads) {
            result.tables += outcome.tables
            result.files += outcome.files
            for entry in outcome.dirt { dirt?.append(entry) }
        }
        if let dirt {
            result.dirt = dirt.entries
            let url = directory.appendingPathComponent("dirt\(stamp).json")
            let manifest = try FileSink(path: url.path)
            try manifest.write([UInt8](try GeneratedFeed.manifestJSON(dirt.entries)))
            try manifest.finish()
            result.manifest = url
        }
        let elapsed = ContinuousClock.now - started
        result.seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return result
    }

    /// Writes one table as a single file (raw, `.gz`, `.bz2` or `.tbz`) at `file`; `options.dirt` applies.
    /// Meant for reader tests. Throws `GeneratorError.unknownTable` for a table the generator does not know.
    @discardableResult
    package static func writeTable(_ table: String, options: GeneratorOptions, to file: URL,
                                  compression: FileCompression) throws -> GeneratedTable {
        try options.validate()
        guard let schema = GeneratedTables.named(table) else { throw GeneratorError.unknownTable(table) }
        let plan = Plan(options)
        let dirt = options.dirt ? DirtLog() : nil
        let path = file.path
        let sink = try FileSink(path: path)
        switch compression {
        case .none, .gzip, .bzip2:
            let chain: ByteSink
            switch compression {
            case .gzip: chain = try GzipSink(next: sink, path: path)
            case .bzip2: chain = try Bzip2Sink(next: sink, path: path)
            default: chain = sink
            }
            let writer = RecordWriter(sink: chain)
            try TableEmitter(plan: plan, schema: schema, writer: writer, dirt: dirt).writeFile()
            return GeneratedTable(feed: schema.feed, table: table, rows: writer.dataRecords, bytes: writer.totalBytes,
                                  path: path, member: nil)
        case .tarBzip2:
            let archive = try Archive(sink: sink, path: path)
            let member = "\(schema.feed.rawValue)\(options.dateStamp)/\(table)"
            let result = try archive.add(schema, plan: plan, member: member, mtime: options.exportDate / 1000,
                                         dirt: dirt)
            try archive.tar.finish()
            return result
        }
    }

    /// The bytes of one uncompressed table file, in memory (small feeds and tests).
    package static func tableBytes(_ table: String, options: GeneratorOptions) throws -> [UInt8] {
        try options.validate()
        guard let schema = GeneratedTables.named(table) else { throw GeneratorError.unknownTable(table) }
        let sink = MemorySink()
        try TableEmitter(plan: Plan(options), schema: schema, writer: RecordWriter(sink: sink), dirt: nil)
            .writeFile()
        return sink.bytes
    }

    /// Writes independent table files (v3 plain or gzip, v5 archives) on up to `threads` threads, biggest
    /// tables first; returns the outcomes in job order, so the result does not depend on scheduling.
    private static func runInParallel(_ jobs: [TableJob], plan: Plan, threads: Int) throws -> [TableOutcome] {
        let box = OutcomeBox(count: jobs.count)
        let order = jobs.indices.sorted {
            TableJob.weight(jobs[$0].schema.name) > TableJob.weight(jobs[$1].schema.name)
        }
        let workers = max(1, min(threads, jobs.count))
        DispatchQueue.concurrentPerform(iterations: workers) { _ in
            while let position = box.nextJob(), position < order.count {
                let index = order[position]
                box.store(index, Result { try jobs[index].run(plan: plan) })
            }
        }
        return try box.outcomes()
    }

    /// Creates `url` and its missing parents (the corresponding C function is `mkdir(2)`); throws when a path
    /// component exists but is not a directory, or cannot be created.
    static func makeDirectory(_ url: URL) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) {
            if isDirectory.boolValue { return }
            throw GeneratorError.system(call: "mkdir(2)", path: url.path, errno: ENOTDIR)
        }
        let parent = url.deletingLastPathComponent()
        if parent.path != url.path { try makeDirectory(parent) }
        if mkdir(url.path, 0o755) != 0 && errno != EEXIST {
            throw GeneratorError.system(call: "mkdir(2)", path: url.path, errno: errno)
        }
    }
}

/// A `.tbz` being written: file <- md5 <- bzip2 <- tar. Each member is generated twice: once to count its
/// bytes for the tar header, once for real (generation is far faster than bzip2).
private final class Archive {
    let path: String
    let file: FileSink?
    let md5: MD5Sink?
    let tar: TarWriter

    init(path: String) throws {
        self.path = path
        let file = try FileSink(path: path)
        let md5 = MD5Sink(next: file)
        self.file = file
        self.md5 = md5
        tar = TarWriter(sink: try Bzip2Sink(next: md5, path: path))
    }

    /// An archive without md5 bookkeeping.
    init(sink: FileSink, path: String) throws {
        self.path = path
        file = sink
        md5 = nil
        tar = TarWriter(sink: try Bzip2Sink(next: sink, path: path))
    }

    func add(_ schema: EPFTable, plan: Plan, member: String, mtime: Int64, dirt: DirtLog?) throws
        -> GeneratedTable {
        let counter = CountingSink()
        // The counting pass must produce the same bytes, dirt included; its log is thrown away.
        try TableEmitter(plan: plan, schema: schema, writer: RecordWriter(sink: counter),
                         dirt: dirt == nil ? nil : DirtLog()).writeFile()
        try tar.beginFile(member, size: counter.count, mtime: mtime)
        let writer = RecordWriter(sink: tar.memberSink)
        try TableEmitter(plan: plan, schema: schema, writer: writer, dirt: dirt).writeFile()
        return GeneratedTable(feed: schema.feed, table: schema.name, rows: writer.dataRecords,
                              bytes: writer.totalBytes, path: path, member: member)
    }

    /// Ends the archive, writes the `.md5` sidecar (`MD5 (<name>.tbz) = <32 hex>`) and returns both files.
    func close(feed: FeedName, table: String?) throws -> [GeneratedFile] {
        try tar.finish()
        let digest = md5?.hex ?? ""
        let archive = GeneratedFile(path: path, feed: feed, table: table, bytes: file?.bytesWritten ?? 0, md5: digest)
        let name = URL(fileURLWithPath: path).lastPathComponent
        let sidecar = try FileSink(path: path + ".md5")
        try sidecar.write(Array("MD5 (\(name)) = \(digest)\n".utf8))
        try sidecar.finish()
        return [archive, GeneratedFile(path: path + ".md5", feed: feed, table: nil, bytes: sidecar.bytesWritten,
                                       md5: nil)]
    }
}

/// One table file of a v3 or v5 export, writable independently of the others.
private struct TableJob: Sendable {
    let schema: EPFTable
    let folder: String
    let directory: String

    /// Rough relative size, to start the biggest tables first.
    static func weight(_ table: String) -> Int {
        ["application_detail": 100, "application": 40, "application_price": 30, "song": 5][table] ?? 1
    }

    func run(plan: Plan) throws -> TableOutcome {
        let options = plan.options
        let dirt = options.dirt ? DirtLog() : nil
        let feed = schema.feed
        if options.layout == .v5 {
            let path = (directory as NSString).appendingPathComponent(schema.name + ".tbz")
            let archive = try Archive(path: path)
            let table = try archive.add(schema, plan: plan, member: "\(folder)/\(schema.name)",
                                        mtime: options.exportDate / 1000, dirt: dirt)
            let files = try archive.close(feed: feed, table: schema.name)
            return TableOutcome(tables: [table], files: files, dirt: dirt?.entries ?? [])
        }
        let path = (directory as NSString).appendingPathComponent(schema.name + (options.gzip ? ".gz" : ""))
        let file = try FileSink(path: path)
        let sink: ByteSink = options.gzip ? try GzipSink(next: file, path: path) : file
        let writer = RecordWriter(sink: sink)
        try TableEmitter(plan: plan, schema: schema, writer: writer, dirt: dirt).writeFile()
        let table = GeneratedTable(feed: feed, table: schema.name, rows: writer.dataRecords,
                                   bytes: writer.totalBytes, path: path, member: nil)
        let written = GeneratedFile(path: path, feed: feed, table: schema.name, bytes: file.bytesWritten, md5: nil)
        return TableOutcome(tables: [table], files: [written], dirt: dirt?.entries ?? [])
    }
}

/// What one table job produced.
private struct TableOutcome: Sendable {
    let tables: [GeneratedTable]
    let files: [GeneratedFile]
    let dirt: [DirtEntry]
}

/// Hands out job positions and collects outcomes from worker threads, behind a Mutex.
private final class OutcomeBox: Sendable {
    private struct State {
        var next = 0
        var results: [Result<TableOutcome, Error>?]
    }

    private let state: Mutex<State>

    init(count: Int) { state = Mutex(State(results: Array(repeating: nil, count: count))) }

    /// The next job position, or nil once a job has failed (the others stop early).
    func nextJob() -> Int? {
        state.withLock { state in
            if state.results.contains(where: { if case .failure = $0 { return true } else { return false } }) {
                return nil
            }
            state.next += 1
            return state.next - 1
        }
    }

    func store(_ index: Int, _ result: Result<TableOutcome, Error>) {
        state.withLock { $0.results[index] = result }
    }

    /// Outcomes in job order; throws the first failure in job order.
    func outcomes() throws -> [TableOutcome] {
        let results = state.withLock { $0.results }
        var outcomes: [TableOutcome] = []
        for result in results {
            guard let result else { continue }
            outcomes.append(try result.get())
        }
        return outcomes
    }
}
