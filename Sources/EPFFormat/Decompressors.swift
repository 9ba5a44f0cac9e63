import CBzip2
import CZlib
import Foundation

/// Decompresses a gzip stream (one or several concatenated members) with zlib's `inflate`.
package final class GzipByteSource: ByteSource {
    private let inner: ByteSource
    private let path: String
    /// The C stream, at a heap address of its own: the library keeps pointers into it between calls.
    private let stream: UnsafeMutablePointer<z_stream>
    private var input: UnsafeMutableRawPointer
    private let inputCapacity = 1 << 18
    private var inputEnd = false
    private var finished = false
    private var compressedOffset: Int64 = 0
    private var initialized = false

    /// Wraps the compressed bytes of `inner`; `path` names the file in errors.
    package init(_ inner: ByteSource, path: String) throws {
        self.inner = inner
        self.path = path
        input = UnsafeMutableRawPointer.allocate(byteCount: inputCapacity, alignment: 16)
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // 15 + 32: zlib detects the gzip header itself.
        let rc = inflateInit2_(stream, 15 + 32, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard rc == Z_OK else {
            // deinit frees the buffers: every stored property is set by now.
            throw EPFError.gzip(path: path, message: "inflateInit2 failed (\(rc))", compressedOffset: 0)
        }
        initialized = true
    }

    deinit {
        if initialized { inflateEnd(stream) }
        stream.deinitialize(count: 1)
        stream.deallocate()
        input.deallocate()
    }

    private func refill() throws {
        let count = try inner.read(into: UnsafeMutableRawBufferPointer(start: input, count: inputCapacity))
        if count == 0 { inputEnd = true }
        stream.pointee.next_in = input.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_in = uInt(count)
        compressedOffset += Int64(count)
    }

    package func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard !finished, let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        stream.pointee.next_out = base.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = uInt(min(buffer.count, Int(UInt32.max)))
        while stream.pointee.avail_out == uInt(min(buffer.count, Int(UInt32.max))) {
            if stream.pointee.avail_in == 0 {
                if inputEnd {
                    throw EPFError.gzip(path: path, message: "unexpected end of file (the archive is truncated)",
                                        compressedOffset: compressedOffset)
                }
                try refill()
                if inputEnd && stream.pointee.avail_in == 0 { continue }
            }
            let rc = inflate(stream, Z_NO_FLUSH)
            if rc == Z_STREAM_END {
                // Another gzip member may follow.
                if stream.pointee.avail_in == 0 && !inputEnd { try refill() }
                if stream.pointee.avail_in == 0 {
                    finished = true
                    break
                }
                guard inflateReset(stream) == Z_OK else {
                    throw EPFError.gzip(path: path, message: "inflateReset failed", compressedOffset: compressedOffset)
                }
                continue
            }
            if rc != Z_OK && rc != Z_BUF_ERROR {
                let message = stream.pointee.msg.map { String(cString: $0) } ?? "inflate returned \(rc)"
                throw EPFError.gzip(path: path, message: message,
                                    compressedOffset: compressedOffset - Int64(stream.pointee.avail_in))
            }
        }
        return buffer.count - Int(stream.pointee.avail_out)
    }
}

/// Decompresses a bzip2 stream (one or several concatenated streams) with libbz2.
package final class Bzip2ByteSource: ByteSource {
    private let inner: ByteSource
    private let path: String
    /// The C stream, at a heap address of its own: the library keeps pointers into it between calls.
    private let stream: UnsafeMutablePointer<bz_stream>
    private var input: UnsafeMutableRawPointer
    private let inputCapacity = 1 << 18
    private var inputEnd = false
    private var finished = false
    private var active = false
    private var compressedOffset: Int64 = 0

    /// Wraps the compressed bytes of `inner`; `path` names the file in errors.
    package init(_ inner: ByteSource, path: String) throws {
        self.inner = inner
        self.path = path
        input = UnsafeMutableRawPointer.allocate(byteCount: inputCapacity, alignment: 16)
        stream = .allocate(capacity: 1)
        stream.initialize(to: bz_stream())
        try start()
    }

    deinit {
        if active { BZ2_bzDecompressEnd(stream) }
        stream.deinitialize(count: 1)
        stream.deallocate()
        input.deallocate()
    }

    private func start() throws {
        // A new stream after a finished one keeps the pending input and the caller's output space.
        let (nextIn, availIn) = (stream.pointee.next_in, stream.pointee.avail_in)
        let (nextOut, availOut) = (stream.pointee.next_out, stream.pointee.avail_out)
        stream.pointee = bz_stream()
        stream.pointee.next_in = nextIn
        stream.pointee.avail_in = availIn
        stream.pointee.next_out = nextOut
        stream.pointee.avail_out = availOut
        let rc = BZ2_bzDecompressInit(stream, 0, 0)
        guard rc == BZ_OK else {
            throw EPFError.bzip2(path: path, message: "BZ2_bzDecompressInit failed (\(rc))",
                                 compressedOffset: compressedOffset)
        }
        active = true
    }

    private func refill() throws {
        let count = try inner.read(into: UnsafeMutableRawBufferPointer(start: input, count: inputCapacity))
        if count == 0 { inputEnd = true }
        stream.pointee.next_in = input.assumingMemoryBound(to: CChar.self)
        stream.pointee.avail_in = UInt32(count)
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

    package func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard !finished, let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        let capacity = UInt32(min(buffer.count, Int(UInt32.max)))
        stream.pointee.next_out = base.assumingMemoryBound(to: CChar.self)
        stream.pointee.avail_out = capacity
        while stream.pointee.avail_out == capacity {
            if stream.pointee.avail_in == 0 {
                if inputEnd {
                    throw EPFError.bzip2(path: path, message: "unexpected end of file (the archive is truncated)",
                                         compressedOffset: compressedOffset)
                }
                try refill()
                if inputEnd && stream.pointee.avail_in == 0 { continue }
            }
            let rc = BZ2_bzDecompress(stream)
            if rc == BZ_STREAM_END {
                BZ2_bzDecompressEnd(stream)
                active = false
                if stream.pointee.avail_in == 0 && !inputEnd { try refill() }
                if stream.pointee.avail_in == 0 {
                    finished = true
                    break
                }
                try start()
                continue
            }
            if rc != BZ_OK {
                throw EPFError.bzip2(path: path, message: Self.message(rc),
                                     compressedOffset: compressedOffset - Int64(stream.pointee.avail_in))
            }
        }
        return Int(capacity - stream.pointee.avail_out)
    }
}
