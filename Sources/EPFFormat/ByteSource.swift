import Foundation
import Synchronization

/// A stream of bytes: a file, a decompressor, a tar member.
package protocol ByteSource: AnyObject {
    /// Reads up to `buffer.count` bytes into `buffer`; returns how many, 0 only at the end of the stream.
    /// Throws an `EPFError` naming the path and offset when the underlying data is corrupt or unreadable.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
}

/// Retries a system call while it fails with `EINTR`, and turns any other failure into `EPFError.io`.
@inline(__always)
func retryingEINTR(_ path: String, _ call: String, _ body: () -> Int) throws -> Int {
    while true {
        let result = body()
        if result >= 0 { return result }
        if errno == EINTR { continue }
        throw EPFError.io(path: path, call: call, errno: errno)
    }
}

/// Reads a file with `read(2)`. The corresponding C calls are `open(2)`, `read(2)`, `close(2)`.
package final class FileByteSource: ByteSource {
    /// The path being read.
    package let path: String
    private let descriptor: Int32
    /// Bytes read so far.
    package private(set) var offset: Int64 = 0

    /// Opens `path` for reading. Throws `.notFound` or `.io` when it cannot be opened.
    package init(path: String) throws {
        self.path = path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { throw EPFError.notFound(path: path) }
            throw EPFError.io(path: path, call: "open", errno: errno)
        }
        descriptor = fd
        #if os(Linux)
        _ = posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL)
        #endif
    }

    deinit {
        close(descriptor)
    }

    package func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        let count = try retryingEINTR(path, "read") { Foundation.read(descriptor, base, buffer.count) }
        offset += Int64(count)
        return count
    }

    /// The file's size in bytes, from `fstat(2)`.
    package func size() throws -> Int64 {
        var info = stat()
        _ = try retryingEINTR(path, "fstat") { Int(fstat(descriptor, &info)) }
        return Int64(info.st_size)
    }
}

/// Serves bytes from memory; used by tests and benchmarks.
package final class MemoryByteSource: ByteSource {
    private let bytes: [UInt8]
    private var position = 0
    /// Most bytes handed out per `read`, to force chunk boundaries in tests.
    private let maximumRead: Int

    /// A source over `bytes`, returning at most `maximumRead` bytes per call.
    package init(_ bytes: [UInt8], maximumRead: Int = .max) {
        self.bytes = bytes
        self.maximumRead = max(1, maximumRead)
    }

    package func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let count = min(buffer.count, bytes.count - position, maximumRead)
        guard count > 0, let base = buffer.baseAddress else { return 0 }
        bytes.withUnsafeBytes { raw in
            guard let source = raw.baseAddress else { return }
            base.copyMemory(from: source + position, byteCount: count)
        }
        position += count
        return count
    }
}

/// Limits every `read` of another source to `maximumRead` bytes, to exercise chunk boundaries.
package final class ChunkLimitedSource: ByteSource {
    private let inner: ByteSource
    private let maximumRead: Int

    /// Wraps `inner`, handing out at most `maximumRead` (at least 1) bytes per call.
    package init(_ inner: ByteSource, maximumRead: Int) {
        self.inner = inner
        self.maximumRead = max(1, maximumRead)
    }

    package func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let count = min(buffer.count, maximumRead)
        return try inner.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]))
    }
}

/// Counts the bytes that pass through another source.
package final class CountingSource: ByteSource {
    private let inner: ByteSource
    /// Atomic: a read-ahead thread reads through this source while the import's progress reads the count.
    private let counted = Atomic<Int64>(0)

    /// Bytes read so far; may be read from any thread.
    package var count: Int64 { counted.load(ordering: .relaxed) }

    /// Wraps `inner`.
    package init(_ inner: ByteSource) { self.inner = inner }

    package func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let read = try inner.read(into: buffer)
        counted.add(Int64(read), ordering: .relaxed)
        return read
    }
}
