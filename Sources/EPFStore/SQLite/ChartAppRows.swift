import EPFSchema

/// An app chart table's rows gathered for `ChartAppLists`, compactly (12 bytes a row: the rows of a storefront,
/// genre and export date share one run), then sorted by app (a radix sort: the rows come in chart order).
///
/// Rows with a NULL storefront, genre, rank, app or export date are left out, as the table's own reading does. An
/// app id outside 0 ..< 2^40, a rank outside 0 ..< 4096, more than 2^23 rows or 2^20 runs make the gathering give
/// up (`isComplete` false): the lists are then not made, and readers read the table (Apple's charts rank 1...200).
struct ChartAppRows {
    private static let indexBits: UInt64 = 23
    private static let idLimit: Int64 = 1 << 40
    private static let rankBits: UInt32 = 12
    private static let runLimit = 1 << 20

    /// Per row: `app << 23 | row number`, sorted by `finish` (app first, then the order met).
    private var keys: [UInt64] = []
    /// Per row: `run << 12 | rank`.
    private var places: [UInt32] = []
    private var runs: [(storefront: Int64, genre: Int64, date: Int64)] = []
    /// False once a row did not fit (see the type's summary).
    private(set) var isComplete = true

    /// The rows gathered.
    var count: Int { keys.count }

    init() {}

    /// A row of the table: nil for a NULL value.
    @inline(__always)
    mutating func add(app: Int64?, storefront: Int64?, genre: Int64?, rank: Int64?, date: Int64?) {
        guard isComplete, let app, let storefront, let genre, let rank, let date else { return }
        guard (0..<Self.idLimit).contains(app), (0..<1 << Int64(Self.rankBits)).contains(rank),
              keys.count < 1 << Self.indexBits else {
            isComplete = false
            return
        }
        if let last = runs.last, last.storefront == storefront, last.genre == genre, last.date == date {
        } else if runs.count < Self.runLimit {
            runs.append((storefront, genre, date))
        } else {
            isComplete = false
            return
        }
        keys.append(UInt64(app) << Self.indexBits | UInt64(keys.count))
        places.append(UInt32(runs.count - 1) << Self.rankBits | UInt32(rank))
    }

    /// The lists of the rows gathered (empty when there are none), or nil when the gathering gave up. Empties the
    /// rows.
    mutating func finish() -> [(firstID: Int64, bytes: [UInt8])]? {
        defer { self = ChartAppRows() }
        guard isComplete else { return nil }
        Self.sortByApp(&keys)
        var encoder = ChartAppLists.Encoder()
        var entries: [ChartAppEntry] = []
        var app: Int64 = -1
        let rowMask = (UInt64(1) << Self.indexBits) - 1
        for key in keys {
            let id = Int64(key >> Self.indexBits)
            if id != app {
                if !entries.isEmpty { encoder.add(id: app, entries: entries) }
                entries.removeAll(keepingCapacity: true)
                app = id
            }
            let place = places[Int(key & rowMask)]
            let run = runs[Int(place >> Self.rankBits)]
            entries.append(ChartAppEntry(storefrontID: run.storefront, genreID: run.genre,
                                         rank: Int64(place & (1 << Self.rankBits - 1)), exportDate: run.date))
        }
        if !entries.isEmpty { encoder.add(id: app, entries: entries) }
        return encoder.finish()
    }

    /// Sorts `keys` by their app bits, keeping the order of equal apps (the row numbers below them are already in
    /// order): an LSD radix sort of 11-bit digits, as many as the largest app needs.
    static func sortByApp(_ keys: inout [UInt64]) {
        let digitBits: UInt64 = 11
        let buckets = 1 << Int(digitBits)
        let largest = (keys.max() ?? 0) >> indexBits
        guard keys.count > 1, largest > 0 else { return }
        var scratch = [UInt64](repeating: 0, count: keys.count)
        var counts = [Int](repeating: 0, count: buckets)
        var shift = indexBits
        while shift < 64, largest >> (shift - indexBits) > 0 {
            keys.withUnsafeBufferPointer { source in
                scratch.withUnsafeMutableBufferPointer { target in
                    counts.withUnsafeMutableBufferPointer { counts in
                        for index in counts.indices { counts[index] = 0 }
                        let mask = UInt64(buckets - 1)
                        for key in source { counts[Int((key >> shift) & mask)] += 1 }
                        var start = 0
                        for index in counts.indices {
                            let count = counts[index]
                            counts[index] = start
                            start += count
                        }
                        for key in source {
                            let digit = Int((key >> shift) & mask)
                            target[counts[digit]] = key
                            counts[digit] += 1
                        }
                    }
                }
            }
            swap(&keys, &scratch)
            shift += digitBits
        }
    }
}
