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
public final class ReadAheadFile: ByteSource {
    /// How much is kept before the reader comes.
    public struct Limits: Sendable {
        /// Decompressed bytes kept in memory.
        public var memoryBytes: Int
        /// Decompressed bytes kept in the spill file at most.
        public var spillBytes: Int64
        /// Bytes decompressed per step.
        public var chunkBytes: Int

        /// Limits; `chunkBytes` is at least 1.
        public init(memoryBytes: Int = 16 << 20, spillBytes: Int64 = 2 << 30, chunkBytes: Int = 1 << 20) {
            self.memoryBytes = max(0, memoryBytes)
            self.spillBytes = max(0, spillBytes)
            self.chunkBytes = max(1, chunkBytes)
        }
    }

    /// What opening the file gave: the sidecar's digest when one was checked, the counted compressed bytes (for
    /// progress) and the compressed size.
    public struct Opened {
        /// The verified MD5, when there was a sidecar.
        public let digest: String?
        /// Compressed bytes read so far, counted on the background thread.
        public let raw: CountingSource
        /// The compressed file's size.
        public let totalSize: Int64
    }

    /// The file being read ahead.
    public let path: String
    private let state: ReadAheadState
    private var current: (buffer: UnsafeMutableRawPointer, count: Int)?
    private var currentPosition = 0

    /// Starts reading `path` ahead on a new thread with `options` (sidecar check, decompression threads);
    /// `spillDirectory` holds the spill file (nil: memory only).
    public init(path: String, options: ReadOptions, spillDirectory: String?, limits: Limits = Limits()) {
        self.path = path
        state = ReadAheadState(path: path, options: options, spillDirectory: spillDirectory, limits: limits)
        startThread(named: "epf-read-ahead") { [state] in state.work() }
    }

    deinit {
        state.cancel()
        current?.buffer.deallocate()
    }

    /// Waits until the file is open and returns what opening gave; rethrows the failure of the sidecar check or
    /// of opening the file.
    public func open() throws -> Opened {
        try state.waitUntilOpen()
    }

    /// Most bytes the spill file held at once so far (for tests).
    public var spillHighWater: Int64 { state.spillHighWater }

    /// Whether the spill file was created (for tests: it is unlinked, so it never shows in the directory).
    public var spillFileCreated: Bool { state.spillCreated }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        if current == nil {
            guard let chunk = try state.next() else { return 0 }
            current = chunk
            currentPosition = 0
        }
        guard let chunk = current else { return 0 }
        let count = min(buffer.count, chunk.count - currentPosition)
        base.copyMemory(from: chunk.buffer + currentPosition, byteCount: count)
        currentPosition += count
        if currentPosition == chunk.count {
            current = nil
            state.release(chunk.buffer, count: chunk.count)
        }
        return count
    }
}

/// The state shared by a `ReadAheadFile` and its thread; all mutable fields are guarded by `condition`.
private final class ReadAheadState: @unchecked Sendable {
    private enum Segment {
        case memory(UnsafeMutableRawPointer, Int)
        case spill(offset: Int64, count: Int)
    }

    private let path: String
    private let options: ReadOptions
    private let spillDirectory: String?
    private let limits: ReadAheadFile.Limits
    private let condition = NSCondition()

    private var opened: ReadAheadFile.Opened?
    private var openFailure: Error?
    private var queue: [Segment] = []
    /// Bytes in memory segments and in the chunk the reader holds.
    private var memoryBytes = 0
    private var spill: SpillFile?
    private var spillUnusable = false
    /// Where the next spill segment goes; back to 0 when no spill segment is left to read.
    private var spillEnd: Int64 = 0
    private var spillSegments = 0
    private var spillMost: Int64 = 0
    private var failure: Error?
    private var ended = false
    private var cancelled = false

    init(path: String, options: ReadOptions, spillDirectory: String?, limits: ReadAheadFile.Limits) {
        self.path = path
        self.options = options
        self.spillDirectory = spillDirectory
        self.limits = limits
    }

    deinit {
        for case .memory(let buffer, _) in queue { buffer.deallocate() }
    }

    var spillHighWater: Int64 {
        condition.lock()
        defer { condition.unlock() }
        return spillMost
    }

    var spillCreated: Bool {
        condition.lock()
        defer { condition.unlock() }
        return spill != nil
    }

    func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }

    func waitUntilOpen() throws -> ReadAheadFile.Opened {
        condition.lock()
        defer { condition.unlock() }
        while opened == nil && openFailure == nil { condition.wait() }
        if let openFailure { throw openFailure }
        guard let opened else { throw EPFError.io(path: path, call: "open", errno: EIO) }
        return opened
    }

    // MARK: The background thread

    func work() {
        let decoder: ByteSource
        do {
            let digest = options.verifySidecars ? try FeedInput.verifySidecar(of: path) : nil
            let file = try FileByteSource(path: path)
            let totalSize = (try? file.size()) ?? 0
            let raw = CountingSource(file)
            decoder = try FeedInput.bzip2(raw, path, options)
            condition.lock()
            opened = ReadAheadFile.Opened(digest: digest, raw: raw, totalSize: totalSize)
            condition.broadcast()
            condition.unlock()
        } catch {
            condition.lock()
            openFailure = error
            condition.broadcast()
            condition.unlock()
            return
        }
        pump(decoder)
    }

    /// Whether another chunk may be decompressed: always when nothing is queued (the reader may be waiting), else
    /// while memory or the spill file has room.
    private func hasRoom() -> Bool {
        if queue.isEmpty { return true }
        if memoryBytes + limits.chunkBytes <= limits.memoryBytes { return true }
        return !spillUnusable && spillDirectory != nil && spillEnd + Int64(limits.chunkBytes) <= limits.spillBytes
    }

    private func pump(_ decoder: ByteSource) {
        while true {
            condition.lock()
            while !cancelled && !hasRoom() { condition.wait() }
            let stop = cancelled
            condition.unlock()
            if stop { return }

            let buffer = UnsafeMutableRawPointer.allocate(byteCount: limits.chunkBytes, alignment: 64)
            var count = 0
            var error: Error?
            do {
                // Fill the whole chunk unless the stream ends, so the reader sees few small chunks.
                while count < limits.chunkBytes {
                    let read = try decoder.read(into: UnsafeMutableRawBufferPointer(start: buffer + count,
                                                                                   count: limits.chunkBytes - count))
                    if read == 0 { break }
                    count += read
                }
            } catch let caught {
                error = caught
            }
            condition.lock()
            if count > 0 {
                keep(buffer, count: count)
            } else {
                buffer.deallocate()
            }
            if let error {
                failure = error
            } else if count < limits.chunkBytes {
                ended = true
            }
            let finished = failure != nil || ended
            condition.broadcast()
            condition.unlock()
            if finished { return }
        }
    }

    /// Queues a chunk: in memory while there is room, else in the spill file. Called with the lock held.
    private func keep(_ buffer: UnsafeMutableRawPointer, count: Int) {
        if cancelled {
            buffer.deallocate()
            return
        }
        if memoryBytes + count > limits.memoryBytes, !spillUnusable, let directory = spillDirectory,
           spillEnd + Int64(count) <= limits.spillBytes {
            do {
                if spill == nil { spill = try SpillFile(directory: directory) }
                if let spill {
                    try spill.write(UnsafeRawBufferPointer(start: buffer, count: count), at: spillEnd)
                    queue.append(.spill(offset: spillEnd, count: count))
                    spillEnd += Int64(count)
                    spillSegments += 1
                    spillMost = max(spillMost, spillEnd)
                    buffer.deallocate()
                    return
                }
            } catch {
                // No room on the disk or no spill directory: keep this chunk in memory and no more.
                spillUnusable = true
            }
        }
        queue.append(.memory(buffer, count))
        memoryBytes += count
    }

    // MARK: The reader

    /// The next chunk in order, nil at the end; rethrows the decoder's failure after the bytes before it.
    func next() throws -> (buffer: UnsafeMutableRawPointer, count: Int)? {
        condition.lock()
        while queue.isEmpty && failure == nil && !ended { condition.wait() }
        guard !queue.isEmpty else {
            let error = failure
            condition.unlock()
            if let error { throw error }
            return nil
        }
        let segment = queue.removeFirst()
        switch segment {
        case .memory(let buffer, let count):
            condition.unlock()
            return (buffer, count)
        case .spill(let offset, let count):
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 64)
            memoryBytes += count
            let file = spill
            condition.unlock()
            do {
                // The thread writes only past `spillEnd` while this segment is counted, so this range is stable.
                guard let file else { throw EPFError.io(path: path, call: "pread", errno: EBADF) }
                try file.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: count), at: offset)
            } catch {
                // The spill file failed under the reader: the stream cannot go on, say so on every later read.
                buffer.deallocate()
                condition.lock()
                memoryBytes -= count
                failure = error
                for case .memory(let kept, _) in queue { kept.deallocate() }
                queue = []
                cancelled = true
                condition.broadcast()
                condition.unlock()
                throw error
            }
            condition.lock()
            spillSegments -= 1
            if spillSegments == 0 { spillEnd = 0 }
            condition.broadcast()
            condition.unlock()
            return (buffer, count)
        }
    }

    /// Frees a chunk the reader has used up, making room for the thread.
    func release(_ buffer: UnsafeMutableRawPointer, count: Int) {
        buffer.deallocate()
        condition.lock()
        memoryBytes -= count
        condition.broadcast()
        condition.unlock()
    }
}
