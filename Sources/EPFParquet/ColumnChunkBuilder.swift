import Glibc

/// One column of the row group being written: values are gathered into a page, each full page is encoded (PLAIN
/// or dictionary indices, with RLE/bit-packed definition levels), compressed on another core and kept until the row
/// group is written; the statistics (min, max, null count) cover the whole chunk.
final class ColumnChunkBuilder {
    let column: ParquetColumn
    /// Nil: pages are written uncompressed.
    private let compressor: PageCompressor?

    /// A page is encoded when its values take this many bytes, or it holds `maximumPageValues` values.
    static let pageBytes = 64 * 1024
    static let maximumPageValues = 20_000
    /// A dictionary stops growing (later pages are PLAIN) past this many entries or bytes.
    static let maximumDictionaryEntries = 40_000
    static let maximumDictionaryBytes = 1 << 20
    /// Pages of this column compressing at once: the page submitted after them waits for the oldest. Counting pages
    /// (not time) keeps `bufferedBytes`, and so where row groups end, the same from run to run.
    static let pagesInFlight = 4

    // The page being gathered: a definition level per row (1 present, 0 NULL) and the present values.
    private var levels = RawBytes()
    /// INT64 values, or the bits of DOUBLE values.
    private var integers = RawBytes()
    private var texts = RawBytes()
    /// Where each text ends in `texts` (Int).
    private var textEnds = RawBytes()
    /// Values in `textEnds`.
    private var textCount = 0
    private var pageValueBytes = 0

    // The chunk: encoded pages (headers included), sizes, statistics, the dictionary.
    private var pages: [UInt8] = []
    private var uncompressedPageBytes = 0
    /// Pages still compressing, oldest first, and their bytes before compression.
    private var inFlight: [PageInFlight] = []
    private var inFlightBytes = 0
    private(set) var rows = 0
    private var nulls = 0
    private var minimumInteger = Int64.max
    private var maximumInteger = Int64.min
    private var minimumDouble = Double.infinity
    private var maximumDouble = -Double.infinity
    private var sawNaN = false
    /// The chunk's least and greatest text, when `sawText` (raw buffers: the comparison made for every value then
    /// costs no reference counting).
    private var minimumText = RawBytes(capacity: 64)
    private var maximumText = RawBytes(capacity: 64)
    private var sawText = false
    private enum Mode { case undecided, dictionary, plain }
    private var mode: Mode
    /// Whether the dictionary stopped growing in this chunk (later pages PLAIN).
    private var dictionaryClosed = false
    private var dictionary = ByteDictionary()

    init(column: ParquetColumn, compressor: PageCompressor?) {
        self.column = column
        self.compressor = compressor
        mode = column.type == .string && column.dictionary ? .undecided : .plain
    }

    deinit {
        levels.deallocate()
        integers.deallocate()
        texts.deallocate()
        textEnds.deallocate()
        minimumText.deallocate()
        maximumText.deallocate()
    }

    /// Bytes held for the row group: encoded pages (those still compressing by their size before), the page being
    /// gathered and the dictionary.
    var bufferedBytes: Int { pages.count + inFlightBytes + pageValueBytes + levels.count + dictionary.byteCount }

    @inline(__always)
    func appendNull() throws {
        levels.append(UInt8(0))
        nulls += 1
        rows += 1
        if levels.count >= Self.maximumPageValues { try flushPage() }
    }

    @inline(__always)
    func append(_ value: Int64) throws {
        levels.append(UInt8(1))
        integers.append(value)
        if value < minimumInteger { minimumInteger = value }
        if value > maximumInteger { maximumInteger = value }
        pageValueBytes += 8
        rows += 1
        if pageValueBytes >= Self.pageBytes || levels.count >= Self.maximumPageValues { try flushPage() }
    }

    @inline(__always)
    func append(_ value: Double) throws {
        levels.append(UInt8(1))
        integers.append(value.bitPattern)
        if value.isNaN {
            sawNaN = true
        } else {
            if value < minimumDouble { minimumDouble = value }
            if value > maximumDouble { maximumDouble = value }
        }
        pageValueBytes += 8
        rows += 1
        if pageValueBytes >= Self.pageBytes || levels.count >= Self.maximumPageValues { try flushPage() }
    }

    @inline(__always)
    func append(_ bytes: UnsafeRawBufferPointer) throws {
        levels.append(UInt8(1))
        texts.append(bytes)
        textEnds.append(texts.count)
        textCount += 1
        updateTextStatistics(bytes)
        pageValueBytes += bytes.count + 4
        rows += 1
        if pageValueBytes >= Self.pageBytes || levels.count >= Self.maximumPageValues { try flushPage() }
    }

    private func updateTextStatistics(_ bytes: UnsafeRawBufferPointer) {
        guard sawText else {
            minimumText.append(bytes)
            maximumText.append(bytes)
            sawText = true
            return
        }
        if Self.compare(bytes, minimumText.bytes) < 0 {
            minimumText.removeAll()
            minimumText.append(bytes)
        } else if Self.compare(bytes, maximumText.bytes) > 0 {
            maximumText.removeAll()
            maximumText.append(bytes)
        }
    }

    /// Unsigned bytewise order, Parquet's order for UTF-8 strings.
    private static func compare(_ left: UnsafeRawBufferPointer, _ right: UnsafeRawBufferPointer) -> Int {
        let common = min(left.count, right.count)
        if common > 0, let base = left.baseAddress, let other = right.baseAddress {
            let result = memcmp(base, other, common)
            if result != 0 { return Int(result) }
        }
        return left.count - right.count
    }

    /// Encodes the page gathered so far and hands it to the compressor (or keeps it, uncompressed).
    func flushPage() throws {
        let valueCount = levels.count
        guard valueCount > 0 else { return }
        var body: [UInt8] = []
        body.reserveCapacity(pageValueBytes + 64)
        // Definition levels (max level 1, bit width 1), prefixed by their length (data page v1).
        body.append(contentsOf: [0, 0, 0, 0])
        let levelBytes = levels.bytes
        HybridEncoding.encode(count: valueCount, bitWidth: 1, into: &body) { UInt32(levelBytes[$0]) }
        let levelLength = UInt32(body.count - 4)
        for shift in 0..<4 { body[shift] = UInt8(truncatingIfNeeded: levelLength >> (8 * UInt32(shift))) }

        let encoding = encodeValues(into: &body)
        if let compressor {
            inFlight.append(PageInFlight(values: valueCount, encoding: encoding, bytes: body.count,
                                         compressed: compressor.submit(body)))
            inFlightBytes += body.count
            if inFlight.count > Self.pagesInFlight { try keepOldestPage() }
        } else {
            keep(body, values: valueCount, encoding: encoding, uncompressedBytes: body.count)
        }
        levels.removeAll()
        integers.removeAll()
        texts.removeAll()
        textEnds.removeAll()
        textCount = 0
        pageValueBytes = 0
    }

    /// Waits for the oldest page in flight and keeps it.
    private func keepOldestPage() throws {
        let page = inFlight.removeFirst()
        inFlightBytes -= page.bytes
        keep(try page.compressed.take(), values: page.values, encoding: page.encoding, uncompressedBytes: page.bytes)
    }

    /// Appends a data page (its header, then `body` as written) to the chunk.
    private func keep(_ body: [UInt8], values: Int, encoding: Encoding, uncompressedBytes: Int) {
        let header = ThriftCompactWriter.message { page in
            page.i32(1, PageType.dataPage.rawValue)
            page.i32(2, Int32(uncompressedBytes))
            page.i32(3, Int32(body.count))
            page.structure(5) { data in
                data.i32(1, Int32(values))
                data.i32(2, encoding.rawValue)
                data.i32(3, Encoding.rle.rawValue)
                data.i32(4, Encoding.rle.rawValue)
            }
        }
        pages.append(contentsOf: header)
        pages.append(contentsOf: body)
        uncompressedPageBytes += header.count + uncompressedBytes
    }

    /// Appends the page's present values to `body`; returns their encoding.
    private func encodeValues(into body: inout [UInt8]) -> Encoding {
        switch column.physicalType {
        case .int64:
            body.append(contentsOf: integers.bytes) // little-endian on every platform epf runs on
            return .plain
        case .double:
            body.append(contentsOf: integers.bytes)
            return .plain
        default:
            // A page without values decides nothing (a dictionary-encoded page needs a dictionary page).
            if mode == .undecided && textCount > 0 { decideDictionary() }
            if mode == .dictionary && !dictionaryClosed {
                encodeIndices(into: &body)
                if dictionary.count > Self.maximumDictionaryEntries
                    || dictionary.byteCount > Self.maximumDictionaryBytes {
                    dictionaryClosed = true
                }
                return .rleDictionary
            }
            forEachText { text in
                let length = UInt32(text.count)
                for shift in 0..<4 { body.append(UInt8(truncatingIfNeeded: length >> (8 * UInt32(shift)))) }
                body.append(contentsOf: text)
            }
            return .plain
        }
    }

    /// Calls `body` with each text of the page, in order.
    private func forEachText(_ body: (UnsafeRawBufferPointer) -> Void) {
        let all = texts.bytes
        var start = 0
        for index in 0..<textCount {
            let end = textEnds.load(index, as: Int.self)
            body(UnsafeRawBufferPointer(rebasing: all[start..<end]))
            start = end
        }
    }

    /// The first page decides: a dictionary pays when at most half of its values are distinct.
    private func decideDictionary() {
        var scratch = ByteDictionary()
        forEachText { _ = scratch.index(of: $0) }
        mode = scratch.count * 2 <= textCount ? .dictionary : .plain
    }

    private func encodeIndices(into body: inout [UInt8]) {
        var indices: [UInt32] = []
        indices.reserveCapacity(textCount)
        forEachText { indices.append(UInt32(dictionary.index(of: $0))) }
        let width = HybridEncoding.bitWidth(forMaximum: max(dictionary.count - 1, 1))
        body.append(UInt8(width))
        indices.withUnsafeBufferPointer { indices in
            HybridEncoding.encode(count: indices.count, bitWidth: width, into: &body) { indices[$0] }
        }
    }

    /// The finished chunk, written by `write` (the dictionary page first, when there is one), and what the footer
    /// says of it. The builder is empty afterwards, ready for the next row group (a page buffer of at most 1 MB keeps
    /// its capacity: the many small row groups of a table split by storefront then allocate nothing).
    func finishChunk(write: ([UInt8]) throws -> Void) throws -> ColumnChunkSummary {
        try flushPage()
        while !inFlight.isEmpty { try keepOldestPage() }
        var dictionaryPageLength: Int?
        var uncompressed = uncompressedPageBytes
        var encodings: [Encoding] = [.plain, .rle]
        if mode == .dictionary && dictionary.count > 0 {
            var plain: [UInt8] = []
            plain.reserveCapacity(dictionary.byteCount + 4 * dictionary.count)
            for index in 0..<dictionary.count {
                let entry = dictionary.entry(index)
                let length = UInt32(entry.count)
                for shift in 0..<4 { plain.append(UInt8(truncatingIfNeeded: length >> (8 * UInt32(shift)))) }
                plain.append(contentsOf: entry)
            }
            let compressed = try compressor?.submit(plain).take() ?? plain
            let header = ThriftCompactWriter.message { page in
                page.i32(1, PageType.dictionaryPage.rawValue)
                page.i32(2, Int32(plain.count))
                page.i32(3, Int32(compressed.count))
                page.structure(7) { dictionaryHeader in
                    dictionaryHeader.i32(1, Int32(dictionary.count))
                    dictionaryHeader.i32(2, Encoding.plain.rawValue)
                }
            }
            try write(header + compressed)
            dictionaryPageLength = header.count + compressed.count
            uncompressed += header.count + plain.count
            encodings.append(.rleDictionary)
        }
        try write(pages)
        let summary = ColumnChunkSummary(
            column: column, rows: rows, nulls: nulls, uncompressedBytes: uncompressed,
            compressedBytes: pages.count + (dictionaryPageLength ?? 0), dictionaryPageLength: dictionaryPageLength,
            compressed: compressor != nil, encodings: encodings.map(\.rawValue), statistics: statistics())
        reset()
        return summary
    }

    /// min_value and max_value, PLAIN-encoded, when the chunk has values (and for strings both are at most 64 bytes,
    /// so a long text does not bloat the footer; for doubles when no NaN was seen).
    private func statistics() -> (minimum: [UInt8], maximum: [UInt8])? {
        guard rows > nulls else { return nil }
        switch column.physicalType {
        case .int64:
            return (Self.littleEndian(minimumInteger), Self.littleEndian(maximumInteger))
        case .double:
            guard !sawNaN else { return nil }
            // Parquet: a zero minimum is written -0.0, a zero maximum +0.0.
            let low = minimumDouble == 0 ? -0.0 : minimumDouble
            let high = maximumDouble == 0 ? 0.0 : maximumDouble
            return (Self.littleEndian(Int64(bitPattern: low.bitPattern)),
                    Self.littleEndian(Int64(bitPattern: high.bitPattern)))
        default:
            guard sawText, minimumText.count <= 64, maximumText.count <= 64 else { return nil }
            return (Array(minimumText.bytes), Array(maximumText.bytes))
        }
    }

    private static func littleEndian(_ value: Int64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: UInt64(bitPattern: value) >> (8 * UInt64($0))) }
    }

    private func reset() {
        pages.removeAll(keepingCapacity: pages.capacity <= 1 << 20)
        uncompressedPageBytes = 0
        rows = 0
        nulls = 0
        minimumInteger = .max
        maximumInteger = .min
        minimumDouble = .infinity
        maximumDouble = -.infinity
        sawNaN = false
        minimumText.removeAll()
        maximumText.removeAll()
        sawText = false
        mode = column.type == .string && column.dictionary ? .undecided : .plain
        dictionaryClosed = false
        dictionary.removeAll()
    }
}

/// A page handed to the compressor: what its header will say, and its compressed bytes to come.
private struct PageInFlight {
    let values: Int
    let encoding: Encoding
    /// Before compression.
    let bytes: Int
    let compressed: CompressedPage
}

/// What the footer says of one column chunk; offsets are added when it is written.
struct ColumnChunkSummary {
    let column: ParquetColumn
    let rows: Int
    let nulls: Int
    let uncompressedBytes: Int
    let compressedBytes: Int
    /// The length of the dictionary page (header included) at the chunk's start, nil without one.
    let dictionaryPageLength: Int?
    /// GZIP, else UNCOMPRESSED.
    let compressed: Bool
    let encodings: [Int32]
    let statistics: (minimum: [UInt8], maximum: [UInt8])?

    /// `ColumnChunk` (file_offset 2, meta_data 3) with its `ColumnMetaData`: type 1, encodings 2, path_in_schema 3,
    /// codec 4, num_values 5, total_uncompressed_size 6, total_compressed_size 7, data_page_offset 9,
    /// dictionary_page_offset 11, statistics 12 (null_count 3, max_value 5, min_value 6).
    func write(_ writer: inout ThriftCompactWriter, at offset: Int64) {
        writer.i64(2, offset)
        writer.structure(3) { meta in
            meta.i32(1, column.physicalType.rawValue)
            meta.i32List(2, encodings)
            meta.stringList(3, [column.name])
            meta.i32(4, (compressed ? CompressionCodec.gzip : .uncompressed).rawValue)
            meta.i64(5, Int64(rows))
            meta.i64(6, Int64(uncompressedBytes))
            meta.i64(7, Int64(compressedBytes))
            meta.i64(9, offset + Int64(dictionaryPageLength ?? 0))
            if dictionaryPageLength != nil { meta.i64(11, offset) }
            meta.structure(12) { stats in
                stats.i64(3, Int64(nulls))
                if let statistics {
                    stats.binary(5, statistics.maximum)
                    stats.binary(6, statistics.minimum)
                }
            }
        }
    }
}
