import Foundation

/// Reads another source on a background thread, a few chunks ahead, so that decompression on one core
/// overlaps parsing and loading on the other.
///
/// Memory is bounded: at most `depth` chunks of `chunkSize` bytes are held. An error of the inner source
/// is rethrown to the reader at the position where it happened.
public final class PrefetchingSource: ByteSource, @unchecked Sendable {
    /// What the worker thread shares with the reader. The thread holds only this, never the source itself, so a
    /// reader that stops early (a table refused mid-load) still frees the source, which stops the thread.
    private let state: PrefetchState
    /// The chunk being read (reader side only).
    private var current: (buffer: UnsafeMutableRawPointer, count: Int)?
    private var currentPosition = 0
    /// Checks UTF-8 and NUL bytes of each chunk on the reading thread, when set.
    public var validation: ChunkValidation? { state.validation }

    /// Starts reading `inner` ahead on a new thread; with `validation`, each chunk is also checked there.
    public init(_ inner: ByteSource, chunkSize: Int = 1 << 20, depth: Int = 4, validation: ChunkValidation? = nil) {
        let state = PrefetchState(inner, chunkSize: max(1, chunkSize), depth: max(2, depth), validation: validation)
        self.state = state
        startThread(named: "epf-prefetch") { state.work() }
    }

    deinit {
        let condition = state.condition
        condition.lock()
        state.cancelled = true
        condition.broadcast()
        while !state.workerDone { condition.wait() }
        condition.unlock()
        for chunk in state.filled { chunk.buffer.deallocate() }
        for buffer in state.free { buffer.deallocate() }
        if let current { current.buffer.deallocate() }
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        if current == nil {
            let condition = state.condition
            condition.lock()
            while state.filled.isEmpty && state.failure == nil && !state.ended {
                state.readerIsWaiting = true
                condition.wait()
            }
            state.readerIsWaiting = false
            if !state.filled.isEmpty {
                current = state.filled.removeFirst()
                currentPosition = 0
                condition.unlock()
            } else {
                let error = state.failure
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
            state.condition.lock()
            state.free.append(chunk.buffer)
            current = nil
            state.condition.broadcast()
            state.condition.unlock()
        }
        return count
    }
}

/// The state a `PrefetchingSource` shares with its worker thread; all mutable fields are guarded by `condition`.
private final class PrefetchState: @unchecked Sendable {
    let condition = NSCondition()
    var filled: [(buffer: UnsafeMutableRawPointer, count: Int)] = []
    var free: [UnsafeMutableRawPointer] = []
    var failure: Error?
    var ended = false
    var cancelled = false
    var workerDone = false
    /// True while the reader waits for a chunk: the worker then skips its checks.
    var readerIsWaiting = false
    let chunkSize: Int
    let inner: ByteSource
    let validation: ChunkValidation?

    init(_ inner: ByteSource, chunkSize: Int, depth: Int, validation: ChunkValidation?) {
        self.inner = inner
        self.chunkSize = chunkSize
        self.validation = validation
        for _ in 0..<depth {
            free.append(UnsafeMutableRawPointer.allocate(byteCount: chunkSize, alignment: 64))
        }
    }

    func work() {
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
}
