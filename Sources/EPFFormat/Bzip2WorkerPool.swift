import EPFConcurrency

/// One span to decode on a worker thread, and its outcome.
final class Bzip2Job: Sendable {
    /// Where a job is.
    private enum Stage: Sendable {
        case queued, cancelled, running
        case done(Result<Bzip2BlockOutput, Bzip2DecodeFailure>)

        var result: Result<Bzip2BlockOutput, Bzip2DecodeFailure>? {
            if case .done(let result) = self { return result }
            return nil
        }
    }

    let input: Bzip2SpanBuffer
    let limit: Int
    private let stage = Monitor(Stage.queued)

    init(_ input: Bzip2SpanBuffer, limit: Int) {
        self.input = input
        self.limit = limit
    }

    /// Takes the job for decoding; false when it was cancelled or taken already.
    fileprivate func claim() -> Bool {
        stage.withLock { stage in
            guard case .queued = stage else { return false }
            stage = .running
            return true
        }
    }

    /// Decodes the job (after `claim()`) and publishes the outcome.
    fileprivate func run() {
        let result = Bzip2BlockOutput.decode(input, limit: limit)
        stage.withLock { $0 = .done(result) }
    }

    /// Skips the job unless a worker has started it.
    fileprivate func cancel() {
        stage.withLock { stage in
            if case .queued = stage { stage = .cancelled }
        }
    }

    /// Waits for the outcome.
    fileprivate func outcome() -> Result<Bzip2BlockOutput, Bzip2DecodeFailure> {
        while true {
            if let result = stage.wait(until: { $0.result != nil }, then: { $0.result }) { return result }
        }
    }
}

/// A fixed set of plain threads decoding jobs first-in first-out. Blocking work stays off Swift concurrency.
final class Bzip2WorkerPool: Sendable {
    private let queue = BlockingQueue<Bzip2Job>(capacity: .max)
    /// The workers; none when the system refused every thread, and then the reader decodes each job itself.
    private let threads: [WorkerThread]

    /// Starts `threads` (at least 1) worker threads, as many as the system allows.
    init(threads: Int) {
        let queue = self.queue
        self.threads = (0..<max(1, threads)).compactMap { index in
            try? WorkerThread(name: "epf-bunzip2-\(index)") {
                while let job = queue.pop() {
                    if job.claim() { job.run() }
                }
            }
        }
    }

    deinit {
        shutdown()
    }

    /// Queues a job.
    func submit(_ job: Bzip2Job) {
        if !threads.isEmpty { queue.push(job) }
    }

    /// Waits for a job's result.
    func wait(for job: Bzip2Job) -> Result<Bzip2BlockOutput, Bzip2DecodeFailure> {
        if threads.isEmpty && job.claim() { job.run() }
        return job.outcome()
    }

    /// Tells the workers to skip a job that is no longer needed (if they have not started it).
    func cancel(_ job: Bzip2Job) {
        job.cancel()
    }

    /// Stops the workers after their current job and waits until they have exited.
    func shutdown() {
        queue.cancel()
        for thread in threads { thread.join() }
    }
}
