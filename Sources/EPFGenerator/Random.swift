/// SplitMix64: a tiny, fast, well-mixed generator. Every row draws from its own instance seeded by
/// `(seed, table salt, row index)`, so any row can be regenerated alone.
struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    /// Seeds from the feed seed, a per-purpose salt and an index (row, day, storefront ...).
    init(_ seed: UInt64, _ salt: UInt64, _ index: Int, _ extra: Int = 0) {
        state = SplitMix64.mix(seed ^ SplitMix64.mix(salt &+ UInt64(truncatingIfNeeded: index) &* 0x9E37_79B9_7F4A_7C15
            &+ UInt64(truncatingIfNeeded: extra) &* 0xD1B5_4A32_D192_ED03))
    }

    /// The SplitMix64 finaliser: a bijective 64-bit hash.
    @inline(__always)
    static func mix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A one-shot hash of `(seed, salt, index, extra)`.
    @inline(__always)
    static func hash(_ seed: UInt64, _ salt: UInt64, _ index: Int, _ extra: Int = 0) -> UInt64 {
        var generator = SplitMix64(seed, salt, index, extra)
        return generator.next()
    }

    @inline(__always)
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value in `0..<bound` (bound > 0), by multiply-shift; the tiny bias does not matter here.
    @inline(__always)
    mutating func below(_ bound: Int) -> Int {
        Int(truncatingIfNeeded: next().multipliedFullWidth(by: UInt64(bound)).high)
    }

    /// True with probability `percent` / 100.
    @inline(__always)
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }

    /// A value in `range`.
    @inline(__always)
    mutating func within(_ range: ClosedRange<Int>) -> Int { range.lowerBound + below(range.count) }
}

/// Salts that keep the random streams of different purposes apart.
enum Salt {
    static let appID: UInt64 = 0x01
    static let app: UInt64 = 0x02
    static let detail: UInt64 = 0x03
    static let appChange: UInt64 = 0x04
    static let priceChange: UInt64 = 0x05
    static let price: UInt64 = 0x06
    static let artist: UInt64 = 0x07
    static let collection: UInt64 = 0x08
    static let song: UInt64 = 0x09
    static let video: UInt64 = 0x0A
    static let popularity: UInt64 = 0x0B
    /// The day-to-day movement of popularity (`Popularity`).
    static let popularityWalk: UInt64 = 0x0B_0D
    static let otherID: UInt64 = 0x0C
    static let text: UInt64 = 0x0D
}
