import Foundation

/// The bits between two candidate block boundaries, re-aligned as a standalone one-block bzip2 stream:
/// `BZh<level>`, the span's bits from byte 4 on, the end-of-stream magic, the block's own CRC as the combined CRC
/// (for one block the combined CRC is the block CRC) and padding. libbz2 then decodes it and checks the block CRC.
///
/// Immutable after `init`; owns its memory.
final class Bzip2SpanBuffer: @unchecked Sendable {
    /// Header, span bits, trailer: the standalone stream.
    let pointer: UnsafeMutableRawPointer
    /// Bytes of the standalone stream.
    let streamBytes: Int
    /// Bits of the span itself, stored from bit 32 on.
    let spanBits: Int
    /// The CRC stored after the block magic (bits 48..<80 of the span), 0 when the span is shorter.
    let blockCRC: UInt32
    /// The level digit written in the header.
    let level: Int

    /// A piece of bits to copy: `count` bits from `bit` bits after `base`, which has 16 readable bytes of slack.
    struct Part {
        var base: UnsafeRawPointer
        var bit: Int
        var count: Int
    }

    /// Builds the standalone stream of the concatenation of `parts`.
    init(level: Int, parts: [Part]) {
        let total = parts.reduce(0) { $0 + $1.count }
        let capacity = 4 + (total + 7) / 8 + 10 + 24
        pointer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        pointer.initializeMemory(as: UInt8.self, repeating: 0, count: capacity)
        var writer = Bzip2BitWriter(pointer)
        let digit = UInt64(UInt8(ascii: "0") + UInt8(max(1, min(9, level))))
        writer.append(UInt64(0x425A68) << 8 | digit, bits: 32)
        for part in parts {
            writer.append(from: part.base, bit: part.bit, count: part.count)
        }
        spanBits = total
        blockCRC = total >= 80 ? UInt32(Bzip2Bits.bits(pointer, bit: 32 + 48, count: 32)) : 0
        writer.append(Bzip2Bits.endMagic, bits: 48)
        writer.append(UInt64(blockCRC), bits: 32)
        streamBytes = writer.byteCount
        self.level = level
    }

    /// The same span under another level digit.
    func relevelled(_ level: Int) -> Bzip2SpanBuffer {
        Bzip2SpanBuffer(level: level, parts: [asPart])
    }

    /// The span's bits, for concatenation.
    var asPart: Part { Part(base: pointer, bit: 32, count: spanBits) }

    /// Bytes of the stream that hold span bits (the last one possibly shared with the trailer): libbz2 failing
    /// before it has read this many bytes failed on the span's own bits.
    var spanEndByte: Int { (32 + spanBits + 7) / 8 }

    deinit {
        pointer.deallocate()
    }
}
