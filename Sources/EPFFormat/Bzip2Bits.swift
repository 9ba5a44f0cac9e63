import Foundation

/// Bit-level facts and helpers of the bzip2 format, shared by the block scanner and the parallel decoder.
///
/// A bzip2 stream is `BZh` + a level digit, then blocks that each start with the 48-bit magic `0x314159265359`
/// at any bit offset, then the end-of-stream magic `0x177245385090`, the 32-bit combined CRC and padding to a
/// byte. Bits are stored most significant first.
enum Bzip2Bits {
    /// The 48-bit magic that starts every block (the BCD digits of pi).
    static let blockMagic: UInt64 = 0x3141_5926_5359
    /// The 48-bit magic that ends a stream (the BCD digits of sqrt(pi)).
    static let endMagic: UInt64 = 0x1772_4538_5090
    /// The largest compressed block any encoder can write for a level: at most `level` × 100,000 symbols of at
    /// most 20 bits each, plus generous room for the tables. A longer span between two boundaries is an error.
    static func maximumBlockBytes(level: Int) -> Int {
        max(1, min(9, level)) * 250_000 + 65_536
    }

    /// Reads 8 bytes at `pointer` as a big-endian integer (no alignment needed).
    @inline(__always)
    static func load64(_ pointer: UnsafeRawPointer) -> UInt64 {
        UInt64(bigEndian: pointer.loadUnaligned(as: UInt64.self))
    }

    /// The 64 bits that start `bit` bits after `base`; reads 9 bytes from `base + bit / 8`.
    @inline(__always)
    static func word(_ base: UnsafeRawPointer, bit: Int) -> UInt64 {
        let shift = bit & 7
        let pointer = base + (bit >> 3)
        let high = load64(pointer)
        if shift == 0 { return high }
        return high << UInt64(shift) | UInt64(pointer.load(fromByteOffset: 8, as: UInt8.self)) >> UInt64(8 - shift)
    }

    /// `count` (1...57) bits that start `bit` bits after `base`, right-aligned; reads 8 bytes.
    @inline(__always)
    static func bits(_ base: UnsafeRawPointer, bit: Int, count: Int) -> UInt64 {
        (load64(base + (bit >> 3)) << UInt64(bit & 7)) >> UInt64(64 - count)
    }
}

/// Writes bits, most significant first, into memory the caller owns and sized for them (plus 8 bytes of slack,
/// which whole-word copies may overwrite).
struct Bzip2BitWriter {
    let base: UnsafeMutableRawPointer
    /// Bits written so far. The bits of the last, partial byte after this are always zero.
    private(set) var bitCount = 0

    init(_ base: UnsafeMutableRawPointer) { self.base = base }

    /// Appends the low `count` (0...64) bits of `value`.
    mutating func append(_ value: UInt64, bits count: Int) {
        var remaining = count
        while remaining > 0 {
            let used = bitCount & 7
            let take = min(8 - used, remaining)
            let chunk = UInt8(truncatingIfNeeded: (value >> UInt64(remaining - take)) & ((1 << UInt64(take)) - 1))
            let byte = base + (bitCount >> 3)
            let shifted = chunk << UInt8(8 - used - take)
            if used == 0 {
                byte.storeBytes(of: shifted, as: UInt8.self)
            } else {
                byte.storeBytes(of: byte.load(as: UInt8.self) | shifted, as: UInt8.self)
            }
            bitCount += take
            remaining -= take
        }
    }

    /// Appends `count` bits of `source` starting `bit` bits after it. The source needs 9 readable bytes past the
    /// last bit copied. Fast (a word at a time) when the writer is at a byte boundary.
    mutating func append(from source: UnsafeRawPointer, bit: Int, count: Int) {
        guard count > 0 else { return }
        if bitCount & 7 != 0 {
            var done = 0
            while done < count {
                let take = min(56, count - done)
                append(Bzip2Bits.bits(source, bit: bit + done, count: take), bits: take)
                done += take
            }
            return
        }
        let destination = base + (bitCount >> 3)
        var done = 0
        while done < count {
            let word = Bzip2Bits.word(source, bit: bit + done)
            (destination + (done >> 3)).storeBytes(of: word.bigEndian, toByteOffset: 0, as: UInt64.self)
            done += 64
        }
        bitCount += count
        let tail = bitCount & 7
        if tail != 0 {
            let last = base + (bitCount >> 3)
            last.storeBytes(of: last.load(as: UInt8.self) & UInt8(truncatingIfNeeded: 0xFF << (8 - tail)),
                            as: UInt8.self)
        }
    }

    /// Bytes needed to hold what was written.
    var byteCount: Int { (bitCount + 7) >> 3 }
}

/// Finds every bit offset where a block or end-of-stream magic starts, looking at one 16-bit value per 4 bytes.
///
/// Each of the 5 or 6 bytes wholly inside a 48-bit magic at bit shift `s` is fixed; a match is assigned to the
/// first multiple of 4 at or after its first whole byte, where the two bytes at that position are two fixed bytes
/// of the magic. A table of those 16-bit values (64 of 65,536) finds the rare positions worth checking in full.
enum Bzip2MagicScan {
    struct Probe {
        /// The magic's index: 0 block, 1 end of stream.
        var kind: UInt8
        /// Bit shift of the magic's start within its first byte.
        var shift: Int
        /// How far the probe position is after the magic's first whole byte (0...3).
        var distance: Int
        /// The two bytes expected at the probe position.
        var value: UInt16
    }

    static let probes: [Probe] = {
        var result: [Probe] = []
        for (kind, magic) in [Bzip2Bits.blockMagic, Bzip2Bits.endMagic].enumerated() {
            for shift in 0..<8 {
                // The magic placed at bit `shift` of a 64-bit window starting at its first byte.
                let window = magic << UInt64(16 - shift)
                let firstWhole = shift == 0 ? 0 : 1
                for distance in 0..<4 {
                    let byte = firstWhole + distance
                    let value = UInt16(truncatingIfNeeded: window >> UInt64(64 - 16 - byte * 8))
                    result.append(Probe(kind: UInt8(kind), shift: shift, distance: distance, value: value))
                }
            }
        }
        return result
    }()

    /// 1 where a 16-bit value is the value of some probe.
    static let table: [UInt8] = {
        var table = [UInt8](repeating: 0, count: 65_536)
        for probe in probes { table[Int(probe.value)] = 1 }
        return table
    }()

    /// Appends to `found` (in increasing order) every magic that lies wholly in `base[0..<validBytes]` and whose
    /// probe position is in `probeStart..<probeEnd` (`probeStart` a multiple of 4 relative to `alignment`; the
    /// caller scans consecutive ranges). Needs 16 readable bytes after `validBytes`.
    static func scan(_ base: UnsafeRawPointer, validBytes: Int, probeStart: Int, probeEnd: Int,
                     found: inout [(bit: Int, kind: UInt8)]) {
        let validBits = validBytes * 8
        table.withUnsafeBufferPointer { tableBuffer in
            guard let lookup = tableBuffer.baseAddress else { return }
            var position = probeStart
            let bytes = base.assumingMemoryBound(to: UInt8.self)
            while position < probeEnd {
                let value = Int(bytes[position]) << 8 | Int(bytes[position + 1])
                if lookup[value] != 0 {
                    check(base, position: position, value: UInt16(value), validBits: validBits, found: &found)
                }
                position += 4
            }
        }
    }

    private static func check(_ base: UnsafeRawPointer, position: Int, value: UInt16, validBits: Int,
                              found: inout [(bit: Int, kind: UInt8)]) {
        let before = found.count
        for probe in probes where probe.value == value {
            let firstWhole = position - probe.distance
            let start = probe.shift == 0 ? firstWhole : firstWhole - 1
            guard start >= 0 else { continue }
            let bit = start * 8 + probe.shift
            guard bit + 48 <= validBits else { continue }
            let magic = probe.kind == 0 ? Bzip2Bits.blockMagic : Bzip2Bits.endMagic
            if Bzip2Bits.bits(base, bit: bit, count: 48) == magic {
                found.append((bit, probe.kind))
            }
        }
        if found.count - before > 1 {
            let sorted = found[before...].sorted { $0.bit < $1.bit }
            found.replaceSubrange(before..., with: sorted)
        }
    }
}
