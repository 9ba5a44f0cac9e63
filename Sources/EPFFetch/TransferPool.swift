import EPFConcurrency
import Foundation

/// Runs downloads on `connections` threads, each with its own libcurl handle: a large file's ranges go to several
/// connections at once, small files go to different connections in parallel.
final class TransferPool: Sendable {
    private struct Job: Sendable {
        var download: Download
        var segment: Int
        var generation: Int
    }

    /// What the connections share, behind `state`.
    private struct State: Sendable {
        var queue: [Job] = []
        /// The jobs connections are working on, so an idle connection can split one of their ranges.
        var inFlight: [Int: Job] = [:]
        var nextJobID = 0
        var open = 0
        var fatal: (any Error)?
        /// Counts the changes an idle connection waits for (a range done, a download closed, a fatal error): after
        /// each, it looks again for a range to take or split.
        var changes = 0
    }

    private let settings: HTTPSettings
    private let connections: Int
    private let log: @Sendable (String) -> Void
    /// Called when a download is verified, on the connection's thread that finished it; moves the file into the
    /// mirror.
    private let install: @Sendable (Download) throws -> Void
    private let state = Monitor(State())

    init(settings: HTTPSettings, connections: Int, log: @escaping @Sendable (String) -> Void,
         install: @escaping @Sendable (Download) throws -> Void) {
        self.settings = settings
        self.connections = connections
        self.log = log
        self.install = install
    }

    /// The error that stopped every transfer (401), if any.
    var fatalError: Error? {
        state.read { $0.fatal }
    }

    /// Downloads everything; returns when every download has an outcome and every connection's thread has ended.
    /// Per-file failures are in each download's outcome; a failure that stops all (bad credentials) is in
    /// `fatalError`.
    func run(_ downloads: [Download]) {
        var jobs: [Job] = []
        var open = 0
        for download in downloads {
            do {
                let pending = try download.open()
                download.started = Date()
                open += 1
                if pending.isEmpty {
                    jobs.append(Job(download: download, segment: 0, generation: download.generation))
                } else {
                    jobs += pending.map { Job(download: download, segment: $0, generation: download.generation) }
                }
            } catch {
                download.end(.failure(error))
            }
        }
        state.withLock { state in
            state.queue = jobs
            state.open = open
        }
        if open == 0 { return }
        var threads: [WorkerThread] = []
        var refused: WorkerThread.StartFailure?
        for index in 0..<max(1, connections) {
            do {
                threads.append(try WorkerThread(name: "epf-fetch-\(index)") { [self] in work() })
            } catch {
                refused = error
            }
        }
        if threads.isEmpty, let refused {
            let error = FetchError.io(path: "(connection threads)", call: "pthread_create", errno: refused.code)
            state.withLock { $0.fatal = error }
        }
        // A connection's thread ends once every download is closed or a failure stopped them all.
        for thread in threads { thread.join() }
    }

    /// One connection: takes queued ranges (or splits a busy one) until every download is closed.
    private func work() {
        let session: HTTPSession
        do {
            session = try HTTPSession(settings: settings)
        } catch {
            state.withLock { state in
                if state.fatal == nil { state.fatal = error }
                state.changes += 1
            }
            return
        }
        // The changes seen when this connection last found nothing to do (-1: look at once).
        var seen = -1
        while true {
            // nil: nothing to take yet, look again after the next change or 0.1 s; .some(nil): stop.
            let taken: (id: Int, job: Job)?? = state.wait(until: { $0.changes != seen }, atMost: 0.1) { state, _ in
                guard state.fatal == nil && state.open > 0 else { return .some(nil) }
                var next: Job?
                if !state.queue.isEmpty {
                    next = state.queue.removeFirst()
                } else {
                    next = steal(state.inFlight)
                }
                guard let job = next else {
                    seen = state.changes
                    return nil
                }
                let id = state.nextJobID
                state.nextJobID += 1
                state.inFlight[id] = job
                return .some((id, job))
            }
            guard let decided = taken else { continue }
            guard let (id, job) = decided else { return }
            let more = run(job, session: session)
            state.withLock { state in
                state.inFlight[id] = nil
                state.queue += more
                state.changes += 1
            }
        }
    }

    /// Splits a range another connection is fetching, for this idle one. Called with `state` held.
    private func steal(_ inFlight: [Int: Job]) -> Job? {
        var busy: [ObjectIdentifier: (job: Job, segments: Set<Int>)] = [:]
        for job in inFlight.values {
            let key = ObjectIdentifier(job.download)
            if let entry = busy[key], entry.job.generation != job.generation { continue }
            busy[key, default: (job, [])].segments.insert(job.segment)
        }
        for (job, segments) in busy.values {
            if let index = job.download.split(busy: segments, generation: job.generation) {
                return Job(download: job.download, segment: index, generation: job.generation)
            }
        }
        return nil
    }

    /// Fetches one range with retries; returns the jobs it creates (a restart), none when done.
    private func run(_ job: Job, session: HTTPSession) -> [Job] {
        let download = job.download
        var tries = 0
        while true {
            if fatalError != nil { return [] }
            guard let range = download.nextRange(job.segment, generation: job.generation) else {
                return finish(job)
            }
            tries += 1
            let before = download.progress.received
            do {
                try fetch(job, range: range, session: session)
            } catch let error as RangeIgnored {
                log("note: \(download.file.url): the server ignored the byte range (\(error.status)); "
                    + "downloading the whole file again on one connection")
                guard let generation = try? download.restartWithoutRanges(seenBy: job.generation) else { return [] }
                return [Job(download: download, segment: 0, generation: generation)]
            } catch let error as FetchError {
                if case .unauthorized = error {
                    state.withLock { state in
                        if state.fatal == nil { state.fatal = error }
                        state.changes += 1
                    }
                    end(download, .failure(error))
                    return []
                }
                end(download, .failure(error))
                return []
            } catch let error as RetryableFailure {
                if download.progress.received > before { tries = 1 }
                guard tries <= settings.retries else {
                    end(download, .failure(FetchError.unavailable(
                        url: download.file.url,
                        message: "\(error.message); gave up after \(tries) tries (the .part is kept; run again to "
                            + "resume)")))
                    return []
                }
                let wait = settings.wait(beforeRetry: tries)
                log("retry \(tries)/\(settings.retries) in \(String(format: "%.1f", wait)) s: \(download.file.url) "
                    + "at byte \(range.first): \(error.message)")
                Thread.sleep(forTimeInterval: wait)
            } catch {
                end(download, .failure(error))
                return []
            }
        }
    }

    /// One request for `range`; returns when the connection ends. Throws `RetryableFailure` for what another try
    /// may fix, `RangeIgnored` for a 200 answer to a partial range, `FetchError` for what it cannot.
    private func fetch(_ job: Job, range: (first: Int64, last: Int64), session: HTTPSession) throws {
        let download = job.download
        let wholeFile = download.coversWholeFile(job.segment)
        var ignoredRange = false
        var writeError: Error?
        let answer: HTTPAnswer
        do {
            answer = try session.perform(download.file.url, range: "\(range.first)-\(range.last)",
                                         shouldStop: { [self] in
                                             fatalError != nil || !download.isCurrent(job.generation)
                                         })
            { bytes, status in
                if status == 200 && !wholeFile {
                    ignoredRange = true
                    return false
                }
                do {
                    return try download.write(bytes, segment: job.segment, generation: job.generation)
                } catch {
                    writeError = error
                    return false
                }
            }
        } catch let error as CurlError {
            if let writeError { throw writeError }
            if ignoredRange { throw RangeIgnored(status: 200) }
            if error.abortedByCallback && !download.isCurrent(job.generation) { return }
            if error.abortedByCallback { return } // the range is full: nextRange decides
            throw RetryableFailure(message: error.message)
        }
        if answer.status == 416 {
            throw FetchError.unavailable(url: download.file.url, message: "HTTP 416: the server's file is shorter "
                                         + "than its size said; it may have changed: run again")
        }
        if let (error, retry) = session.failure(status: answer.status, url: download.file.url) {
            if retry { throw RetryableFailure(message: "HTTP \(answer.status)") }
            throw error
        }
        if download.nextRange(job.segment, generation: job.generation) != nil {
            throw RetryableFailure(message: "the connection closed early")
        }
    }

    /// Called when a range is complete: verifies and installs the file when it was the last one.
    private func finish(_ job: Job) -> [Job] {
        let download = job.download
        do {
            guard let completion = try download.finishIfComplete(generation: job.generation) else { return [] }
            switch completion {
            case .verified:
                try install(download)
                end(download, .success(download.expectedMD5))
                return []
            case .retry(let generation, let segments, let actual):
                log("warning: \(download.file.url): MD5 mismatch (the .md5 says \(download.expectedMD5), got "
                    + "\(actual)); deleted the part, downloading it again from zero")
                return segments.map { Job(download: download, segment: $0, generation: generation) }
            case .failed(let error):
                end(download, .failure(error))
                return []
            }
        } catch {
            end(download, .failure(error))
            return []
        }
    }
}

extension TransferPool {
    /// Records a download's outcome; the first outcome of each download closes it for the pool.
    fileprivate func end(_ download: Download, _ result: Result<String, Error>) {
        guard download.end(result) else { return }
        state.withLock { state in
            state.open -= 1
            state.changes += 1
        }
    }
}

/// The server answered 200 (the whole file) to a request for part of it.
struct RangeIgnored: Error {
    let status: Int
}
