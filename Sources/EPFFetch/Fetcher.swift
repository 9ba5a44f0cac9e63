import EPFConcurrency
import Foundation

/// What `epf fetch` was asked to do.
package struct FetchOptions: Sendable {
    /// Apple's EPF v5 tree.
    package static let appleV5 = "https://feeds.itunes.apple.com/feeds/epf/v5/current/"
    /// The feeds mirrored unless `--feeds` says otherwise.
    package static let defaultFeeds: Set<String> = ["itunes", "pricing", "popularity"]

    /// The folder listing the feeds (`current/`).
    package var url = FetchOptions.appleV5
    /// The local mirror.
    package var mirror: String
    /// Feeds to mirror.
    package var feeds = FetchOptions.defaultFeeds
    /// Tables to mirror (v4/v5), nil for all.
    package var tables: Set<String>?
    /// Connections at once.
    package var connections = 8
    /// A file is split into ranges of at least this many bytes.
    package var minSplit: Int64 = 4 << 20
    /// Credentials, timeouts, retries.
    package var http = HTTPSettings()
    /// Only list what would be downloaded.
    package var dryRun = false
    /// The database whose ledger says which incrementals are applied (and which full it was built from).
    package var database: String?
    /// Keep the newest N full exports in the mirror, remove older ones.
    package var keep: Int?

    /// Options for a mirror at `mirror`.
    package init(mirror: String) {
        self.mirror = mirror
    }
}

/// One file's line of the summary.
package struct FetchedFile: Codable, Sendable {
    /// The path in the mirror.
    package var path: String
    /// The URL.
    package var url: String
    /// `downloaded`, `resumed`, `present`, `applied`, `would download`, `would resume`, `failed`.
    package var status: String
    /// The file's size, when known.
    package var bytes: Int64?
    /// Bytes received in this run.
    package var downloadedBytes: Int64
    /// Bytes that were already in the `.part`.
    package var resumedBytes: Int64
    /// Seconds from the first to the last byte.
    package var seconds: Double
    /// Megabytes (10^6 bytes) per second received.
    package var megabytesPerSecond: Double
    /// Why it failed.
    package var error: String?
}

/// The result of a fetch.
package struct FetchReport: Codable, Sendable {
    /// The source URL.
    package var source: String
    /// The mirror.
    package var mirror: String
    /// True for `--dry-run`.
    package var dryRun: Bool
    /// Every file of the newest full and its incrementals.
    package var files: [FetchedFile]
    /// Feed directories that became visible in the mirror.
    package var published: [String]
    /// Old fulls removed by `--keep`.
    package var pruned: [String]
    /// Bytes received.
    package var downloadedBytes: Int64
    /// Bytes still to download (dry run).
    package var pendingBytes: Int64
    /// Wall time.
    package var seconds: Double
    /// Megabytes per second over the transfer phase.
    package var megabytesPerSecond: Double
    /// Messages of the files that failed.
    package var errors: [String]
}

/// Progress while files download.
package struct FetchProgress: Sendable {
    /// Files being or to be downloaded.
    package var files: Int
    /// Files finished.
    package var filesDone: Int
    /// Bytes to download in this run (sizes minus what parts hold).
    package var bytesTotal: Int64
    /// Bytes received.
    package var bytesDone: Int64
    /// Seconds since the transfers began.
    package var elapsed: Double
    /// True on the last call.
    package var finished: Bool
}

/// `epf fetch`: finds the newest full export and its incrementals on the server, and mirrors what is missing,
/// verified, resumable and over several connections.
package final class Fetcher {
    private let options: FetchOptions
    private let log: @Sendable (String) -> Void
    private let progress: (FetchProgress) -> Void

    /// A fetcher; `log` hears notes, warnings and retries, `progress` is called about twice a second.
    package init(options: FetchOptions, log: @escaping @Sendable (String) -> Void,
                progress: @escaping (FetchProgress) -> Void) {
        self.options = options
        self.log = log
        self.progress = progress
    }

    /// Runs the fetch. Throws for what stops everything (`.unauthorized`, `.locked`, `.noFeed`, listing
    /// failures); a file that fails is reported in `errors` with the rest downloaded.
    package func run() throws -> (report: FetchReport, failures: [FetchError]) {
        let started = Date()
        let mirror = Mirror(root: options.mirror)
        var lock: FetchLock?
        if !options.dryRun {
            do {
                try FileManager.default.createDirectory(atPath: options.mirror, withIntermediateDirectories: true)
            } catch {
                throw FetchError.io(path: options.mirror, call: "mkdir", errno: EACCES)
            }
            lock = try FetchLock(mirror: options.mirror)
        }
        defer { withExtendedLifetime(lock) {} }
        let session = try HTTPSession(settings: options.http)
        let remote = try RemoteTree(base: options.url, feeds: options.feeds, tables: options.tables, session: session,
                                    log: log).files()
        let ledger = LedgerView(database: options.database)
        let planned = try FetchPlanner(mirror: mirror, ledger: ledger, session: session, log: log).plan(remote)
        var report = FetchReport(source: options.url, mirror: options.mirror, dryRun: options.dryRun, files: [],
                                 published: [], pruned: [], downloadedBytes: 0, pendingBytes: 0, seconds: 0,
                                 megabytesPerSecond: 0, errors: [])
        if options.dryRun {
            report.files = planned.map { plan in
                let status: String
                switch plan.action {
                case .download: status = "would download"
                case .resume: status = "would resume"
                case .present: status = "present"
                case .applied: status = "applied"
                }
                return FetchedFile(path: plan.file.mirrorPath, url: plan.file.url, status: status, bytes: plan.size,
                                   downloadedBytes: 0, resumedBytes: plan.partBytes, seconds: 0,
                                   megabytesPerSecond: 0, error: nil)
            }
            report.pendingBytes = planned.reduce(0) { $0 + max(0, ($1.size ?? 0) - $1.partBytes) }
            report.seconds = Date().timeIntervalSince(started)
            return (report, [])
        }
        let (downloads, failures, transferSeconds) = try transfer(planned, mirror: mirror)
        report.files = summary(planned, downloads: downloads)
        report.downloadedBytes = downloads.reduce(0) { $0 + $1.receivedBytes }
        report.megabytesPerSecond = transferSeconds > 0 ? Double(report.downloadedBytes) / 1e6 / transferSeconds : 0
        report.published = try mirror.publish(planned.map { ($0.file, $0.md5) })
        report.errors = failures.map(\.description)
        if failures.isEmpty, let keep = options.keep {
            report.pruned = try mirror.prune(keep: keep, protected: ledger.builtFrom())
        }
        report.seconds = Date().timeIntervalSince(started)
        return (report, failures)
    }

    /// Downloads the files the plan lacks on the pool, reporting progress. Returns the downloads, the failures
    /// and the seconds the transfers took.
    private func transfer(_ planned: [PlannedFile], mirror: Mirror) throws
        -> ([Download], [FetchError], Double) {
        var downloads: [Download] = []
        for plan in planned where plan.action == .download || plan.action == .resume {
            try mirror.prepare(plan.target)
            downloads.append(Download(file: plan.file, target: plan.target, size: plan.size ?? 0,
                                      expectedMD5: plan.md5, connections: options.connections,
                                      minSplit: options.minSplit))
        }
        guard !downloads.isEmpty else { return ([], [], 0) }
        let pool = TransferPool(settings: options.http, connections: options.connections, log: log) {
            try mirror.install($0)
        }
        let started = Date()
        let finished = Monitor(false)
        let all = downloads
        // The transfers run on their own thread so that this one reports progress every half second.
        let worker: WorkerThread
        do {
            worker = try WorkerThread(name: "epf-fetch") {
                pool.run(all)
                finished.withLock { $0 = true }
            }
        } catch {
            throw FetchError.io(path: "(fetch thread)", call: "pthread_create", errno: error.code)
        }
        let total = planned.filter { $0.action == .download || $0.action == .resume }
            .reduce(Int64(0)) { $0 + max(0, ($1.size ?? 0) - $1.partBytes) }
        while true {
            let over = finished.wait(until: { $0 }, atMost: 0.5) { _, ready in ready }
            let states = downloads.map(\.progress)
            progress(FetchProgress(files: downloads.count, filesDone: states.filter(\.ended).count,
                                   bytesTotal: total, bytesDone: states.reduce(0) { $0 + $1.received },
                                   elapsed: Date().timeIntervalSince(started), finished: over))
            if over { break }
        }
        worker.join()
        let seconds = Date().timeIntervalSince(started)
        if let fatal = pool.fatalError { throw fatal }
        var failures: [FetchError] = []
        for download in downloads {
            if case .failure(let error) = download.outcome {
                failures.append(error as? FetchError ?? .unavailable(url: download.file.url, message: "\(error)"))
            } else if download.outcome == nil {
                failures.append(.unavailable(url: download.file.url, message: "did not finish"))
            }
        }
        return (downloads, failures, seconds)
    }

    private func summary(_ planned: [PlannedFile], downloads: [Download]) -> [FetchedFile] {
        planned.map { plan in
            var line = FetchedFile(path: plan.file.mirrorPath, url: plan.file.url, status: plan.action.rawValue,
                                   bytes: plan.size, downloadedBytes: 0, resumedBytes: 0, seconds: 0,
                                   megabytesPerSecond: 0, error: nil)
            guard let download = downloads.first(where: { $0.file == plan.file }) else { return line }
            line.downloadedBytes = download.receivedBytes
            line.resumedBytes = download.resumedBytes
            if let start = download.started, let end = download.finished {
                line.seconds = end.timeIntervalSince(start)
                line.megabytesPerSecond = line.seconds > 0 ? Double(download.receivedBytes) / 1e6 / line.seconds : 0
            }
            switch download.outcome {
            case .success: line.status = download.resumedBytes > 0 ? "resumed" : "downloaded"
            case .failure(let error): line.status = "failed"; line.error = "\(error)"
            case nil: line.status = "failed"; line.error = "did not finish"
            }
            return line
        }
    }
}
