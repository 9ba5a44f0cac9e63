import CZlib

/// Compresses pages with zlib in the gzip format (Parquet's GZIP codec: RFC 1952, one member per page). One
/// `z_stream` is reused for every page (`deflateReset`).
final class GzipCompressor {
    private let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    private var output: [UInt8] = []

    /// `level` is zlib's (1 fastest ... 9 smallest). Throws `ParquetError.compression` when zlib refuses.
    init(level: Int32) throws {
        stream.initialize(to: z_stream())
        let code = deflateInit2_(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, zlibVersion(),
                                 Int32(MemoryLayout<z_stream>.size))
        guard code == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw ParquetError.compression(call: "deflateInit2", code: code)
        }
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// The gzip member of `input`. The corresponding C calls are `deflateReset`, `deflateBound` and `deflate`.
    func compress(_ input: [UInt8]) throws -> [UInt8] {
        var code = deflateReset(stream)
        guard code == Z_OK else { throw ParquetError.compression(call: "deflateReset", code: code) }
        let bound = Int(deflateBound(stream, uLong(input.count))) + 32
        if output.count < bound { output = [UInt8](repeating: 0, count: bound) }
        var produced = 0
        input.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                stream.pointee.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
                stream.pointee.avail_in = uInt(source.count)
                stream.pointee.next_out = target.baseAddress
                stream.pointee.avail_out = uInt(target.count)
                code = deflate(stream, Z_FINISH)
                produced = target.count - Int(stream.pointee.avail_out)
            }
        }
        guard code == Z_STREAM_END else { throw ParquetError.compression(call: "deflate", code: code) }
        return Array(output[0..<produced])
    }
}
