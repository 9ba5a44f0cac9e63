import Dispatch
import Glibc
import Synchronization

/// Compresses a file's pages on other cores while the writer goes on reading rows and encoding them: each page is
/// submitted as it fills, and the `CompressedPage` it returns is taken back in order when the writer needs it.
/// Pages go to the workers in turn, each a serial queue with its own zlib stream; every page is a gzip member of its
/// own, so the bytes are the same as compressing in line, whichever worker compressed it.
final class PageCompressor {
    private let workers: [(queue: DispatchQueue, stream: StreamOnQueue)]
    private var next = 0

    /// `level` is zlib's (1 fastest ... 9 smallest); `workers` defaults to the cores, at most 4 (two keep up with
    /// one writer on this machine's text). Throws `ParquetError.compression` when zlib refuses.
    init(level: Int32, workers: Int = PageCompressor.defaultWorkers) throws {
        self.workers = try (0..<max(1, workers)).map { index in
            (DispatchQueue(label: "epf.parquet.page-compression.\(index)"),
             StreamOnQueue(try GzipCompressor(level: level)))
        }
    }

    /// The cores online, from 1 to 4.
    static var defaultWorkers: Int { max(1, min(4, sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    /// Starts compressing `body` (a page: levels and values) on the next worker.
    func submit(_ body: [UInt8]) -> CompressedPage {
        let page = CompressedPage()
        let worker = workers[next]
        next = next + 1 == workers.count ? 0 : next + 1
        worker.queue.async { [stream = worker.stream] in page.fulfil(Result { try stream.gzip.compress(body) }) }
        return page
    }
}

/// A zlib stream that only one serial queue of a `PageCompressor` uses. `@unchecked Sendable`: the queue's closures
/// reach it one at a time, never concurrently (the queue is serial), and nothing else touches it.
private final class StreamOnQueue: @unchecked Sendable {
    let gzip: GzipCompressor

    init(_ gzip: GzipCompressor) {
        self.gzip = gzip
    }
}

/// One page on its way through a `PageCompressor`: `take` waits for its gzip member.
final class CompressedPage: Sendable {
    private let result = Mutex<Result<[UInt8], any Error>?>(nil)
    private let ready = DispatchSemaphore(value: 0)

    fileprivate func fulfil(_ value: Result<[UInt8], any Error>) {
        result.withLock { $0 = value }
        ready.signal()
    }

    /// The compressed bytes, once they are ready; rethrows zlib's refusal. Called once per page.
    func take() throws -> [UInt8] {
        ready.wait()
        guard let value = result.withLock({ $0 }) else { return [] }
        return try value.get()
    }
}
