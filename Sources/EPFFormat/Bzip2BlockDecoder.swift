import CBzip2
import Foundation

/// libbz2's streaming decoder over one standalone span stream. The corresponding C calls are
/// `BZ2_bzDecompressInit`, `BZ2_bzDecompress` and `BZ2_bzDecompressEnd`.
///
/// The `bz_stream` lives on the heap because libbz2's state points back at it; the decoder can be handed from a
/// worker thread to the reading thread (one thread at a time), which finishes a block whose output was too large
/// to buffer whole.
final class Bzip2LiveDecoder: @unchecked Sendable {
    private let stream: UnsafeMutablePointer<bz_stream>
    /// Keeps the input alive while libbz2 points into it.
    let input: Bzip2SpanBuffer
    private var active = false

    /// Starts decoding `input`; nil with libbz2's code when it cannot start.
    init(_ input: Bzip2SpanBuffer) throws(Bzip2DecodeFailure) {
        self.input = input
        stream = UnsafeMutablePointer<bz_stream>.allocate(capacity: 1)
        stream.initialize(to: bz_stream())
        let rc = BZ2_bzDecompressInit(stream, 0, 0)
        guard rc == BZ_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw Bzip2DecodeFailure(code: rc, producedOutput: false, bytesRead: 0, ranPastSpan: false, spanBytes: 0)
        }
        active = true
        stream.pointee.next_in = UnsafeMutableRawPointer(input.pointer).assumingMemoryBound(to: CChar.self)
        stream.pointee.avail_in = UInt32(input.streamBytes)
    }

    deinit {
        if active { BZ2_bzDecompressEnd(stream) }
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Bytes of output produced so far.
    private(set) var produced = 0

    /// What one call to `decode(into:count:)` came to.
    enum Step {
        /// `count` bytes written; more may follow.
        case more(Int)
        /// `count` bytes written and the block (and its CRC) is complete.
        case finished(Int)
    }

    /// Decodes into `buffer`, up to `count` bytes. Throws when the data is corrupt or ends early.
    func decode(into buffer: UnsafeMutableRawPointer, count: Int) throws(Bzip2DecodeFailure) -> Step {
        let capacity = UInt32(min(count, Int(UInt32.max)))
        stream.pointee.next_out = buffer.assumingMemoryBound(to: CChar.self)
        stream.pointee.avail_out = capacity
        let rc = BZ2_bzDecompress(stream)
        let written = Int(capacity - stream.pointee.avail_out)
        produced += written
        switch rc {
        case BZ_STREAM_END:
            return .finished(written)
        case BZ_OK where stream.pointee.avail_out == 0 || written > 0:
            return .more(written)
        case BZ_OK:
            // All the input was given, so libbz2 asking for more means the span ended inside the block.
            throw failure(code: BZ_UNEXPECTED_EOF)
        default:
            throw failure(code: rc)
        }
    }

    private func failure(code: Int32) -> Bzip2DecodeFailure {
        let read = Int(input.streamBytes) - Int(stream.pointee.avail_in)
        return Bzip2DecodeFailure(code: code, producedOutput: produced > 0, bytesRead: read,
                                  ranPastSpan: code == BZ_UNEXPECTED_EOF || read >= input.spanEndByte,
                                  spanBytes: (input.spanBits + 7) / 8)
    }
}

/// Why a span did not decode.
struct Bzip2DecodeFailure: Error {
    /// libbz2's return code (`BZ_UNEXPECTED_EOF` when it wanted input past the end).
    var code: Int32
    /// Output came out before the failure: the block's data was whole, so its CRC or what follows it is bad.
    var producedOutput: Bool
    /// Bytes of the standalone stream libbz2 had read (4 header bytes, then the span).
    var bytesRead: Int
    /// libbz2 read past the span's own bits: a longer span (past a false boundary) might decode.
    var ranPastSpan: Bool
    /// Bytes of span bits in the stream.
    var spanBytes: Int
    /// The block's whole output when it matched the block CRC and only what follows the block was bad (a file cut
    /// or damaged at the next magic): it is delivered before the error, as the serial decoder does.
    var intactOutput: Bzip2BlockOutput?

    /// Whether merging the span with the next one can help: only when decoding failed past the span's end
    /// before any output (the block went on past the candidate boundary).
    var mergeable: Bool { ranPastSpan && !producedOutput }

    /// Where in the span libbz2 stopped (bytes from its start): at most the span's end, for a block that ran on
    /// past it into the trailer added for decoding.
    var spanOffset: Int { max(0, min(bytesRead - 4, spanBytes)) }

    /// A readable description of the code.
    var message: String {
        switch code {
        case BZ_DATA_ERROR: return "data integrity error (BZ_DATA_ERROR)"
        case BZ_DATA_ERROR_MAGIC: return "not bzip2 data (BZ_DATA_ERROR_MAGIC)"
        case BZ_MEM_ERROR: return "out of memory (BZ_MEM_ERROR)"
        case BZ_UNEXPECTED_EOF: return "data integrity error (a block runs past its end)"
        default: return "libbz2 returned \(code)"
        }
    }
}

/// A decoded block, whole or (when larger than the limit) its first part plus the decoder to finish it.
/// Sendable unchecked: made by the worker that decoded it, then handed to the reading thread through the job's
/// monitor; immutable but for the decoder in `rest`, which only the reading thread drives from then on.
final class Bzip2BlockOutput: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer
    let count: Int
    /// Set when the block's output did not fit in the limit: the reader finishes it from here.
    let rest: Bzip2LiveDecoder?

    init(pointer: UnsafeMutableRawPointer, count: Int, rest: Bzip2LiveDecoder?) {
        self.pointer = pointer
        self.count = count
        self.rest = rest
    }

    deinit {
        pointer.deallocate()
    }

    /// Decodes `input` into memory, at most `limit` bytes; beyond that the rest is left to the caller.
    static func decode(_ input: Bzip2SpanBuffer, limit: Int) -> Result<Bzip2BlockOutput, Bzip2DecodeFailure> {
        let decoder: Bzip2LiveDecoder
        do {
            decoder = try Bzip2LiveDecoder(input)
        } catch {
            return .failure(error)
        }
        // A block's output is about its level × 100 kB unless it holds long runs.
        var capacity = min(limit, input.level * 100_000 + 100_000)
        var buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        var count = 0
        while true {
            if count == capacity {
                if capacity >= limit {
                    // Part of the block goes out before libbz2 has checked the block's CRC at its end. That is
                    // what libbz2 does too, but only if this span is the whole block: one that runs on past a
                    // false boundary decodes the span plus the trailer added to it into other bytes, which only
                    // the CRC reveals (found by the fuzzer: different bytes from the first on). So the block is
                    // first decoded to its end once, keeping nothing.
                    if let failure = verifyWhole(input) {
                        buffer.deallocate()
                        return .failure(failure)
                    }
                    return .success(Bzip2BlockOutput(pointer: buffer, count: count, rest: decoder))
                }
                let grown = min(limit, capacity * 2)
                let bigger = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 16)
                bigger.copyMemory(from: buffer, byteCount: count)
                buffer.deallocate()
                buffer = bigger
                capacity = grown
            }
            do {
                switch try decoder.decode(into: buffer + count, count: capacity - count) {
                case .more(let written):
                    count += written
                case .finished(let written):
                    return .success(Bzip2BlockOutput(pointer: buffer, count: count + written, rest: nil))
                }
            } catch {
                var failed = error
                // Output that matches the block's CRC is whole: what failed is what follows the block.
                // The failing call may have written the block's last bytes before it failed.
                let whole = decoder.produced
                if whole > 0 && Bzip2CRC.checksum(buffer, count: whole) == input.blockCRC {
                    failed.intactOutput = Bzip2BlockOutput(pointer: buffer, count: whole, rest: nil)
                } else {
                    buffer.deallocate()
                }
                return .failure(failed)
            }
        }
    }
}

/// Decodes the whole of `input` once, keeping no output: nil when libbz2 reaches the end of the stream (the block's
/// CRC and the stream's checked), else why not.
private func verifyWhole(_ input: Bzip2SpanBuffer) -> Bzip2DecodeFailure? {
    let scratchBytes = 1 << 16
    let scratch = UnsafeMutableRawPointer.allocate(byteCount: scratchBytes, alignment: 16)
    defer { scratch.deallocate() }
    do {
        let decoder = try Bzip2LiveDecoder(input)
        while true {
            if case .finished = try decoder.decode(into: scratch, count: scratchBytes) { return nil }
        }
    } catch {
        return error
    }
}

/// The CRC bzip2 keeps per block: CRC-32 with polynomial 0x04C11DB7, most significant bit first.
enum Bzip2CRC {
    static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index) << 24
        for _ in 0..<8 { value = value & 0x8000_0000 != 0 ? value << 1 ^ 0x04C1_1DB7 : value << 1 }
        return value
    }

    /// The CRC of `count` bytes at `base`.
    static func checksum(_ base: UnsafeRawPointer, count: Int) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        table.withUnsafeBufferPointer { table in
            let bytes = base.assumingMemoryBound(to: UInt8.self)
            for index in 0..<count {
                crc = crc << 8 ^ table[Int(UInt8(truncatingIfNeeded: crc >> 24) ^ bytes[index])]
            }
        }
        return ~crc
    }
}
