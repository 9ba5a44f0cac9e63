/// The bytes of one chart on one day in the rank history (`RankHistoryRead.listsTable`'s `list`): the chart's ids
/// in rank order, either whole (a keyframe) or as a delta against the same chart's list on an earlier day (its base:
/// a keyframe or itself a delta; `RankListChain` follows the bases back to a keyframe).
///
/// Layout, every number an unsigned LEB128 varint unless said:
/// - a flags byte: bit 0 set when the list is a delta, bit 1 when explicit ranks follow the ids;
/// - the number of entries `n`;
/// - a keyframe: the `n` ids;
/// - a delta: the base's size `b`, then `b` slots of `w` bytes each, little-endian, `w` the bytes `n` needs (one
///   for a chart of up to 254 entries): slot `p` holds 1 + the index in this list of the base's entry `p`, 0 when
///   it is not in it; then the escapes, the entries not in the base: their number, then each one's index (as the
///   gap from the previous escape's index, the first from 0: escapes are in index order) and id.
///   A base's entry costs a byte whatever its move, and an item's rank is read from its slot without decoding
///   the rest (an item's history reads one byte a day);
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
        let width = slotWidth(entries.count)
        var slots = [UInt32](repeating: 0, count: base.count)
        var escapes: [(index: Int, id: Int64)] = []
        for (index, entry) in entries.enumerated() {
            if let position = base.position(of: entry.id), slots[position] == 0 {
                slots[position] = UInt32(index + 1)
            } else {
                escapes.append((index, entry.id))
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(base.count * width + escapes.count * 7 + 8)
        let ranks = needsRanks(entries)
        bytes.append(deltaFlag | (ranks ? ranksFlag : 0))
        appendVarint(UInt64(entries.count), to: &bytes)
        appendVarint(UInt64(base.count), to: &bytes)
        for slot in slots {
            for shift in stride(from: 0, to: width * 8, by: 8) {
                bytes.append(UInt8(truncatingIfNeeded: slot >> shift))
            }
        }
        appendVarint(UInt64(escapes.count), to: &bytes)
        var previous = 0
        for escape in escapes {
            appendVarint(UInt64(escape.index - previous), to: &bytes)
            appendVarint(UInt64(bitPattern: escape.id), to: &bytes)
            previous = escape.index
        }
        if ranks { appendRanks(entries, to: &bytes) }
        return bytes
    }

    /// Bytes a delta's slot takes for a list of `count` entries (slot values go up to `count`).
    static func slotWidth(_ count: Int) -> Int {
        count < 0xFF ? 1 : count < 0xFFFF ? 2 : count < 0xFF_FFFF ? 3 : 4
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
        let (flags, ids) = try readIDs(&reader, base: base)
        var entries: [RankedEntry] = []
        entries.reserveCapacity(ids.count)
        if flags & ranksFlag != 0 {
            for id in ids { entries.append(RankedEntry(rank: Int(unzigzag(try reader.varint())), id: id)) }
        } else {
            for (index, id) in ids.enumerated() { entries.append(RankedEntry(rank: index + 1, id: id)) }
        }
        return entries
    }

    /// The ids of a list in order, without its ranks (what a delta coded against it needs); `base` as `decode`.
    package static func ids(_ bytes: UnsafeRawBufferPointer, base: [Int64]?) throws(Malformed) -> [Int64] {
        var reader = Reader(bytes: bytes)
        return try readIDs(&reader, base: base).ids
    }

    /// Reads a list's flags and ids, leaving `reader` at its explicit ranks.
    private static func readIDs(_ reader: inout Reader,
                                base: [Int64]?) throws(Malformed) -> (flags: UInt8, ids: [Int64]) {
        let flags = try reader.byte()
        let count = try reader.count()
        if flags & deltaFlag == 0 {
            var ids: [Int64] = []
            ids.reserveCapacity(count)
            for _ in 0..<count { ids.append(Int64(bitPattern: try reader.varint())) }
            return (flags, ids)
        }
        guard let base else { throw Malformed(description: "a delta list decoded without its base") }
        let slots = try reader.slots(entries: count, base: base.count)
        var ids = [Int64](repeating: 0, count: count)
        var placed = [Bool](repeating: false, count: count)
        var filled = 0
        for position in 0..<base.count {
            let slot = slots.value(at: position, in: reader.bytes)
            guard slot != 0 else { continue }
            guard slot <= count, !placed[slot - 1] else {
                throw Malformed(description: "a delta's slot names entry \(slot) of \(count), or one twice")
            }
            placed[slot - 1] = true
            ids[slot - 1] = base[position]
            filled += 1
        }
        let escapes = try reader.count()
        var index: UInt64 = 0
        for _ in 0..<escapes {
            index = try reader.escapeIndex(after: index)
            let id = Int64(bitPattern: try reader.varint())
            guard index < UInt64(count), !placed[Int(index)] else {
                throw Malformed(description: "a delta's escape names entry \(index) of \(count), or one twice")
            }
            placed[Int(index)] = true
            ids[Int(index)] = id
            filled += 1
        }
        guard filled == count else { throw Malformed(description: "a delta leaves an entry of \(count) empty") }
        return (flags, ids)
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

    /// The rank of `id` in a list, nil when the list does not hold it (`locate`'s rank).
    package static func rank(of id: Int64, in bytes: UnsafeRawBufferPointer, basePosition target: Int?,
                             baseCount: Int) throws(Malformed) -> Int? {
        try locate(id, in: bytes, basePosition: target, baseCount: baseCount)?.rank
    }

    /// The number of entries of a list, read from its header.
    package static func count(_ bytes: UnsafeRawBufferPointer) throws(Malformed) -> Int {
        var reader = Reader(bytes: bytes)
        _ = try reader.byte()
        return try reader.count()
    }

    /// Where `id` stands in a list (its index, from 0) and its rank, nil when the list does not hold it, reading
    /// no further than it must: in a delta, `basePosition` is where `id` stands in the base (nil when the base
    /// lacks it: then only escapes can name it), and its slot says where it is in the list. The index is the
    /// item's base position in a delta coded against this list.
    package static func locate(_ id: Int64, in bytes: UnsafeRawBufferPointer, basePosition target: Int?,
                               baseCount: Int) throws(Malformed) -> (index: Int, rank: Int)? {
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
            guard let found else { return nil }
            guard flags & ranksFlag != 0 else { return (found, found + 1) }
            // Explicit ranks follow the ids: skip the rest of them, then read the rank at `found`.
            try reader.skipVarints(count - found - 1 + found)
            return (found, Int(unzigzag(try reader.varint())))
        }
        let slots = try reader.slots(entries: count, base: baseCount)
        if let target {
            guard target < baseCount else {
                throw Malformed(description: "base position \(target) of a base of \(baseCount)")
            }
            let slot = slots.value(at: target, in: bytes)
            guard slot != 0 else { return nil }
            guard slot <= count else { throw Malformed(description: "a delta's slot names entry \(slot) of \(count)") }
            found = slot - 1
            guard flags & ranksFlag != 0 else { return (slot - 1, slot) }
        }
        // Escapes: an item not in the base, or (explicit ranks) the way to them.
        let escapes = try reader.count()
        var index: UInt64 = 0
        for _ in 0..<escapes {
            index = try reader.escapeIndex(after: index)
            if Int64(bitPattern: try reader.varint()) == id, found == nil {
                guard index < UInt64(count) else {
                    throw Malformed(description: "a delta's escape names entry \(index) of \(count)")
                }
                found = Int(index)
            }
        }
        guard let found else { return nil }
        guard flags & ranksFlag != 0 else { return (found, found + 1) }
        try reader.skipVarints(found)
        return (found, Int(unzigzag(try reader.varint())))
    }

    /// A delta's slots: where they start and how wide each is.
    struct Slots {
        let start: Int
        let width: Int

        @inline(__always)
        func value(at position: Int, in bytes: UnsafeRawBufferPointer) -> Int {
            var value = 0
            let offset = start + position * width
            for byte in 0..<width { value |= Int(bytes[offset + byte]) << (8 * byte) }
            return value
        }
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

        /// The slots of a delta of `entries` entries against a base of `base`, checked to be all there and the
        /// base's size to be the one stored.
        mutating func slots(entries: Int, base: Int) throws(Malformed) -> Slots {
            let stored = try varint()
            guard stored == UInt64(base) else {
                throw Malformed(description: "a delta against a base of \(stored) entries read with one of \(base)")
            }
            let width = RankListCodec.slotWidth(entries)
            guard base <= (bytes.count - offset) / width else {
                throw Malformed(description: "a delta's \(base) slots do not fit in \(bytes.count) bytes")
            }
            defer { offset += base * width }
            return Slots(start: offset, width: width)
        }

        /// The index of an escape: `previous` plus the gap read (the first escape's gap is from 0).
        @inline(__always)
        mutating func escapeIndex(after previous: UInt64) throws(Malformed) -> UInt64 {
            let (index, overflow) = previous.addingReportingOverflow(try varint())
            guard !overflow else { throw Malformed(description: "a delta's escape index overflows") }
            return index
        }

        mutating func skipVarints(_ count: Int) throws(Malformed) {
            for _ in 0..<max(0, count) { _ = try varint() }
        }
    }
}
