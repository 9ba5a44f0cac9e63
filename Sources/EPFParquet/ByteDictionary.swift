import Glibc

/// The distinct byte strings of a dictionary-encoded column chunk, numbered in order of first appearance: an
/// open-addressing hash table over one byte arena, so looking a value up makes no allocation.
struct ByteDictionary {
    /// The entries' bytes, one after another.
    private(set) var arena: [UInt8] = []
    /// Where each entry ends in `arena` (entry i starts where entry i - 1 ends).
    private(set) var ends: [Int] = []
    private var hashes: [UInt64] = []
    /// Entry number + 1 per slot, 0 when empty; the count is a power of two.
    private var slots: [Int32] = Array(repeating: 0, count: 1024)

    var count: Int { ends.count }
    var byteCount: Int { arena.count }

    /// The bytes of entry `index`.
    func entry(_ index: Int) -> ArraySlice<UInt8> {
        arena[(index == 0 ? 0 : ends[index - 1])..<ends[index]]
    }

    /// The number of `bytes`, added when new.
    mutating func index(of bytes: UnsafeRawBufferPointer) -> Int {
        let hash = Self.hash(bytes)
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while true {
            let stored = Int(slots[slot])
            if stored == 0 { break }
            let entryIndex = stored - 1
            if hashes[entryIndex] == hash && equals(entryIndex, bytes) { return entryIndex }
            slot = (slot + 1) & mask
        }
        let newIndex = ends.count
        arena.append(contentsOf: bytes)
        ends.append(arena.count)
        hashes.append(hash)
        slots[slot] = Int32(newIndex + 1)
        if ends.count * 2 > slots.count { grow() }
        return newIndex
    }

    mutating func removeAll() {
        arena.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
        hashes.removeAll(keepingCapacity: true)
        slots = Array(repeating: 0, count: 1024)
    }

    private func equals(_ index: Int, _ bytes: UnsafeRawBufferPointer) -> Bool {
        let start = index == 0 ? 0 : ends[index - 1]
        let length = ends[index] - start
        guard length == bytes.count else { return false }
        if length == 0 { return true }
        return arena.withUnsafeBufferPointer { stored in
            guard let base = stored.baseAddress, let other = bytes.baseAddress else { return false }
            return memcmp(base + start, other, length) == 0
        }
    }

    private mutating func grow() {
        var larger = [Int32](repeating: 0, count: slots.count * 2)
        let mask = larger.count - 1
        for (index, hash) in hashes.enumerated() {
            var slot = Int(truncatingIfNeeded: hash) & mask
            while larger[slot] != 0 { slot = (slot + 1) & mask }
            larger[slot] = Int32(index + 1)
        }
        slots = larger
    }

    /// FNV-1a, finished with a multiply-shift mix so that the low bits (the slot) depend on every byte.
    private static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        hash ^= hash >> 29
        hash = hash &* 0xbf58_476d_1ce4_e5b9
        return hash ^ (hash >> 32)
    }
}
