import EPFConcurrency
import Foundation

/// Reads another source on a background thread, a few chunks ahead, so that decompression on one core
/// overlaps parsing and loading on the other.
///
/// Memory is bounded: at most `depth` chunks of `chunkSize` bytes are held. An error of the inner source
/// is rethrown to the reader at the position where it happened.
package final class PrefetchingSource: ByteSource {
    /// What the thread hands the reader: a filled chunk, or the inner source's failure after the chunks before it.
    private enum Filled: Sendable {
        case bytes(ChunkBuffer)
        case failure(any Error)
    }

    /// The inner source on its way to the thread.
    ///
    /// Sendable unchecked: from then on only the thread reads through it (others may read a `CountingSource`'s
    /// atomic count in it).
    private struct Handover: @unchecked Sendable {
        let source: ByteSource
    }

    /// Filled chunks, in order; closed at the end of the inner source.
    private let filled: BlockingQueue<Filled>
    /// Empty buffers for the thread to fill, `depth` of them going round: the bound on memory.
    private let free: BlockingQueue<ChunkBuffer>
    /// The thread; it holds the inner source, never this value, so a reader that stops early (a table refused
    /// mid-load) frees this value, whose `deinit` stops and joins the thread, which frees the source.
    private let worker: WorkerThread?
    /// The chunk being read (reader side only).
    private var current: ChunkBuffer?
    private var currentPosition = 0
    /// The inner source's failure, thrown again on every later read.
    private var failure: (any Error)?
    /// Checks UTF-8 and NUL bytes of each chunk on the reading thread, when set.
    package let validation: ChunkValidation?

    /// Starts reading `inner` ahead on a new thread; with `validation`, each chunk is also checked there.
    package init(_ inner: ByteSource, chunkSize: Int = 1 << 20, depth: Int = 4,
                validation: ChunkValidation? = nil) {
        let chunkSize = max(1, chunkSize)
        let depth = max(2, depth)
        let filled = BlockingQueue<Filled>(capacity: depth + 1)  // every buffer, and a failure after them
        let free = BlockingQueue<ChunkBuffer>(capacity: depth)
        for _ in 0..<depth { free.push(.allocate(capacity: chunkSize)) }
        self.filled = filled
        self.free = free
        self.validation = validation
        let handover = Handover(source: inner)
        let fill: @Sendable () -> Void = {
            Self.fill(from: handover.source, chunkSize: chunkSize, free: free, filled: filled, validation: validation)
        }
        do {
            worker = try WorkerThread(name: "epf-prefetch", fill)
        } catch {
            worker = nil
            failure = EPFError.io(path: "(prefetch thread)", call: "pthread_create", errno: error.code)
        }
    }

    deinit {
        for buffer in free.cancel() { buffer.deallocate() }
        for case .bytes(let buffer) in filled.cancel() { buffer.deallocate() }
        // The thread frees any buffer it holds once the queues refuse it.
        worker?.join()
        current?.deallocate()
    }

    package func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        if current == nil {
            if let failure { throw failure }
            switch filled.pop() {
            case .bytes(let chunk)?:
                current = chunk
                currentPosition = 0
            case .failure(let error)?:
                failure = error
                throw error
            case nil:
                return 0
            }
        }
        guard let chunk = current else { return 0 }
        let count = min(buffer.count, chunk.count - currentPosition)
        base.copyMemory(from: chunk.base + currentPosition, byteCount: count)
        currentPosition += count
        if currentPosition == chunk.count {
            current = nil
            if !free.push(chunk) { chunk.deallocate() }
        }
        return count
    }

    /// The thread: fills free buffers from `inner` in order until it ends, fails, or the queues are cancelled.
    private static func fill(from inner: ByteSource, chunkSize: Int, free: BlockingQueue<ChunkBuffer>,
                             filled: BlockingQueue<Filled>, validation: ChunkValidation?) {
        while var buffer = free.pop() {
            var count = 0
            var error: (any Error)?
            do {
                // Fill the whole chunk unless the stream ends, so the reader sees few small chunks.
                while count < chunkSize {
                    let read = try inner.read(into: UnsafeMutableRawBufferPointer(start: buffer.base + count,
                                                                                 count: chunkSize - count))
                    if read == 0 { break }
                    count += read
                }
            } catch let caught {
                error = caught
            }
            if count > 0, let validation {
                // When the reader is already waiting for bytes, this thread is the slower one: hand the chunk
                // over unchecked and let the reader check its records itself, so the work balances itself.
                if filled.hasWaitingConsumer {
                    validation.skip(count: count)
                } else {
                    validation.analyze(buffer.base, count: count)
                }
            }
            buffer.count = count
            let kept = count > 0 ? filled.push(.bytes(buffer)) : free.push(buffer)
            if !kept {
                buffer.deallocate()
                return
            }
            if let error {
                filled.push(.failure(error))
                filled.close()
                return
            }
            if count < chunkSize {
                filled.close()
                return
            }
        }
    }
}
