import CBzip2
import EPFFormat

/// The parallel bzip2 decoder (block scanner, re-aligned spans, workers, merges of false boundaries) against
/// libbz2's own streaming decoder, and the serial `Bzip2ByteSource` as well.
///
/// The first input byte picks the scanner's read size, the output buffered per block, and the input read size;
/// the rest is the compressed file. Both decoders must give the same bytes, or both fail and agree on the bytes
/// both handed out (how much of a damaged block comes out before the error depends on buffer sizes).
enum Bzip2Harness {
    static func run(_ data: UnsafeRawBufferPointer) throws(FuzzFailure) {
        guard let knob = data.first else { return }
        let compressed = Array(data.dropFirst())
        let reference = LibBzip2Reference.decompress(compressed)
        let readSize = [64, 256, 4096, 1 << 16][Int(knob & 3)]
        let outputLimit = [1, 1000, 100_000, 4 << 20][Int(knob >> 2 & 3)]
        let maximumRead = knob & 0x10 == 0 ? Int.max : 7
        let parallel = ParallelBzip2ByteSource(MemoryByteSource(compressed, maximumRead: maximumRead),
                                               path: "fuzz.bz2", threads: 2, readSize: readSize,
                                               outputLimit: outputLimit)
        try checkSameAnswer(drain(parallel, chunk: 1 << 16), reference,
                            "parallel decoder (read \(readSize), limit \(outputLimit), pieces \(maximumRead))")
        if knob & 0x20 != 0 {
            do {
                let serial = try Bzip2ByteSource(MemoryByteSource(compressed), path: "fuzz.bz2")
                try checkSameAnswer(drain(serial, chunk: 4096), reference, "serial decoder")
            } catch let failure as FuzzFailure {
                throw failure
            } catch {
                throw FuzzFailure(description: "Bzip2ByteSource cannot start: \(error)")
            }
        }
    }
}

/// libbz2's streaming decoder over a whole input: concatenated streams, as `bzip2 -dc` reads them.
enum LibBzip2Reference {
    static func decompress(_ input: [UInt8]) -> Drained {
        var result = Drained()
        var input = input
        let output = UnsafeMutablePointer<CChar>.allocate(capacity: 1 << 16)
        defer { output.deallocate() }
        input.withUnsafeMutableBufferPointer { buffer in
            var offset = 0
            guard let base = buffer.baseAddress, !buffer.isEmpty else {
                result.error = "empty input"
                return
            }
            while offset < buffer.count {
                var stream = bz_stream()
                guard BZ2_bzDecompressInit(&stream, 0, 0) == BZ_OK else {
                    result.error = "BZ2_bzDecompressInit failed"
                    return
                }
                defer { BZ2_bzDecompressEnd(&stream) }
                stream.next_in = UnsafeMutableRawPointer(base + offset).assumingMemoryBound(to: CChar.self)
                stream.avail_in = UInt32(buffer.count - offset)
                var code = BZ_OK
                while code == BZ_OK {
                    stream.next_out = output
                    stream.avail_out = 1 << 16
                    code = BZ2_bzDecompress(&stream)
                    let produced = (1 << 16) - Int(stream.avail_out)
                    result.bytes += UnsafeRawBufferPointer(start: output, count: produced)
                    if result.bytes.count >= drainLimit {
                        result.bytes.removeLast(result.bytes.count - drainLimit)
                        return
                    }
                    if code == BZ_OK && produced == 0 && stream.avail_in == 0 {
                        result.error = "unexpected end of input"
                        return
                    }
                }
                guard code == BZ_STREAM_END else {
                    result.error = "libbz2 code \(code)"
                    return
                }
                offset = buffer.count - Int(stream.avail_in)
            }
            result.finished = true
        }
        return result
    }
}
