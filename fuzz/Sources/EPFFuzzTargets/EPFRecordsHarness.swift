import EPFFormat
import Foundation

/// The table reader (record splitter, header, field bounds) and the value parsers over one table file.
///
/// The first input byte picks the read size and whether records are validated; the rest is the file. The reader
/// must give the same answer at every read size, the answer of a naive reference reader, and every field must
/// convert as the naive value parsers say.
enum EPFRecordsHarness {
    /// Read sizes chosen by the knob byte: one byte at a time up to everything at once (the splitter's smallest
    /// buffer holds any input of `maximumLength`).
    static let readSizes = [1, 2, 3, 5, 8, 64, 4096, wholeRead]
    static let wholeRead = 1 << 16

    static func run(_ data: UnsafeRawBufferPointer) throws(FuzzFailure) {
        guard let knob = data.first else { return }
        let bytes = Array(data.dropFirst())
        let readSize = readSizes[Int(knob & 7)]
        let validate = knob & 8 == 0
        let whole = read(bytes, readSize: wholeRead, validate: validate)
        if readSize != wholeRead {
            let pieces = read(bytes, readSize: readSize, validate: validate)
            try check(pieces == whole, "read size \(readSize) gives \(pieces), one read gives \(whole)")
        }
        var reference = ReferenceTableReader.read(bytes, validate: validate)
        reference.errorDetail = whole.errorDetail
        try check(whole == reference, "reader \(whole) differs from the reference \(reference)")
        try EPFValuesOracle.verify(whole)
    }

    /// Everything the reader reports about a file.
    static func read(_ bytes: [UInt8], readSize: Int, validate: Bool) -> TableReading {
        var options = ReadOptions(readSize: readSize, validate: validate, problemSamples: 1000, prefetch: false)
        options.decompressionThreads = 1
        var reading = TableReading()
        do {
            let reader = try EPFTableReader(source: MemoryByteSource(bytes, maximumRead: readSize), location: "fuzz",
                                            options: options)
            reading.header = reader.header
            let summary = try reader.forEachRecord { record in
                var fields: [[UInt8]] = []
                for index in 0..<record.fieldCount { fields.append(Array(record.field(index))) }
                reading.records.append(TableReading.Record(offset: Int(record.offset), fields: fields,
                                                           terminated: !record.issues.contains(.unterminated),
                                                           issues: record.issues.names))
            }
            reading.summary = [summary.records, summary.declaredRecords ?? -2, summary.truncated ? 1 : 0,
                               Int(summary.bytes), summary.badRecords, summary.recordsAfterFooter]
            reading.problemCounts = summary.problemCounts
        } catch {
            if case EPFError.badHeader = error { reading.error = "bad header" } else { reading.error = "other" }
            reading.errorDetail = "\(error)"
        }
        return reading
    }
}

/// What reading a table file gave, comparable between readers.
struct TableReading: Equatable, CustomStringConvertible {
    struct Record: Equatable {
        var offset: Int
        var fields: [[UInt8]]
        var terminated: Bool
        var issues: [String]
    }

    var header: EPFHeader?
    var records: [Record] = []
    /// records, declared (-2 for none), truncated, bytes, bad records, records after the footer.
    var summary: [Int] = []
    var problemCounts: [String: Int] = [:]
    /// "bad header" or "other"; the message itself is in `errorDetail`.
    var error: String?
    var errorDetail: String?

    var description: String {
        var text = "header "
        if let header {
            text += "\(header.columns) \(header.flavor) pk \(header.primaryKey) types \(header.dbTypes) mode "
            text += "\(String(describing: header.exportMode)) legal \(header.legalLines) other \(header.otherTags) "
            text += "bytes \(header.byteCount)"
        } else {
            text += "none"
        }
        let shown = records.prefix(4).map { record in
            "@\(record.offset) \(record.fields.map { preview($0, limit: 24) }) \(record.issues)"
        }
        return text + ", \(records.count) records \(shown), summary \(summary) \(problemCounts), error "
            + (errorDetail ?? error ?? "none")
    }
}
