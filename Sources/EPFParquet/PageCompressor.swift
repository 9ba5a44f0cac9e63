import EPFConcurrency
import Glibc

/// Compresses a file's pages on other cores while the writer goes on reading rows and encoding them: each page is
/// submitted as it fills, and the `CompressedPage` it returns is taken back in order when the writer needs it.
/// Pages go to the workers in turn, each a joined thread with its own zlib stream and a bounded queue of pages;
/// every page is a gzip member of its own, so the bytes are the same as compressing in line, whichever worker
/// compressed it. The workers finish what they were given and are joined when the compressor goes.
final class PageCompressor {
    private let workers: [CompressionWorker]
    private var next = 0

    /// `level` is zlib's (1 fastest ... 9 smallest); `workers` defaults to the cores, at most 4 (two keep up with
    /// one writer on this machine's text). Throws `ParquetError.compression` when zlib refuses, and
    /// `WorkerThread.StartFailure` when the system refuses a thread.
    init(level: Int32, workers: Int = PageCompressor.defaultWorkers) throws {
        var started: [CompressionWorker] = []
        for index in 0..<max(1, workers) {
            started.append(try CompressionWorker(level: level, name: "epf-gzip-\(index)"))
        }
        self.workers = started
    }

    deinit {
        for worker in workers { worker.finish() }
    }

    /// The cores online, from 1 to 4.
    static var defaultWorkers: Int { max(1, min(4, sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    /// Starts compressing `body` (a page: levels and values) on the next worker; waits while that worker's queue
    /// is full.
    func submit(_ body: [UInt8]) -> CompressedPage {
        let page = CompressedPage()
        let worker = workers[next]
        next = next + 1 == workers.count ? 0 : next + 1
        if !worker.pages.push(PageJob(body: body, page: page)) {
            page.fulfil(.failure(ParquetError.compression(call: "deflate (worker stopped)", code: -1)))
        }
        return page
    }
}

/// A page and where its compressed bytes go.
private struct PageJob: Sendable {
    let body: [UInt8]
    let page: CompressedPage
}

/// One thread compressing the pages of its queue, in order, with its own zlib stream.
private final class CompressionWorker: Sendable {
    let pages = BlockingQueue<PageJob>(capacity: 64)
    private let thread: WorkerThread

    init(level: Int32, name: String) throws {
        // The zlib stream is the thread's alone: sent to it with the closure.
        let gzip = try GzipCompressor(level: level)
        let pages = self.pages
        thread = try WorkerThread(name: name) {
            while let job = pages.pop() { job.page.fulfil(Result { try gzip.compress(job.body) }) }
        }
    }

    /// Lets the thread compress what is queued, then joins it.
    func finish() {
        pages.close()
        thread.join()
    }
}

/// One page on its way through a `PageCompressor`: `take` waits for its gzip member.
final class CompressedPage: Sendable {
    private let result = Monitor<Result<[UInt8], any Error>?>(nil)

    fileprivate func fulfil(_ value: Result<[UInt8], any Error>) {
        result.withLock { $0 = value }
    }

    /// The compressed bytes, once they are ready; rethrows zlib's refusal.
    func take() throws -> [UInt8] {
        let value = result.wait(until: { if case .some = $0 { true } else { false } }, then: { $0 })
        return try value?.get() ?? []
    }
}
