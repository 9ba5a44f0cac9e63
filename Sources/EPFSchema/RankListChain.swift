/// Decodes one chart's stored lists (`RankListCodec`), each a keyframe or a delta that names its base day, itself a
/// keyframe or a delta: a day's list is decoded by following the bases back to a keyframe, then forward. Lists
/// decoded on the way are kept, so days that share a chain decode it once.
package struct RankListChain {
    /// One stored list: the day it is coded against (nil: a keyframe) and its bytes.
    package typealias Row = (baseDate: Int64?, list: [UInt8])

    /// Lists in one chain at most: a keyframe day at most every `RankHistoryRead.keyframeSpan` keeps real chains
    /// to a few lists; a longer one is a damaged database (a loop of bases).
    static let maximumLength = 10_000

    /// What the chart is, for errors ("the free chart of storefront 143441, genre 36").
    private let name: String
    private let fetch: (Int64) throws -> Row?
    private var rows: [Int64: Row] = [:]
    /// The ids of the lists decoded, by day.
    private var decoded: [Int64: [Int64]] = [:]

    /// A chain reading the lists it lacks with `fetch` (the chart's row of a day, nil when there is none).
    package init(name: String, fetch: @escaping (Int64) throws -> Row?) {
        self.name = name
        self.fetch = fetch
    }

    /// A list already read (by a scan of the chart's days), so `entries(on:)` need not fetch it.
    package mutating func add(_ row: Row, on day: Int64) {
        rows[day] = row
    }

    /// The chart's entries on `day`, nil when it has no list that day.
    /// Throws `RankListCodec.Malformed` when a base is missing, not earlier than its delta, or a list is damaged.
    package mutating func entries(on day: Int64) throws -> [RankedEntry]? {
        guard let row = try rows[day] ?? fetch(day) else { return nil }
        let base = try row.baseDate.map { base in
            guard let ids = try ids(on: base) else {
                throw RankListCodec.Malformed(description: "\(name) on \(day) names a base on \(base) "
                                              + "that is not recorded")
            }
            return ids
        }
        return try row.list.withUnsafeBytes { bytes in try RankListCodec.decode(bytes, base: base) }
    }

    /// The chart's ids on `day` in rank order, nil when it has no list that day; throws as `entries(on:)`.
    package mutating func ids(on day: Int64) throws -> [Int64]? {
        if let known = decoded[day] { return known }
        var chain: [(day: Int64, row: Row)] = []
        var current = day
        while true {
            guard let row = try rows[current] ?? fetch(current) else {
                guard let last = chain.last else { return nil }
                throw RankListCodec.Malformed(description: "\(name) on \(last.day) names a base on \(current) "
                                              + "that is not recorded")
            }
            chain.append((current, row))
            guard let base = row.baseDate, decoded[base] == nil else { break }
            guard base < current, chain.count < Self.maximumLength else {
                throw RankListCodec.Malformed(description: "\(name) on \(current) names a base on \(base) "
                                              + "that is not an earlier day of a chain")
            }
            current = base
        }
        var ids: [Int64] = []
        for link in chain.reversed() {
            let base = link.row.baseDate.flatMap { decoded[$0] }
            ids = try link.row.list.withUnsafeBytes { bytes in try RankListCodec.ids(bytes, base: base) }
            decoded[link.day] = ids
        }
        return ids
    }
}
