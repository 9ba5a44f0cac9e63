import Foundation

/// A scratch file that has no name: created in a directory and unlinked at once, so its space is freed when it is
/// closed, whether the process ends normally or is killed. The corresponding C calls are `mkstemp(3)`,
/// `unlink(2)`, `pwrite(2)`, `pread(2)` and `close(2)`; every failure throws `EPFError.io` naming the call.
package final class SpillFile: Sendable {
    /// The name the file had before it was unlinked, for errors.
    package let path: String
    private let descriptor: Int32

    /// Creates the file in `directory`, named from `prefix` until it is unlinked. Throws `EPFError.io` when it
    /// cannot be created or unlinked.
    package init(directory: String, prefix: String = ".epf-read-ahead") throws {
        var template = Array((directory as NSString).appendingPathComponent(prefix + "-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return -1 }
            return mkstemp(base)
        }
        let name = template.withUnsafeBufferPointer { buffer in
            buffer.baseAddress.map { String(cString: $0) } ?? directory
        }
        guard fd >= 0 else { throw EPFError.io(path: name, call: "mkstemp", errno: errno) }
        guard unlink(name) == 0 else {
            let code = errno
            close(fd)
            throw EPFError.io(path: name, call: "unlink", errno: code)
        }
        path = name
        descriptor = fd
    }

    deinit {
        close(descriptor)
    }

    /// Writes all of `bytes` at `offset`.
    package func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        guard let base = bytes.baseAddress else { return }
        try whole("pwrite", count: bytes.count) { done in
            pwrite(descriptor, base + done, bytes.count - done, off_t(offset) + off_t(done))
        }
    }

    /// Fills all of `buffer` from `offset`; a file shorter than that throws `EPFError.io` (EIO).
    package func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws {
        guard let base = buffer.baseAddress else { return }
        try whole("pread", count: buffer.count) { done in
            pread(descriptor, base + done, buffer.count - done, off_t(offset) + off_t(done))
        }
    }

    /// Repeats `call` (given the bytes done so far) until `count` bytes are done; 0 bytes done is EIO.
    private func whole(_ call: String, count: Int, _ body: (Int) -> Int) throws {
        var done = 0
        while done < count {
            let moved = try retryingEINTR(path, call) { body(done) }
            guard moved > 0 else { throw EPFError.io(path: path, call: call, errno: EIO) }
            done += moved
        }
    }
}
