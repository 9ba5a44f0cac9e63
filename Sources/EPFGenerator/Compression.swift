import CBzip2
import CZlib

/// Compresses with libbz2 (`BZ2_bzCompress`) and passes the compressed bytes on.
///
/// The `bz_stream` lives at a fixed heap address because libbz2 keeps a pointer back to it.
final class Bzip2Sink: ByteSink {
    private let next: ByteSink
    private let path: String
    private let stream: UnsafeMutablePointer<bz_stream>
    private var output: [UInt8]
    private var open = true

    /// Starts a compressor; `blockSize100k` 1...9 as in `bzip2 -1` ... `bzip2 -9`.
    init(next: ByteSink, path: String, blockSize100k: Int32 = 9) throws {
        self.next = next
        self.path = path
        output = [UInt8](repeating: 0, count: 1 << 18)
        stream = UnsafeMutablePointer<bz_stream>.allocate(capacity: 1)
        stream.initialize(to: bz_stream())
        let code = BZ2_bzCompressInit(stream, blockSize100k, 0, 0)
        guard code == BZ_OK else {
            open = false
            stream.deallocate()
            throw GeneratorError.bzip2(call: "BZ2_bzCompressInit", code: code, path: path)
        }
    }

    deinit {
        if open { BZ2_bzCompressEnd(stream) }
        stream.deallocate()
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: CChar.self))
        stream.pointee.avail_in = UInt32(bytes.count)
        while stream.pointee.avail_in > 0 {
            try step(action: BZ_RUN, expected: BZ_RUN_OK)
        }
    }

    func finish() throws {
        guard open else { return }
        stream.pointee.next_in = nil
        stream.pointee.avail_in = 0
        var code: Int32 = BZ_FINISH_OK
        while code == BZ_FINISH_OK {
            code = try step(action: BZ_FINISH, expected: nil)
        }
        guard code == BZ_STREAM_END else {
            throw GeneratorError.bzip2(call: "BZ2_bzCompress(BZ_FINISH)", code: code, path: path)
        }
        let endCode = BZ2_bzCompressEnd(stream)
        open = false
        guard endCode == BZ_OK else {
            throw GeneratorError.bzip2(call: "BZ2_bzCompressEnd", code: endCode, path: path)
        }
        try next.finish()
    }

    /// Runs one `BZ2_bzCompress` call into the output buffer and passes on what it produced.
    @discardableResult
    private func step(action: Int32, expected: Int32?) throws -> Int32 {
        let capacity = output.count
        let code = output.withUnsafeMutableBytes { raw -> Int32 in
            stream.pointee.next_out = raw.baseAddress?.assumingMemoryBound(to: CChar.self)
            stream.pointee.avail_out = UInt32(capacity)
            return BZ2_bzCompress(stream, action)
        }
        if let expected, code != expected {
            throw GeneratorError.bzip2(call: "BZ2_bzCompress", code: code, path: path)
        }
        if code < 0 { throw GeneratorError.bzip2(call: "BZ2_bzCompress", code: code, path: path) }
        let produced = capacity - Int(stream.pointee.avail_out)
        if produced > 0 {
            try output.withUnsafeBytes { raw in
                try next.write(UnsafeRawBufferPointer(rebasing: raw[0..<produced]))
            }
        }
        return code
    }
}

/// Compresses to gzip format with zlib (`deflate`, window bits 15 + 16, header mtime 0 so output is
/// deterministic) and passes the compressed bytes on.
final class GzipSink: ByteSink {
    private let next: ByteSink
    private let path: String
    private let stream: UnsafeMutablePointer<z_stream>
    private var output: [UInt8]
    private var open = true

    /// Starts a compressor at `level` 1...9.
    init(next: ByteSink, path: String, level: Int32 = 6) throws {
        self.next = next
        self.path = path
        output = [UInt8](repeating: 0, count: 1 << 18)
        stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let code = deflateInit2_(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, zlibVersion(),
                                 Int32(MemoryLayout<z_stream>.size))
        guard code == Z_OK else {
            open = false
            stream.deallocate()
            throw GeneratorError.zlib(call: "deflateInit2", code: code, path: path)
        }
    }

    deinit {
        if open { deflateEnd(stream) }
        stream.deallocate()
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(bytes.count)
        while stream.pointee.avail_in > 0 {
            try step(flush: Z_NO_FLUSH)
        }
    }

    func finish() throws {
        guard open else { return }
        stream.pointee.next_in = nil
        stream.pointee.avail_in = 0
        var code = Z_OK
        while code != Z_STREAM_END {
            code = try step(flush: Z_FINISH)
        }
        deflateEnd(stream)
        open = false
        try next.finish()
    }

    @discardableResult
    private func step(flush: Int32) throws -> Int32 {
        let capacity = output.count
        let code = output.withUnsafeMutableBytes { raw -> Int32 in
            stream.pointee.next_out = raw.baseAddress?.assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_out = uInt(capacity)
            return deflate(stream, flush)
        }
        guard code == Z_OK || code == Z_STREAM_END || code == Z_BUF_ERROR else {
            throw GeneratorError.zlib(call: "deflate", code: code, path: path)
        }
        let produced = capacity - Int(stream.pointee.avail_out)
        if produced > 0 {
            try output.withUnsafeBytes { raw in
                try next.write(UnsafeRawBufferPointer(rebasing: raw[0..<produced]))
            }
        }
        return code
    }
}
