import EPFFormat
import EPFSchema
import Glibc

/// An app chart table's rows gathered for `ChartAppLists`, compactly (12 bytes a row: the rows of a storefront,
/// genre and export date share one run), then sorted by app (a radix sort: the rows come in chart order).
///
/// Rows with a NULL storefront, genre, rank, app or export date are left out, as the table's own reading does. An
/// app id outside 0 ..< 2^40, a rank outside 0 ..< 4096, more than 2^23 rows or 2^20 runs make the gathering give
/// up (`isComplete` false): the lists are then not made, and readers read the table (Apple's charts rank 1...200).
/// Used by the loading thread alone: its state goes without dynamic exclusivity checks (a row costs a few of them
/// otherwise).
final class ChartAppRows {
    static let indexBits: UInt64 = 23
    private static let idLimit: Int64 = 1 << 40
    private static let rankBits: UInt32 = 12
    private static let runLimit = 1 << 20
    /// Bytes of a run's storefront, genre and export date fields kept to recognise the run's next rows.
    private static let runTextCapacity = 64

    /// Per row: `app << 23 | row number`, sorted by `finish` (app first, then the order met).
    @exclusivity(unchecked) private var keys: UnsafeMutablePointer<UInt64>
    /// Per row: `run << 12 | rank`.
    @exclusivity(unchecked) private var places: UnsafeMutablePointer<UInt32>
    @exclusivity(unchecked) private var capacity = 1 << 16
    /// The rows gathered.
    @exclusivity(unchecked) private(set) var count = 0
    @exclusivity(unchecked) private var runs: [(storefront: Int64, genre: Int64, date: Int64)] = []
    /// The current run's storefront, genre and export date fields as the file wrote them, and their lengths (-1: no
    /// text to compare with): a row with the same three fields is in the run without parsing them.
    private let runText = UnsafeMutablePointer<UInt8>.allocate(capacity: runTextCapacity)
    @exclusivity(unchecked) private var runLengths = (-1, -1, -1)
    /// False once a row did not fit (see the type's summary).
    @exclusivity(unchecked) private(set) var isComplete = true

    init() {
        keys = .allocate(capacity: capacity)
        places = .allocate(capacity: capacity)
    }

    deinit {
        keys.deallocate()
        places.deallocate()
        runText.deallocate()
    }

    /// A row of the table: nil for a NULL value.
    func add(app: Int64?, storefront: Int64?, genre: Int64?, rank: Int64?, date: Int64?) {
        guard isComplete, let app, let storefront, let genre, let rank, let date else { return }
        if let last = runs.last, last.storefront == storefront, last.genre == genre, last.date == date {
        } else {
            guard startRun(storefront: storefront, genre: genre, date: date) else { return }
            runLengths = (-1, -1, -1)
        }
        append(app: app, rank: rank)
    }

    /// A row of the table as the file wrote it, the fields read as `RowBinder` binds them (an empty or unparsable
    /// integer is NULL).
    @inline(__always)
    func add(app: UnsafeRawBufferPointer, storefront: UnsafeRawBufferPointer, genre: UnsafeRawBufferPointer,
             rank: UnsafeRawBufferPointer, date: UnsafeRawBufferPointer) {
        guard isComplete else { return }
        if !isRunText(storefront, genre, date) {
            guard let storefrontID = Self.integer(storefront), let genreID = Self.integer(genre),
                  let day = Self.integer(date) else { return }
            if let last = runs.last, last.storefront == storefrontID, last.genre == genreID, last.date == day {
            } else {
                guard startRun(storefront: storefrontID, genre: genreID, date: day) else { return }
            }
            keepRunText(storefront, genre, date)
        }
        guard let appID = Self.integer(app), let rankValue = Self.integer(rank) else { return }
        append(app: appID, rank: rankValue)
    }

    @inline(__always)
    private func append(app: Int64, rank: Int64) {
        guard (0..<Self.idLimit).contains(app), (0..<1 << Int64(Self.rankBits)).contains(rank),
              count < 1 << Self.indexBits else {
            isComplete = false
            return
        }
        if count == capacity { grow() }
        keys[count] = UInt64(app) << Self.indexBits | UInt64(count)
        places[count] = UInt32(runs.count - 1) << Self.rankBits | UInt32(rank)
        count += 1
    }

    private func startRun(storefront: Int64, genre: Int64, date: Int64) -> Bool {
        guard runs.count < Self.runLimit else {
            isComplete = false
            return false
        }
        runs.append((storefront, genre, date))
        return true
    }

    @inline(__always)
    private func isRunText(_ storefront: UnsafeRawBufferPointer, _ genre: UnsafeRawBufferPointer,
                           _ date: UnsafeRawBufferPointer) -> Bool {
        guard storefront.count == runLengths.0, genre.count == runLengths.1, date.count == runLengths.2,
              let first = storefront.baseAddress, let second = genre.baseAddress, let third = date.baseAddress
        else { return false }
        return memcmp(runText, first, storefront.count) == 0
            && memcmp(runText + storefront.count, second, genre.count) == 0
            && memcmp(runText + storefront.count + genre.count, third, date.count) == 0
    }

    private func keepRunText(_ storefront: UnsafeRawBufferPointer, _ genre: UnsafeRawBufferPointer,
                             _ date: UnsafeRawBufferPointer) {
        runLengths = (-1, -1, -1)
        guard storefront.count + genre.count + date.count <= Self.runTextCapacity,
              let first = storefront.baseAddress, let second = genre.baseAddress, let third = date.baseAddress
        else { return }
        memcpy(runText, first, storefront.count)
        memcpy(runText + storefront.count, second, genre.count)
        memcpy(runText + storefront.count + genre.count, third, date.count)
        runLengths = (storefront.count, genre.count, date.count)
    }

    private func grow() {
        // By half again, not twice: the slack is memory held until the table is published.
        let larger = capacity + capacity / 2
        let newKeys = UnsafeMutablePointer<UInt64>.allocate(capacity: larger)
        newKeys.moveInitialize(from: keys, count: count)
        keys.deallocate()
        keys = newKeys
        let newPlaces = UnsafeMutablePointer<UInt32>.allocate(capacity: larger)
        newPlaces.moveInitialize(from: places, count: count)
        places.deallocate()
        places = newPlaces
        capacity = larger
    }

    @inline(__always)
    private static func integer(_ field: UnsafeRawBufferPointer) -> Int64? {
        field.isEmpty ? nil : EPFValues.integer(field)
    }

    /// The lists of the rows gathered (empty when there are none), or nil when the gathering gave up.
    ///
    /// Each row's app, run and rank are packed into its key when they fit 64 bits together (Apple's ids need 33, a
    /// day's runs about 15, its ranks 8), so the rows sorted by app are read in order; else the key keeps the row
    /// number and the run and rank are looked up by it.
    /// Called once: afterwards the rows are gone and nothing more is gathered (`isComplete` false).
    func finish() -> [(firstID: Int64, bytes: [UInt8])]? {
        guard isComplete else { return nil }
        defer {
            isComplete = false
            count = 0
        }
        let sorted = UnsafeMutableBufferPointer(start: keys, count: count)
        let rowBuffer = UnsafeBufferPointer(start: places, count: count)
        let largestApp = (sorted.max() ?? 0) >> Self.indexBits
        let rankBits = UInt64(Self.bitWidth(UInt64(rowBuffer.lazy.map { $0 & Self.rankMask }.max() ?? 0)))
        let runBits = UInt64(Self.bitWidth(UInt64(max(runs.count - 1, 0))))
        var encoder = ChartAppLists.Encoder()
        if UInt64(Self.bitWidth(largestApp)) + runBits + rankBits <= 64 {
            let appShift = runBits + rankBits
            for row in 0..<count {
                let place = UInt64(places[row])
                sorted[row] = (sorted[row] >> Self.indexBits) << appShift
                    | (place >> UInt64(Self.rankBits)) << rankBits | (place & UInt64(Self.rankMask))
            }
            // The places are in the keys now: their memory goes before the sort takes its own.
            places.deallocate()
            places = .allocate(capacity: 1)
            Self.sortByApp(sorted, from: appShift)
            let runMask = (UInt64(1) << runBits) - 1
            let rankMask = (UInt64(1) << rankBits) - 1
            encode(into: &encoder, sorted: sorted, appShift: appShift) { key in
                (Int((key >> rankBits) & runMask), Int64(key & rankMask))
            }
        } else {
            Self.sortByApp(sorted, from: Self.indexBits)
            let rowMask = (UInt64(1) << Self.indexBits) - 1
            encode(into: &encoder, sorted: sorted, appShift: Self.indexBits) { key in
                let place = self.places[Int(key & rowMask)]
                return (Int(place >> Self.rankBits), Int64(place & Self.rankMask))
            }
        }
        return encoder.finish()
    }

    private static let rankMask: UInt32 = 1 << rankBits - 1

    /// The number of bits `value` takes (at least 1).
    private static func bitWidth(_ value: UInt64) -> Int { max(1, 64 - value.leadingZeroBitCount) }

    /// Encodes the rows of `sorted` (keys sorted by the app above `appShift`), `place` giving a key's run and rank.
    @inline(__always)
    private func encode(into encoder: inout ChartAppLists.Encoder, sorted: UnsafeMutableBufferPointer<UInt64>,
                        appShift: UInt64, place: (UInt64) -> (run: Int, rank: Int64)) {
        var index = 0
        while index < sorted.count {
            let app = sorted[index] >> appShift
            var end = index + 1
            while end < sorted.count && sorted[end] >> appShift == app { end += 1 }
            encoder.startApp(id: Int64(app), count: end - index)
            for key in sorted[index..<end] {
                let (run, rank) = place(key)
                let found = runs[run]
                encoder.appendRow(ChartAppEntry(storefrontID: found.storefront, genreID: found.genre, rank: rank,
                                                exportDate: found.date))
            }
            encoder.endApp()
            index = end
        }
    }

    /// Sorts `keys` by their bits from `lowBit` up (the app), keeping the order of equal apps (the order met): an
    /// LSD radix sort of 11-bit digits, as many as the largest app needs.
    static func sortByApp(_ keys: UnsafeMutableBufferPointer<UInt64>, from lowBit: UInt64) {
        let digitBits: UInt64 = 11
        let buckets = 1 << Int(digitBits)
        let largest = (keys.max() ?? 0) >> lowBit
        guard keys.count > 1, largest > 0 else { return }
        let scratch = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: keys.count)
        defer { scratch.deallocate() }
        let counts = UnsafeMutableBufferPointer<Int>.allocate(capacity: buckets)
        defer { counts.deallocate() }
        var source = keys
        var target = scratch
        var shift = lowBit
        let mask = UInt64(buckets - 1)
        while shift < 64, largest >> (shift - lowBit) > 0 {
            counts.initialize(repeating: 0)
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
            swap(&source, &target)
            shift += digitBits
        }
        if source.baseAddress != keys.baseAddress {
            _ = keys.update(fromContentsOf: source)
        }
    }
}
