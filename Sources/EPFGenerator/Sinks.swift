import EPFFormat
import Foundation

/// What went wrong while generating a feed, and where.
package enum GeneratorError: Error, CustomStringConvertible, Equatable, Sendable {
    /// A system call failed; `call` is its name (e.g. `write(2)`), `path` the file it worked on.
    case system(call: String, path: String, errno: Int32)
    /// libbz2 returned `code` from `call` while writing `path`.
    case bzip2(call: String, code: Int32, path: String)
    /// zlib returned `code` from `call` while writing `path`.
    case zlib(call: String, code: Int32, path: String)
    /// A tar member received a different number of bytes than its header announced.
    case tarSizeMismatch(member: String, announced: Int64, written: Int64)
    /// An option is out of range or inconsistent; `option` names it, `problem` says why.
    case invalidOption(option: String, problem: String)
    /// A table name that the generator does not know.
    case unknownTable(String)

    /// A one-line explanation naming the call, file, table or option.
    package var description: String {
        switch self {
        case let .system(call, path, code):
            return "\(call) failed for \(path): \(String(cString: strerror(code))) (errno \(code))"
        case let .bzip2(call, code, path):
            return "\(call) returned \(code) while writing \(path)"
        case let .zlib(call, code, path):
            return "\(call) returned \(code) while writing \(path)"
        case let .tarSizeMismatch(member, announced, written):
            return "tar member \(member): header announced \(announced) bytes but \(written) were written"
        case let .invalidOption(option, problem):
            return "invalid \(option): \(problem)"
        case let .unknownTable(name):
            return "unknown table '\(name)'; known tables: \(GeneratedTables.all.map(\.name).joined(separator: ", "))"
        }
    }
}

/// Receives bytes from a writer; sinks chain (record writer -> tar -> bzip2 -> md5 -> file).
protocol ByteSink: AnyObject {
    /// Takes all of `bytes`; throws if they cannot be passed on.
    func write(_ bytes: UnsafeRawBufferPointer) throws
    /// Flushes and closes whatever this sink owns, then finishes the next sink.
    func finish() throws
}

extension ByteSink {
    /// Writes an array of bytes.
    func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }
}

/// Writes to a file with `write(2)`, retrying `EINTR` and short writes; closes it in `finish` or `deinit`.
final class FileSink: ByteSink {
    let path: String
    private var descriptor: Int32
    private(set) var bytesWritten: Int64 = 0

    /// Creates or truncates `path` (the corresponding C function is `open(2)`).
    init(path: String) throws {
        self.path = path
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        if descriptor < 0 { throw GeneratorError.system(call: "open(2)", path: path, errno: errno) }
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let written = Foundation.write(descriptor, base + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw GeneratorError.system(call: "write(2)", path: path, errno: errno)
            }
            offset += written
        }
        bytesWritten += Int64(bytes.count)
    }

    func finish() throws {
        guard descriptor >= 0 else { return }
        let result = close(descriptor)
        descriptor = -1
        if result != 0 { throw GeneratorError.system(call: "close(2)", path: path, errno: errno) }
    }
}

/// Counts bytes and drops them: the first pass that learns a tar member's size.
final class CountingSink: ByteSink {
    private(set) var count: Int64 = 0
    func write(_ bytes: UnsafeRawBufferPointer) throws { count += Int64(bytes.count) }
    func finish() throws {}
}

/// Keeps every byte in memory (small feeds, the model, tests).
final class MemorySink: ByteSink {
    private(set) var bytes: [UInt8] = []
    func write(_ bytes: UnsafeRawBufferPointer) throws { self.bytes.append(contentsOf: bytes) }
    func finish() throws {}
}

/// Hands every chunk to a closure; the record writer only flushes whole records, so chunks hold whole records.
final class CallbackSink: ByteSink {
    private let body: (UnsafeRawBufferPointer) throws -> Void
    init(_ body: @escaping (UnsafeRawBufferPointer) throws -> Void) { self.body = body }
    func write(_ bytes: UnsafeRawBufferPointer) throws { try body(bytes) }
    func finish() throws {}
}

/// Hashes what passes through, then passes it on; `hex` is valid after `finish`.
final class MD5Sink: ByteSink {
    private let next: ByteSink
    private var digest = MD5()
    private(set) var hex = ""
    private(set) var count: Int64 = 0

    init(next: ByteSink) { self.next = next }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        digest.update(bytes)
        count += Int64(bytes.count)
        try next.write(bytes)
    }

    func finish() throws {
        hex = digest.finalizeHex()
        try next.finish()
    }
}
