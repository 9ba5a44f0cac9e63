import Foundation

/// Runs downloads on `connections` threads, each with its own libcurl handle: a large file's ranges go to several
/// connections at once, small files go to different connections in parallel.
final class TransferPool: @unchecked Sendable {
    private struct Job {
        var download: Download
        var segment: Int
        var generation: Int
    }

    private let settings: HTTPSettings
    private let connections: Int
    private let log: @Sendable (String) -> Void
    /// Called when a download is verified, on the thread that finished it; moves the file into the mirror.
    private let install: (Download) throws -> Void
    private let condition = NSCondition()
    private var queue: [Job] = []
    /// The jobs connections are working on, so an idle connection can split one of their ranges.
    private var inFlight: [Int: Job] = [:]
    private var nextJobID = 0
    private var running = 0
    private var open = 0
    private var fatal: Error?

    init(settings: HTTPSettings, connections: Int, log: @escaping @Sendable (String) -> Void,
         install: @escaping (Download) throws -> Void) {
        self.settings = settings
        self.connections = connections
        self.log = log
        self.install = install
    }

    /// The error that stopped every transfer (401), if any.
    var fatalError: Error? {
        condition.lock()
        defer { condition.unlock() }
        return fatal
    }

    /// Downloads everything; returns when every download has an outcome. Per-file failures are in each
    /// download's outcome; a failure that stops all (bad credentials) is in `fatalError`.
    func run(_ downloads: [Download]) {
        condition.lock()
        for download in downloads {
            do {
                let pending = try download.open()
                download.started = Date()
                open += 1
                if pending.isEmpty {
                    queue.append(Job(download: download, segment: 0, generation: download.generation))
                } else {
                    queue += pending.map { Job(download: download, segment: $0, generation: download.generation) }
                }
            } catch {
                download.end(.failure(error))
            }
        }
        // Read under the lock like every other access: no worker runs yet, but the rule stays true if one ever does.
        let anyOpen = open > 0
        condition.unlock()
        if !anyOpen { return }
        let threads = (0..<max(1, connections)).map { _ in Thread { [self] in work() } }
        for thread in threads {
            thread.stackSize = 1 << 20
            thread.start()
        }
        condition.lock()
        while open > 0 || running > 0 { condition.wait() }
        condition.unlock()
    }

    private func work() {
        let session: HTTPSession
        do {
            session = try HTTPSession(settings: settings)
        } catch {
            condition.lock()
            if fatal == nil { fatal = error }
            condition.broadcast()
            condition.unlock()
            return
        }
        while true {
            condition.lock()
            var next: Job?
            while fatal == nil && open > 0 {
                if !queue.isEmpty {
                    next = queue.removeFirst()
                    break
                }
                if let stolen = steal() {
                    next = stolen
                    break
                }
                _ = condition.wait(until: Date().addingTimeInterval(0.1))
            }
            guard let job = next, fatal == nil else {
                condition.unlock()
                return
            }
            let id = nextJobID
            nextJobID += 1
            inFlight[id] = job
            running += 1
            condition.unlock()
            let more = run(job, session: session)
            condition.lock()
            running -= 1
            inFlight[id] = nil
            queue += more
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Splits a range another connection is fetching, for this idle one. Called with `condition` held.
    private func steal() -> Job? {
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
                    condition.lock()
                    if fatal == nil { fatal = error }
                    condition.broadcast()
                    condition.unlock()
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
        condition.lock()
        open -= 1
        condition.broadcast()
        condition.unlock()
    }
}

/// The server answered 200 (the whole file) to a request for part of it.
struct RangeIgnored: Error {
    let status: Int
}
