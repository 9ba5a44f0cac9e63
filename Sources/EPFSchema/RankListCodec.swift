/// The bytes of one chart on one day in the rank history (`RankHistoryRead.listsTable`'s `list`): the chart's ids
/// in rank order, either whole (a keyframe) or as a delta against the same chart's list on a keyframe day.
///
/// Layout, every number an unsigned LEB128 varint:
/// - a flags byte: bit 0 set when the list is a delta, bit 1 when explicit ranks follow the ids;
/// - the number of entries `n`;
/// - a keyframe: the `n` ids;
/// - a delta: `n` tokens. Token 0 is an escape, followed by the full id (one not in the base, or met again). Any
///   other token `t` names the base's entry at position `previous + 1 + unzigzag(t - 1)`, where `previous` is the
///   base position the token before named (-1 at the start): an unchanged run costs one byte per entry (`1`), an
///   entry that moved a few places one byte;
/// - explicit ranks, only when the ranks are not 1...n in order (duplicates, gaps, a chart that does not start at
///   1): `n` varints, each `zigzag(rank)`.
///
/// Decoding bad bytes throws `RankListCodec.Malformed`; it never reads past the buffer.
package enum RankListCodec {
    /// Bytes that do not decode: truncated, a varint too long, or a base position outside the base.
    package struct Malformed: Error, CustomStringConvertible, Sendable {
        package let description: String

        package init(description: String) { self.description = description }
    }

    static let deltaFlag: UInt8 = 1
    static let ranksFlag: UInt8 = 2

    // MARK: Encoding

    /// The bytes `keyframe(entries)` would take, without making them.
    package static func keyframeSize(_ entries: [RankedEntry]) -> Int {
        var size = 1 + varintSize(UInt64(entries.count))
        for entry in entries { size += varintSize(UInt64(bitPattern: entry.id)) }
        if needsRanks(entries) {
            for entry in entries { size += varintSize(zigzag(Int64(entry.rank))) }
        }
        return size
    }

    @inline(__always)
    static func varintSize(_ value: UInt64) -> Int { max(1, (64 - value.leadingZeroBitCount + 6) / 7) }

    /// A keyframe of `entries` (in rank order).
    package static func keyframe(_ entries: [RankedEntry]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(entries.count * 5 + 4)
        let ranks = needsRanks(entries)
        bytes.append(ranks ? ranksFlag : 0)
        appendVarint(UInt64(entries.count), to: &bytes)
        for entry in entries { appendVarint(UInt64(bitPattern: entry.id), to: &bytes) }
        if ranks { appendRanks(entries, to: &bytes) }
        return bytes
    }

    /// A delta of `entries` against a keyframe's ids, looked up in `base` (`BaseIndex`).
    package static func delta(_ entries: [RankedEntry], base: BaseIndex) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(entries.count + 8)
        let ranks = needsRanks(entries)
        bytes.append(deltaFlag | (ranks ? ranksFlag : 0))
        appendVarint(UInt64(entries.count), to: &bytes)
        var previous = -1
        var used = [Bool](repeating: false, count: base.count)
        for entry in entries {
            if let position = base.position(of: entry.id), !used[position] {
                used[position] = true
                let offset = position - previous - 1
                appendVarint(zigzag(Int64(offset)) + 1, to: &bytes)
                previous = position
            } else {
                bytes.append(0)
                appendVarint(UInt64(bitPattern: entry.id), to: &bytes)
            }
        }
        if ranks { appendRanks(entries, to: &bytes) }
        return bytes
    }

    /// A keyframe's ids by value, for `delta`: an open-addressing table of id -> position with a multiplicative
    /// hash (a chart's 200 ids: Swift's `Dictionary`, with its seeded hash, or a sort cost several times more).
    package struct BaseIndex {
        private var slots: [Int64]
        private var positions: [Int32]
        private var occupied: [Bool]
        private let shift: UInt64

        /// The index of `base`, a keyframe's ids in order (an id listed twice: its first position).
        package init(_ base: [Int64]) {
            var bits: UInt64 = 4
            while 1 << bits < base.count * 2 { bits += 1 }
            shift = 64 - bits
            slots = [Int64](repeating: 0, count: 1 << Int(bits))
            positions = [Int32](repeating: 0, count: 1 << Int(bits))
            occupied = [Bool](repeating: false, count: 1 << Int(bits))
            count = base.count
            for (position, id) in base.enumerated() {
                var slot = slot(of: id)
                while occupied[slot] {
                    if slots[slot] == id { break }
                    slot = (slot + 1) & (slots.count - 1)
                }
                if !occupied[slot] {
                    occupied[slot] = true
                    slots[slot] = id
                    positions[slot] = Int32(truncatingIfNeeded: position)
                }
            }
        }

        /// The number of ids of the base.
        package let count: Int

        @inline(__always)
        private func slot(of id: Int64) -> Int {
            Int(truncatingIfNeeded: (UInt64(bitPattern: id) &* 0x9E37_79B9_7F4A_7C15) >> shift)
        }

        /// Where `id` stands in the base, nil when it is not there.
        @inline(__always)
        package func position(of id: Int64) -> Int? {
            var slot = slot(of: id)
            while occupied[slot] {
                if slots[slot] == id { return Int(positions[slot]) }
                slot = (slot + 1) & (slots.count - 1)
            }
            return nil
        }

        /// Whether the base holds `id`.
        @inline(__always)
        package func contains(_ id: Int64) -> Bool { position(of: id) != nil }
    }

    private static func needsRanks(_ entries: [RankedEntry]) -> Bool {
        for (index, entry) in entries.enumerated() where entry.rank != index + 1 { return true }
        return false
    }

    private static func appendRanks(_ entries: [RankedEntry], to bytes: inout [UInt8]) {
        for entry in entries { appendVarint(zigzag(Int64(entry.rank)), to: &bytes) }
    }

    @inline(__always)
    static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    @inline(__always)
    static func zigzag(_ value: Int64) -> UInt64 { UInt64(bitPattern: (value << 1) ^ (value >> 63)) }

    @inline(__always)
    static func unzigzag(_ value: UInt64) -> Int64 { Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1) }

    // MARK: Decoding

    /// Whether the list is a delta (needs its base to decode).
    package static func isDelta(_ bytes: UnsafeRawBufferPointer) -> Bool {
        !bytes.isEmpty && bytes[0] & deltaFlag != 0
    }

    /// The entries of a list; `base` is the keyframe's ids (ignored for a keyframe, required for a delta).
    package static func decode(_ bytes: UnsafeRawBufferPointer, base: [Int64]?) throws(Malformed) -> [RankedEntry] {
        var reader = Reader(bytes: bytes)
        let flags = try reader.byte()
        let count = try reader.count()
        var ids: [Int64] = []
        ids.reserveCapacity(count)
        if flags & deltaFlag == 0 {
            for _ in 0..<count { ids.append(Int64(bitPattern: try reader.varint())) }
        } else {
            guard let base else { throw Malformed(description: "a delta list decoded without its base") }
            var previous = -1
            for _ in 0..<count {
                let token = try reader.varint()
                if token == 0 {
                    ids.append(Int64(bitPattern: try reader.varint()))
                } else {
                    let position = try basePosition(previous, token, base.count)
                    ids.append(base[position])
                    previous = position
                }
            }
        }
        var entries: [RankedEntry] = []
        entries.reserveCapacity(count)
        if flags & ranksFlag != 0 {
            for id in ids { entries.append(RankedEntry(rank: Int(unzigzag(try reader.varint())), id: id)) }
        } else {
            for (index, id) in ids.enumerated() { entries.append(RankedEntry(rank: index + 1, id: id)) }
        }
        return entries
    }

    /// The ids of a keyframe, in order (a delta throws).
    package static func keyframeIDs(_ bytes: UnsafeRawBufferPointer) throws(Malformed) -> [Int64] {
        var reader = Reader(bytes: bytes)
        let flags = try reader.byte()
        guard flags & deltaFlag == 0 else { throw Malformed(description: "a delta list read as a keyframe") }
        let count = try reader.count()
        var ids: [Int64] = []
        ids.reserveCapacity(count)
        for _ in 0..<count { ids.append(Int64(bitPattern: try reader.varint())) }
        return ids
    }

    /// The rank of `id` in a list, nil when the list does not hold it, reading no further than it must: in a
    /// delta, `basePosition` is where `id` stands in the base (nil when the base lacks it: then only escapes can
    /// name it).
    package static func rank(of id: Int64, in bytes: UnsafeRawBufferPointer, basePosition target: Int?,
                             baseCount: Int) throws(Malformed) -> Int? {
        var reader = Reader(bytes: bytes)
        let flags = try reader.byte()
        let count = try reader.count()
        var found: Int?
        if flags & deltaFlag == 0 {
            for index in 0..<count {
                if Int64(bitPattern: try reader.varint()) == id {
                    found = index
                    break
                }
            }
        } else {
            // The hot loop of an item's history: one-byte tokens (nearly all of them) read inline.
            var previous = -1
            let end = bytes.count
            for index in 0..<count {
                guard reader.offset < end else { throw Malformed(description: "a rank list ends early") }
                var token = UInt64(bytes[reader.offset])
                if token < 0x80 {
                    reader.offset += 1
                } else {
                    token = try reader.varint()
                }
                if token == 0 {
                    if Int64(bitPattern: try reader.varint()) == id {
                        found = index
                        break
                    }
                } else {
                    let position = previous + 1 + Int(truncatingIfNeeded: unzigzag(token - 1))
                    guard position >= 0, position < baseCount else {
                        throw Malformed(description: "a delta names base position \(position) of a base of "
                                        + "\(baseCount)")
                    }
                    if position == target {
                        found = index
                        break
                    }
                    previous = position
                }
            }
        }
        guard let found else { return nil }
        guard flags & ranksFlag != 0 else { return found + 1 }
        // Explicit ranks follow the ids: skip the rest of them, then read the rank at `found`.
        try reader.skipEntries(count - found - 1, delta: flags & deltaFlag != 0)
        try reader.skipVarints(found)
        return Int(unzigzag(try reader.varint()))
    }

    @inline(__always)
    private static func basePosition(_ previous: Int, _ token: UInt64, _ baseCount: Int) throws(Malformed) -> Int {
        let offset = unzigzag(token - 1)
        let position = Int64(previous) + 1 + offset
        guard position >= 0, position < Int64(baseCount) else {
            throw Malformed(description: "a delta names base position \(position) of a base of \(baseCount)")
        }
        return Int(position)
    }

    /// Reads varints from a buffer, checking every byte is there.
    struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset = 0

        @inline(__always)
        mutating func byte() throws(Malformed) -> UInt8 {
            guard offset < bytes.count else { throw Malformed(description: "a rank list ends early") }
            defer { offset += 1 }
            return bytes[offset]
        }

        @inline(__always)
        mutating func varint() throws(Malformed) -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let byte = try byte()
                value |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return value }
                shift += 7
                guard shift < 64 else { throw Malformed(description: "a varint of a rank list is too long") }
            }
        }

        /// The entry count, bounded by the bytes left (each entry takes at least one).
        mutating func count() throws(Malformed) -> Int {
            let count = try varint()
            guard count <= UInt64(bytes.count - offset) else {
                throw Malformed(description: "a rank list of \(count) entries in \(bytes.count) bytes")
            }
            return Int(count)
        }

        mutating func skipVarints(_ count: Int) throws(Malformed) {
            for _ in 0..<max(0, count) { _ = try varint() }
        }

        /// Skips `count` id entries (a delta's escapes take two varints).
        mutating func skipEntries(_ count: Int, delta: Bool) throws(Malformed) {
            for _ in 0..<max(0, count) {
                if try varint() == 0 && delta { _ = try varint() }
            }
        }
    }
}
