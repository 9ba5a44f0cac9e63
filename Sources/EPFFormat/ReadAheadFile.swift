import EPFConcurrency
import Foundation

/// Opens and decompresses a bzip2 input (`.tbz`, `.bz2`) on a background thread before its reader comes to it, so
/// that the decompression of the next table overlaps the end of the current one (index builds, checks).
///
/// The thread checks the `.md5` sidecar first (when `options.verifySidecars`), then opens the file and decompresses
/// it, keeping the bytes in memory up to `Limits.memoryBytes`, beyond that in an unlinked spill file in the
/// spill directory up to `Limits.spillBytes`; then it waits for the reader. Once the reader reads, it is served the
/// kept bytes first and the thread goes on decompressing ahead of it, as `PrefetchingSource` does; spill space is
/// reused once the reader has caught up with it. A spill file that cannot be created or written only means less
/// is kept: it is not an error of the input.
///
/// Failures surface where reading the file directly would have shown them: a missing file, an unreadable or
/// mismatched sidecar from `open()`, before any byte; corrupt or truncated data from `read` after every byte
/// before it, with the decoder's own error (file and compressed byte offset).
package final class ReadAheadFile: ByteSource {
    /// How much is kept before the reader comes.
    package struct Limits: Sendable {
        /// Decompressed bytes kept in memory.
        package var memoryBytes: Int
        /// Decompressed bytes kept in the spill file at most.
        package var spillBytes: Int64
        /// Bytes decompressed per step.
        package var chunkBytes: Int

        /// Limits; `chunkBytes` is at least 1.
        package init(memoryBytes: Int = 16 << 20, spillBytes: Int64 = 2 << 30, chunkBytes: Int = 1 << 20) {
            self.memoryBytes = max(0, memoryBytes)
            self.spillBytes = max(0, spillBytes)
            self.chunkBytes = max(1, chunkBytes)
        }
    }

    /// What opening the file gave: the sidecar's digest when one was checked, the counted compressed bytes (for
    /// progress) and the compressed size.
    ///
    /// Sendable unchecked: made on the thread, which alone reads through `raw`; others read only its atomic count.
    package struct Opened: @unchecked Sendable {
        /// The verified MD5, when there was a sidecar.
        package let digest: String?
        /// Compressed bytes read so far, counted on the background thread.
        package let raw: CountingSource
        /// The compressed file's size.
        package let totalSize: Int64
    }

    /// A piece of the decompressed stream, in order: in memory, or in the spill file.
    private enum Segment: Sendable {
        case memory(ChunkBuffer)
        case spill(offset: Int64, count: Int)
    }

    /// What the reader and the thread share, behind `state`.
    private struct State: Sendable {
        var opened: Result<Opened, any Error>?
        var queue: [Segment] = []
        /// Bytes in memory segments and in the chunk the reader holds.
        var memoryBytes = 0
        var spill: SpillFile?
        var spillUnusable = false
        /// Where the next spill segment goes; back to 0 when no spill segment is left to read.
        var spillEnd: Int64 = 0
        var spillSegments = 0
        var spillMost: Int64 = 0
        var failure: (any Error)?
        var ended = false
        var cancelled = false
    }

    /// The file being read ahead.
    package let path: String
    private let state = Monitor(State())
    private let worker: WorkerThread?
    private var current: ChunkBuffer?
    private var currentPosition = 0

    /// Starts reading `path` ahead on a new thread with `options` (sidecar check, decompression threads);
    /// `spillDirectory` holds the spill file (nil: memory only).
    package init(path: String, options: ReadOptions, spillDirectory: String?, limits: Limits = Limits()) {
        self.path = path
        let pump = Pump(path: path, options: options, spillDirectory: spillDirectory, limits: limits,
                            state: state)
        do {
            worker = try WorkerThread(name: "epf-read-ahead") { pump.work() }
        } catch {
            worker = nil
            let failure = EPFError.io(path: path, call: "pthread_create", errno: error.code)
            state.withLock { $0.opened = .failure(failure) }
        }
    }

    deinit {
        state.withLock { $0.cancelled = true }
        worker?.join()
        state.withLock { state in
            for case .memory(let buffer) in state.queue { buffer.deallocate() }
            state.queue = []
        }
        current?.deallocate()
    }

    /// Waits until the file is open and returns what opening gave; rethrows the failure of the sidecar check or
    /// of opening the file.
    package func open() throws -> Opened {
        try state.wait(until: { $0.opened != nil }) { state in
            guard let opened = state.opened else { throw EPFError.io(path: path, call: "open", errno: EIO) }
            return try opened.get()
        }
    }

    /// Most bytes the spill file held at once so far (for tests).
    package var spillHighWater: Int64 { state.read { $0.spillMost } }

    /// Whether the spill file was created (for tests: it is unlinked, so it never shows in the directory).
    package var spillFileCreated: Bool { state.read { $0.spill != nil } }

    package func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        if current == nil {
            guard let chunk = try next() else { return 0 }
            current = chunk
            currentPosition = 0
        }
        guard let chunk = current else { return 0 }
        let count = min(buffer.count, chunk.count - currentPosition)
        base.copyMemory(from: chunk.base + currentPosition, byteCount: count)
        currentPosition += count
        if currentPosition == chunk.count {
            current = nil
            chunk.deallocate()
            state.withLock { $0.memoryBytes -= chunk.count }
        }
        return count
    }

    /// The next chunk in order, nil at the end; rethrows the decoder's failure after the bytes before it.
    private func next() throws -> ChunkBuffer? {
        let segment: Segment? = try state.wait(until: { !$0.queue.isEmpty || $0.failure != nil || $0.ended }) { state in
            guard !state.queue.isEmpty else {
                if let failure = state.failure { throw failure }
                return nil
            }
            let segment = state.queue.removeFirst()
            if case .spill(_, let count) = segment { state.memoryBytes += count }
            return segment
        }
        switch segment {
        case nil:
            return nil
        case .memory(let buffer)?:
            return buffer
        case .spill(let offset, let count)?:
            return try readSpill(offset: offset, count: count)
        }
    }

    /// Reads a spill segment back (counted in memory already); a failure ends the stream for good.
    private func readSpill(offset: Int64, count: Int) throws -> ChunkBuffer {
        var buffer = ChunkBuffer.allocate(capacity: count)
        buffer.count = count
        do {
            // The thread writes only past `spillEnd` while this segment is counted, so this range is stable.
            guard let file = state.read({ $0.spill }) else {
                throw EPFError.io(path: path, call: "pread", errno: EBADF)
            }
            try file.read(into: UnsafeMutableRawBufferPointer(start: buffer.base, count: count), at: offset)
        } catch {
            // The spill file failed under the reader: the stream cannot go on, say so on every later read.
            buffer.deallocate()
            state.withLock { state in
                state.memoryBytes -= count
                state.failure = error
                for case .memory(let kept) in state.queue { kept.deallocate() }
                state.queue = []
                state.cancelled = true
            }
            throw error
        }
        state.withLock { state in
            state.spillSegments -= 1
            if state.spillSegments == 0 { state.spillEnd = 0 }
        }
        return buffer
    }

    /// The background thread's side: opens, then decompresses into `state` while there is room.
    private struct Pump: Sendable {
        let path: String
        let options: ReadOptions
        let spillDirectory: String?
        let limits: Limits
        let state: Monitor<State>

        func work() {
            let decoder: ByteSource
            do {
                let stopped = { state.read { $0.cancelled } }
                let digest = options.verifySidecars ? try FeedInput.verifySidecar(of: path, shouldStop: stopped) : nil
                let file = try FileByteSource(path: path)
                let totalSize = (try? file.size()) ?? 0
                let raw = CountingSource(file)
                decoder = try FeedInput.bzip2(raw, path, options)
                let opened = Opened(digest: digest, raw: raw, totalSize: totalSize)
                state.withLock { $0.opened = .success(opened) }
            } catch {
                state.withLock { $0.opened = .failure(error) }
                return
            }
            decompress(decoder)
        }

        /// Whether another chunk may be decompressed: always when nothing is queued (the reader may be waiting),
        /// else while memory or the spill file has room.
        private func hasRoom(_ state: State) -> Bool {
            if state.queue.isEmpty { return true }
            if state.memoryBytes + limits.chunkBytes <= limits.memoryBytes { return true }
            return !state.spillUnusable && spillDirectory != nil
                && state.spillEnd + Int64(limits.chunkBytes) <= limits.spillBytes
        }

        private func decompress(_ decoder: ByteSource) {
            while true {
                let stop = state.wait(until: { $0.cancelled || hasRoom($0) }) { $0.cancelled }
                if stop { return }

                var buffer = ChunkBuffer.allocate(capacity: limits.chunkBytes)
                var error: (any Error)?
                do {
                    // Fill the whole chunk unless the stream ends, so the reader sees few small chunks.
                    while buffer.count < limits.chunkBytes {
                        let read = try decoder.read(into: UnsafeMutableRawBufferPointer(
                            start: buffer.base + buffer.count, count: limits.chunkBytes - buffer.count))
                        if read == 0 { break }
                        buffer.count += read
                    }
                } catch let caught {
                    error = caught
                }
                let finished = state.withLock { state in
                    if buffer.count > 0 {
                        keep(buffer, in: &state)
                    } else {
                        buffer.deallocate()
                    }
                    if let error {
                        state.failure = error
                    } else if buffer.count < limits.chunkBytes {
                        state.ended = true
                    }
                    return state.failure != nil || state.ended
                }
                if finished { return }
            }
        }

        /// Queues a chunk: in memory while there is room, else in the spill file. Called with the lock held.
        private func keep(_ buffer: ChunkBuffer, in state: inout State) {
            if state.cancelled {
                buffer.deallocate()
                return
            }
            let count = buffer.count
            if state.memoryBytes + count > limits.memoryBytes, !state.spillUnusable, let directory = spillDirectory,
               state.spillEnd + Int64(count) <= limits.spillBytes {
                do {
                    if state.spill == nil { state.spill = try SpillFile(directory: directory) }
                    if let spill = state.spill {
                        try spill.write(UnsafeRawBufferPointer(start: buffer.base, count: count), at: state.spillEnd)
                        state.queue.append(.spill(offset: state.spillEnd, count: count))
                        state.spillEnd += Int64(count)
                        state.spillSegments += 1
                        state.spillMost = max(state.spillMost, state.spillEnd)
                        buffer.deallocate()
                        return
                    }
                } catch {
                    // No room on the disk or no spill directory: keep this chunk in memory and no more.
                    state.spillUnusable = true
                }
            }
            state.queue.append(.memory(buffer))
            state.memoryBytes += count
        }
    }
}
