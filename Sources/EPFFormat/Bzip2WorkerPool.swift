import Foundation

/// One span to decode on a worker thread.
///
/// `@unchecked Sendable`: `input` and `limit` are immutable; `result` and `started` are guarded by the pool's
/// condition (written by a worker, read by the reader after `Bzip2WorkerPool.wait(for:)`).
final class Bzip2Job: @unchecked Sendable {
    let input: Bzip2SpanBuffer
    let limit: Int
    fileprivate var result: Result<Bzip2BlockOutput, Bzip2DecodeFailure>?
    fileprivate var cancelled = false

    init(_ input: Bzip2SpanBuffer, limit: Int) {
        self.input = input
        self.limit = limit
    }
}

/// A fixed set of plain threads decoding jobs first-in first-out. Blocking work stays off Swift concurrency.
///
/// `@unchecked Sendable`: all mutable state is guarded by `condition`.
final class Bzip2WorkerPool: @unchecked Sendable {
    private let condition = NSCondition()
    private var queue: [Bzip2Job] = []
    private var stopping = false
    private var running = 0

    /// Starts `threads` (at least 1) worker threads.
    init(threads: Int) {
        let count = max(1, threads)
        running = count
        for index in 0..<count {
            startThread(named: "epf-bunzip2-\(index)") { [self] in self.work() }
        }
    }

    /// Queues a job.
    func submit(_ job: Bzip2Job) {
        condition.lock()
        queue.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Waits for a job's result.
    func wait(for job: Bzip2Job) -> Result<Bzip2BlockOutput, Bzip2DecodeFailure> {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let result = job.result { return result }
            condition.wait()
        }
    }

    /// Tells the workers to skip a job that is no longer needed (if they have not started it).
    func cancel(_ job: Bzip2Job) {
        condition.lock()
        job.cancelled = true
        condition.unlock()
    }

    /// Stops the workers after their current job and waits until they have exited.
    func shutdown() {
        condition.lock()
        stopping = true
        queue.removeAll()
        condition.broadcast()
        while running > 0 { condition.wait() }
        condition.unlock()
    }

    private func work() {
        condition.lock()
        while true {
            while queue.isEmpty && !stopping { condition.wait() }
            if stopping { break }
            let job = queue.removeFirst()
            if job.cancelled { continue }
            condition.unlock()
            let result = Bzip2BlockOutput.decode(job.input, limit: job.limit)
            condition.lock()
            job.result = result
            condition.broadcast()
        }
        running -= 1
        condition.broadcast()
        condition.unlock()
    }
}
