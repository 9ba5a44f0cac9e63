import Foundation

/// The (item, storefront) keys an incremental has changed so far, as a Bloom filter: it may answer that a key was
/// seen when it was not (rarely: about 1 % of keys per level, a few % up to 20 million keys, more past the largest
/// level), never the reverse.
///
/// Each key sets 3 bits of one 64-bit word (one cache miss a key). The filter grows with the keys without knowing
/// their number: a level holds `capacity` keys in 16 bits each; when it is full, a level four times larger takes
/// the new keys, and a key counts as seen if any level has its bits. The first level is 128 KiB; 10 million keys
/// (a real-scale daily) take 5 levels and 43 MiB, the most it ever takes (`largestCapacity`).
final class SeenKeys {
    /// A level: 4 keys per 64-bit word at capacity.
    private struct Level {
        let words: UnsafeMutablePointer<UInt64>
        let mask: UInt64
        let capacity: Int

        init(capacity: Int) {
            let wordCount = capacity / 4
            words = UnsafeMutablePointer<UInt64>.allocate(capacity: wordCount)
            words.initialize(repeating: 0, count: wordCount)
            mask = UInt64(wordCount - 1)
            self.capacity = capacity
        }

        func has(_ hash: UInt64, _ bits: UInt64) -> Bool { words[Int(hash >> 20 & mask)] & bits == bits }
    }

    /// The capacity of the largest level (by default 2^24 keys, 32 MiB); past it that level takes every key, and
    /// more and more keys are called seen that were not (they only take the slower, exact way), so memory stays
    /// bounded (43 MiB in all by default).
    let largestCapacity: Int

    /// The full levels, and the one that takes new keys.
    private var full: [Level] = []
    private var newest = Level(capacity: 1 << 16)
    private var keysInNewest = 0

    init(largestCapacity: Int = 1 << 24) { self.largestCapacity = largestCapacity }

    /// The levels allocated so far.
    var levelCount: Int { full.count + 1 }

    deinit {
        newest.words.deallocate()
        for level in full { level.words.deallocate() }
    }

    /// Adds a key; returns whether it may have been added before (false: certainly not).
    func insert(item: Int64, storefront: Int64) -> Bool {
        let hash = Self.mix(UInt64(bitPattern: item) &* 0x9e37_79b9_7f4a_7c15 ^ UInt64(bitPattern: storefront))
        // The word from the high bits, the three bits from the low 18.
        let bits: UInt64 = 1 << (hash & 63) | 1 << (hash >> 6 & 63) | 1 << (hash >> 12 & 63)
        let word = newest.words + Int(hash >> 20 & newest.mask)
        if word.pointee & bits == bits { return true }
        if !full.isEmpty {
            for level in full where level.has(hash, bits) { return true }
        }
        word.pointee |= bits
        keysInNewest += 1
        if keysInNewest >= newest.capacity && newest.capacity < largestCapacity {
            full.append(newest)
            newest = Level(capacity: newest.capacity * 4)
            keysInNewest = 0
        }
        return false
    }

    /// SplitMix64's finalizer: every input bit reaches every output bit.
    private static func mix(_ value: UInt64) -> UInt64 {
        var value = value
        value = (value ^ (value >> 30)) &* 0xbf58_476d_1ce4_e5b9
        value = (value ^ (value >> 27)) &* 0x94d0_49bb_1331_11eb
        return value ^ (value >> 31)
    }
}
