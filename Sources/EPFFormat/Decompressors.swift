import CBzip2
import CZlib
import Foundation

/// Decompresses a gzip stream (one or several concatenated members) with zlib's `inflate`.
public final class GzipByteSource: ByteSource {
    private let inner: ByteSource
    private let path: String
    private var stream = z_stream()
    private var input: UnsafeMutableRawPointer
    private let inputCapacity = 1 << 18
    private var inputEnd = false
    private var finished = false
    private var compressedOffset: Int64 = 0
    private var initialized = false

    /// Wraps the compressed bytes of `inner`; `path` names the file in errors.
    public init(_ inner: ByteSource, path: String) throws {
        self.inner = inner
        self.path = path
        input = UnsafeMutableRawPointer.allocate(byteCount: inputCapacity, alignment: 16)
        // 15 + 32: zlib detects the gzip header itself.
        let rc = inflateInit2_(&stream, 15 + 32, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard rc == Z_OK else {
            input.deallocate()
            throw EPFError.gzip(path: path, message: "inflateInit2 failed (\(rc))", compressedOffset: 0)
        }
        initialized = true
    }

    deinit {
        if initialized { inflateEnd(&stream) }
        input.deallocate()
    }

    private func refill() throws {
        let count = try inner.read(into: UnsafeMutableRawBufferPointer(start: input, count: inputCapacity))
        if count == 0 { inputEnd = true }
        stream.next_in = input.assumingMemoryBound(to: Bytef.self)
        stream.avail_in = uInt(count)
        compressedOffset += Int64(count)
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard !finished, let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        stream.next_out = base.assumingMemoryBound(to: Bytef.self)
        stream.avail_out = uInt(min(buffer.count, Int(UInt32.max)))
        while stream.avail_out == uInt(min(buffer.count, Int(UInt32.max))) {
            if stream.avail_in == 0 {
                if inputEnd {
                    throw EPFError.gzip(path: path, message: "unexpected end of file (the archive is truncated)",
                                        compressedOffset: compressedOffset)
                }
                try refill()
                if inputEnd && stream.avail_in == 0 { continue }
            }
            let rc = inflate(&stream, Z_NO_FLUSH)
            if rc == Z_STREAM_END {
                // Another gzip member may follow.
                if stream.avail_in == 0 && !inputEnd { try refill() }
                if stream.avail_in == 0 {
                    finished = true
                    break
                }
                guard inflateReset(&stream) == Z_OK else {
                    throw EPFError.gzip(path: path, message: "inflateReset failed", compressedOffset: compressedOffset)
                }
                continue
            }
            if rc != Z_OK && rc != Z_BUF_ERROR {
                let message = stream.msg.map { String(cString: $0) } ?? "inflate returned \(rc)"
                throw EPFError.gzip(path: path, message: message,
                                    compressedOffset: compressedOffset - Int64(stream.avail_in))
            }
        }
        return buffer.count - Int(stream.avail_out)
    }
}

/// Decompresses a bzip2 stream (one or several concatenated streams) with libbz2.
public final class Bzip2ByteSource: ByteSource {
    private let inner: ByteSource
    private let path: String
    private var stream = bz_stream()
    private var input: UnsafeMutableRawPointer
    private let inputCapacity = 1 << 18
    private var inputEnd = false
    private var finished = false
    private var active = false
    private var compressedOffset: Int64 = 0

    /// Wraps the compressed bytes of `inner`; `path` names the file in errors.
    public init(_ inner: ByteSource, path: String) throws {
        self.inner = inner
        self.path = path
        input = UnsafeMutableRawPointer.allocate(byteCount: inputCapacity, alignment: 16)
        try start()
    }

    deinit {
        if active { BZ2_bzDecompressEnd(&stream) }
        input.deallocate()
    }

    private func start() throws {
        // A new stream after a finished one keeps the pending input and the caller's output space.
        let (nextIn, availIn) = (stream.next_in, stream.avail_in)
        let (nextOut, availOut) = (stream.next_out, stream.avail_out)
        stream = bz_stream()
        stream.next_in = nextIn
        stream.avail_in = availIn
        stream.next_out = nextOut
        stream.avail_out = availOut
        let rc = BZ2_bzDecompressInit(&stream, 0, 0)
        guard rc == BZ_OK else {
            throw EPFError.bzip2(path: path, message: "BZ2_bzDecompressInit failed (\(rc))",
                                 compressedOffset: compressedOffset)
        }
        active = true
    }

    private func refill() throws {
        let count = try inner.read(into: UnsafeMutableRawBufferPointer(start: input, count: inputCapacity))
        if count == 0 { inputEnd = true }
        stream.next_in = input.assumingMemoryBound(to: CChar.self)
        stream.avail_in = UInt32(count)
        compressedOffset += Int64(count)
    }

    private static func message(_ code: Int32) -> String {
        switch code {
        case BZ_DATA_ERROR: return "data integrity error (BZ_DATA_ERROR)"
        case BZ_DATA_ERROR_MAGIC: return "not bzip2 data (BZ_DATA_ERROR_MAGIC)"
        case BZ_MEM_ERROR: return "out of memory (BZ_MEM_ERROR)"
        case BZ_PARAM_ERROR: return "parameter error (BZ_PARAM_ERROR)"
        default: return "libbz2 returned \(code)"
        }
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard !finished, let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        let capacity = UInt32(min(buffer.count, Int(UInt32.max)))
        stream.next_out = base.assumingMemoryBound(to: CChar.self)
        stream.avail_out = capacity
        while stream.avail_out == capacity {
            if stream.avail_in == 0 {
                if inputEnd {
                    throw EPFError.bzip2(path: path, message: "unexpected end of file (the archive is truncated)",
                                         compressedOffset: compressedOffset)
                }
                try refill()
                if inputEnd && stream.avail_in == 0 { continue }
            }
            let rc = BZ2_bzDecompress(&stream)
            if rc == BZ_STREAM_END {
                BZ2_bzDecompressEnd(&stream)
                active = false
                if stream.avail_in == 0 && !inputEnd { try refill() }
                if stream.avail_in == 0 {
                    finished = true
                    break
                }
                try start()
                continue
            }
            if rc != BZ_OK {
                throw EPFError.bzip2(path: path, message: Self.message(rc),
                                     compressedOffset: compressedOffset - Int64(stream.avail_in))
            }
        }
        return Int(capacity - stream.avail_out)
    }
}
