import EPFFormat

/// A set of 64-bit key hashes with open addressing, to count duplicate keys in an incremental file without a
/// `Set` insertion (and SipHash) per row. Memory grows with the number of distinct keys (16 bytes each at most).
struct KeyHashSet {
    private var slots: [UInt64]
    private var mask: Int
    private(set) var count = 0

    package init(capacity: Int = 1 << 16) {
        var size = 1
        while size < capacity * 2 { size <<= 1 }
        slots = Array(repeating: 0, count: size)
        mask = size - 1
    }

    /// Inserts a hash; returns false when it was already present. 0 is remapped so it can mark empty slots.
    package mutating func insert(_ hash: UInt64) -> Bool {
        if count * 2 >= slots.count { grow() }
        let value = hash == 0 ? 1 : hash
        var index = Int(truncatingIfNeeded: value) & mask
        while true {
            let slot = slots[index]
            if slot == 0 {
                slots[index] = value
                count += 1
                return true
            }
            if slot == value { return false }
            index = (index + 1) & mask
        }
    }

    private mutating func grow() {
        let old = slots
        slots = Array(repeating: 0, count: old.count * 2)
        mask = slots.count - 1
        count = 0
        for value in old where value != 0 { _ = insert(value) }
    }

    /// FNV-1a over the key fields, then a final mix, so similar keys spread over the table.
    package static func hash(_ record: EPFRecord, keyIndexes: [Int]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for index in keyIndexes {
            let field = record.field(index)
            for byte in field {
                hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
            }
            hash = (hash ^ 0x1f) &* 0x100_0000_01b3
        }
        hash ^= hash >> 33
        hash = hash &* 0xff51_afd7_ed55_8ccd
        hash ^= hash >> 33
        return hash
    }
}
