import Foundation

/// Reads another source on a background thread, a few chunks ahead, so that decompression on one core
/// overlaps parsing and loading on the other.
///
/// Memory is bounded: at most `depth` chunks of `chunkSize` bytes are held. An error of the inner source
/// is rethrown to the reader at the position where it happened.
public final class PrefetchingSource: ByteSource, @unchecked Sendable {
    // All mutable state below is guarded by `condition`.
    private let condition = NSCondition()
    private var filled: [(buffer: UnsafeMutableRawPointer, count: Int)] = []
    private var free: [UnsafeMutableRawPointer] = []
    private var failure: Error?
    private var ended = false
    private var cancelled = false
    private var workerDone = false
    /// True while `read` waits for a chunk (guarded by `condition`): the worker then skips its checks.
    private var readerIsWaiting = false
    private let chunkSize: Int
    private var current: (buffer: UnsafeMutableRawPointer, count: Int)?
    private var currentPosition = 0
    private let inner: ByteSource
    /// Checks UTF-8 and NUL bytes of each chunk on the reading thread, when set.
    public let validation: ChunkValidation?

    /// Starts reading `inner` ahead on a new thread; with `validation`, each chunk is also checked there.
    public init(_ inner: ByteSource, chunkSize: Int = 1 << 20, depth: Int = 4, validation: ChunkValidation? = nil) {
        self.inner = inner
        self.validation = validation
        self.chunkSize = max(1, chunkSize)
        for _ in 0..<max(2, depth) {
            free.append(UnsafeMutableRawPointer.allocate(byteCount: self.chunkSize, alignment: 64))
        }
        startThread(named: "epf-prefetch") { [self] in self.work() }
    }

    deinit {
        condition.lock()
        cancelled = true
        condition.broadcast()
        while !workerDone { condition.wait() }
        condition.unlock()
        for chunk in filled { chunk.buffer.deallocate() }
        for buffer in free { buffer.deallocate() }
        if let current { current.buffer.deallocate() }
    }

    private func work() {
        while true {
            condition.lock()
            while free.isEmpty && !cancelled { condition.wait() }
            if cancelled {
                workerDone = true
                condition.broadcast()
                condition.unlock()
                return
            }
            let buffer = free.removeLast()
            condition.unlock()

            var count = 0
            var error: Error?
            do {
                // Fill the whole chunk unless the stream ends, so the reader sees few small chunks.
                while count < chunkSize {
                    let read = try inner.read(into: UnsafeMutableRawBufferPointer(start: buffer + count,
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
                condition.lock()
                let readerWaiting = filled.isEmpty && readerIsWaiting
                condition.unlock()
                if readerWaiting {
                    validation.skip(count: count)
                } else {
                    validation.analyze(buffer, count: count)
                }
            }
            condition.lock()
            if count > 0 {
                filled.append((buffer, count))
            } else {
                free.append(buffer)
            }
            var stop = false
            if let error {
                failure = error
                stop = true
            } else if count < chunkSize {
                ended = true
                stop = true
            }
            if stop { workerDone = true }
            condition.broadcast()
            condition.unlock()
            if stop { return }
        }
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        if current == nil {
            condition.lock()
            while filled.isEmpty && failure == nil && !ended {
                readerIsWaiting = true
                condition.wait()
            }
            readerIsWaiting = false
            if !filled.isEmpty {
                current = filled.removeFirst()
                currentPosition = 0
                condition.unlock()
            } else {
                let error = failure
                condition.unlock()
                if let error { throw error }
                return 0
            }
        }
        guard let chunk = current else { return 0 }
        let count = min(buffer.count, chunk.count - currentPosition)
        base.copyMemory(from: chunk.buffer + currentPosition, byteCount: count)
        currentPosition += count
        if currentPosition == chunk.count {
            condition.lock()
            free.append(chunk.buffer)
            current = nil
            condition.broadcast()
            condition.unlock()
        }
        return count
    }
}
