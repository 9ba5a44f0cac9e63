import CZlib
import EPFFormat

/// The gzip reader (`GzipByteSource`, concatenated members) against zlib's `inflate` driven over the whole input.
///
/// The first input byte picks the input and output read sizes; the rest is the compressed file. The reader must
/// give zlib's bytes, or fail where zlib fails (after a prefix of its bytes).
enum GzipHarness {
    static func run(_ data: UnsafeRawBufferPointer) throws(FuzzFailure) {
        guard let knob = data.first else { return }
        let compressed = Array(data.dropFirst())
        let reference = ZlibReference.inflateMembers(compressed)
        let maximumRead = [Int.max, 1, 3, 100][Int(knob & 3)]
        let chunk = [1 << 16, 1, 7, 512][Int(knob >> 2 & 3)]
        let reader: GzipByteSource
        do {
            reader = try GzipByteSource(MemoryByteSource(compressed, maximumRead: maximumRead), path: "fuzz.gz")
        } catch {
            throw FuzzFailure(description: "GzipByteSource cannot start: \(error)")
        }
        try checkSameAnswer(drain(reader, chunk: chunk), reference,
                            "gzip reader (pieces \(maximumRead), reads of \(chunk))")
    }
}

/// zlib's `inflate` with gzip and zlib header detection over a whole input, member after member.
enum ZlibReference {
    static func inflateMembers(_ input: [UInt8]) -> Drained {
        var result = Drained()
        var input = input
        let output = UnsafeMutablePointer<Bytef>.allocate(capacity: 1 << 16)
        defer { output.deallocate() }
        input.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress, !buffer.isEmpty else {
                result.error = "empty input"
                return
            }
            var offset = 0
            while offset < buffer.count {
                var stream = z_stream()
                guard inflateInit2_(&stream, 15 + 32, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
                    result.error = "inflateInit2 failed"
                    return
                }
                defer { inflateEnd(&stream) }
                stream.next_in = base + offset
                stream.avail_in = uInt(buffer.count - offset)
                var code = Z_OK
                while code == Z_OK {
                    stream.next_out = output
                    stream.avail_out = 1 << 16
                    code = inflate(&stream, Z_NO_FLUSH)
                    let produced = (1 << 16) - Int(stream.avail_out)
                    result.bytes += UnsafeRawBufferPointer(start: output, count: produced)
                    if result.bytes.count >= drainLimit {
                        result.bytes.removeLast(result.bytes.count - drainLimit)
                        return
                    }
                    if code == Z_BUF_ERROR || (code == Z_OK && produced == 0 && stream.avail_in == 0) {
                        result.error = "unexpected end of input"
                        return
                    }
                }
                guard code == Z_STREAM_END else {
                    result.error = "zlib code \(code)"
                    return
                }
                offset = buffer.count - Int(stream.avail_in)
            }
            result.finished = true
        }
        return result
    }
}
