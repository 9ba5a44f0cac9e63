import Foundation

/// What is wrong with one data record. The reader reports; the caller decides the policy. Public, as `EPFRecord`
/// is.
public struct RecordIssues: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// More or fewer fields than header columns (a stray 0x01, or a cut record).
    package static let fieldCount = RecordIssues(rawValue: 1)
    /// Bytes that are not well-formed UTF-8.
    package static let invalidUTF8 = RecordIssues(rawValue: 2)
    /// A NUL (0x00) byte.
    package static let nulByte = RecordIssues(rawValue: 4)
    /// The file ended before the record's terminator.
    package static let unterminated = RecordIssues(rawValue: 8)

    /// Short names, for reports: "field-count", "invalid-utf8", "nul-byte", "unterminated".
    package var names: [String] {
        var result: [String] = []
        if contains(.fieldCount) { result.append("field-count") }
        if contains(.invalidUTF8) { result.append("invalid-utf8") }
        if contains(.nulByte) { result.append("nul-byte") }
        if contains(.unterminated) { result.append("unterminated") }
        return result
    }
}

/// One data record, valid only inside the callback that receives it (it points into the reader's buffer).
///
/// Public, with `field` `@inlinable`: the import engine's `RowBinder.bind`, inlined into each store for every row,
/// reads the fields (Swift 6.3 inlines across modules only public members of public types).
public struct EPFRecord {
    /// 1-based number of the data record in its file (header records not counted).
    package let number: Int
    /// Byte offset of the record's first byte in the uncompressed table file.
    package let offset: Int64
    /// The record's bytes without its terminator.
    @usableFromInline
    package let bytes: UnsafeRawBufferPointer
    /// Number of fields found (may differ from the header's column count; see `issues`).
    package let fieldCount: Int
    /// Problems found in this record.
    public let issues: RecordIssues
    @usableFromInline
    let bounds: UnsafePointer<Int>
    @usableFromInline
    let storedFields: Int

    init(number: Int, offset: Int64, bytes: UnsafeRawBufferPointer, fieldCount: Int, storedFields: Int,
         bounds: UnsafePointer<Int>, issues: RecordIssues) {
        self.number = number
        self.offset = offset
        self.bytes = bytes
        self.fieldCount = fieldCount
        self.storedFields = storedFields
        self.bounds = bounds
        self.issues = issues
    }

    /// The bytes of field `index` (0-based); empty when the field is empty or beyond the stored fields.
    @inlinable @inline(__always)
    public func field(_ index: Int) -> UnsafeRawBufferPointer {
        guard index < storedFields, let base = bytes.baseAddress else {
            return UnsafeRawBufferPointer(start: nil, count: 0)
        }
        let start = bounds[index &* 2]
        let end = bounds[index &* 2 &+ 1]
        return UnsafeRawBufferPointer(start: base + start, count: end &- start)
    }

    /// Field `index` as a String, nil when empty (EPF's NULL). Invalid UTF-8 is repaired with U+FFFD.
    package func string(_ index: Int) -> String? {
        let raw = field(index)
        return raw.isEmpty ? nil : String(decoding: raw, as: UTF8.self)
    }
}

/// A record that breaks a rule, kept for reports: number, offset and the problem.
package struct RecordProblem: Sendable, Equatable, Codable {
    /// 1-based data record number.
    package let record: Int
    /// Byte offset of the record in the uncompressed file.
    package let offset: Int64
    /// Problem names (see `RecordIssues.names`).
    package let kinds: [String]
    /// Fields found, when the count was wrong.
    package let fields: Int?
}

/// What reading a whole table file found.
package struct EPFReadSummary: Sendable {
    /// Data records read (good and bad).
    package var records = 0
    /// `#recordsWritten:` from the footer, nil when there was none.
    package var declaredRecords: Int?
    /// True when the file ended without a `#recordsWritten:` footer or inside a record.
    package var truncated = false
    /// Bytes of the uncompressed table file.
    package var bytes: Int64 = 0
    /// Count of bad records per problem name.
    package var problemCounts: [String: Int] = [:]
    /// The first few bad records (at most `ReadOptions.problemSamples`).
    package var problemSamples: [RecordProblem] = []
    /// Records with at least one problem.
    package var badRecords = 0
    /// Records found after the `#recordsWritten:` footer (two files glued together, or a damaged footer).
    package var recordsAfterFooter = 0

    /// True when the declared count is present and differs from the records read.
    package var countMismatch: Bool {
        guard let declaredRecords else { return false }
        return declaredRecords != records || recordsAfterFooter > 0
    }
}

/// How to read.
package struct ReadOptions: Sendable {
    /// Most bytes asked of the source per read; forced down to 1 in tests to exercise every boundary.
    package var readSize: Int = 1 << 20
    /// Check UTF-8 and NUL bytes per record (field counts are always checked).
    package var validate = true
    /// How many bad records to keep as samples.
    package var problemSamples = 10
    /// Decompress on a background thread (archives and .gz).
    package var prefetch = true
    /// Map plain (uncompressed) table files into memory and split them in place, checking UTF-8 on a second
    /// thread, instead of reading them in chunks: no copies. Falls back to reading when a file cannot be mapped.
    /// The file must not shrink while it is read (a mapped page past the end raises SIGBUS).
    package var memoryMap = false
    /// Check `.md5` sidecars before reading an archive.
    package var verifySidecars = true
    /// Largest single record accepted; a longer one means the input is not EPF (or is damaged) and is an error
    /// rather than unbounded memory.
    package var maximumRecordBytes = 256 << 20
    /// Threads that decompress a `.bz2` or `.tbz` input (1: the serial decoder); default one per active core.
    package var decompressionThreads = ProcessInfo.processInfo.activeProcessorCount

    package init(readSize: Int = 1 << 20, validate: Bool = true, problemSamples: Int = 10, prefetch: Bool = true) {
        self.readSize = max(1, readSize)
        self.validate = validate
        self.problemSamples = problemSamples
        self.prefetch = prefetch
    }
}

/// Reads one EPF table file (relational or Flat) from a byte source: the header on creation, then the data
/// records one by one, with exact reports of bad records, truncation and the `#recordsWritten` check.
package final class EPFTableReader {
    /// Where the file is, for messages: a path, or `archive.tbz:member`.
    package let location: String
    /// The parsed header.
    package private(set) var header = EPFHeader()
    private let splitter: RecordSplitter
    private let options: ReadOptions
    private var pending: (start: Int, length: Int, offset: Int64, terminated: Bool)?
    private var footerSeen = false
    private var declared: Int?
    private var fieldBounds: UnsafeMutablePointer<Int>
    private var fieldCapacity: Int
    /// The windows of a mapped file checked ahead (stream offsets are file offsets), when reading one.
    private let windows: WindowValidation?

    /// Reads the header from `source`. Throws `.badHeader` when the stream does not start like an EPF file.
    package init(source: ByteSource, location: String, options: ReadOptions = ReadOptions()) throws {
        self.location = location
        self.options = options
        splitter = RecordSplitter(source: source, readSize: options.readSize,
                                  maximumRecordBytes: options.maximumRecordBytes, location: location)
        windows = nil
        fieldCapacity = 64
        fieldBounds = UnsafeMutablePointer<Int>.allocate(capacity: fieldCapacity * 2)
        try readHeader()
    }

    /// Reads a mapped file in place; with `options.validate`, a second thread checks its windows ahead of the
    /// reader. Reports are exactly those of reading the file through a `FileByteSource`.
    init(mapped file: MappedFile, location: String, options: ReadOptions, windowSize: Int = 1 << 20) throws {
        self.location = location
        self.options = options
        splitter = RecordSplitter(mapped: file, readSize: options.readSize,
                                  maximumRecordBytes: options.maximumRecordBytes, location: location)
        windows = options.validate ? WindowValidation(file: file, windowSize: windowSize) : nil
        fieldCapacity = 64
        fieldBounds = UnsafeMutablePointer<Int>.allocate(capacity: fieldCapacity * 2)
        try readHeader()
    }

    deinit {
        fieldBounds.deallocate()
    }

    private func text(_ record: (start: Int, length: Int, offset: Int64, terminated: Bool), from: Int = 0) -> String {
        String(decoding: UnsafeRawBufferPointer(start: splitter.base + record.start + from,
                                                count: max(0, record.length - from)), as: UTF8.self)
    }

    private func split(_ text: String, by separator: Character) -> [String] {
        text.split(separator: separator, omittingEmptySubsequences: false).map(String.init)
    }

    private func readHeader() throws {
        // Sniff the flavour: relational files have 0x02 0x0A record ends; Flat files use tabs and newlines.
        if try splitter.sniffFlat() { header.flavor = .flat }
        guard var record = try splitter.next() else {
            throw EPFError.badHeader(location: location, message: "the file is empty", offset: 0)
        }
        let separator: Character = header.flavor == .flat ? "\t" : "\u{01}"
        var sawColumns = false
        if header.flavor == .flat && record.length > 0
            && splitter.base.load(fromByteOffset: record.start, as: UInt8.self) != UInt8(ascii: "#") {
            // EPF Flat files may start with a bare column row.
            header.columns = split(text(record), by: separator)
            sawColumns = true
            guard let next = try splitter.next() else {
                header.byteCount = splitter.consumedOffset
                return
            }
            record = next
        }
        while true {
            let bytes = UnsafeRawBufferPointer(start: splitter.base + record.start, count: record.length)
            guard record.length > 0, bytes[0] == UInt8(ascii: "#") else { break }
            // Tags are matched and cut on bytes: as Characters, a combining mark after the '#' or the ':' would
            // hide the tag or be dropped with it.
            func tagged(_ tag: String) -> String? {
                bytes.starts(with: tag.utf8) ? text(record, from: tag.utf8.count) : nil
            }
            if bytes.starts(with: "##".utf8) {
                header.legalLines += 1
            } else if let value = tagged("#primaryKey:") {
                header.primaryKey = value.isEmpty ? [] : split(value, by: separator).filter { !$0.isEmpty }
            } else if let value = tagged("#dbTypes:") {
                header.dbTypes = split(value, by: separator)
            } else if let value = tagged("#exportMode:")?.trimmingCharacters(in: .whitespaces) {
                header.exportMode = ExportMode(rawValue: value.uppercased())
                if header.exportMode == nil { header.unknownExportMode = value }
            } else if let count = tagged("#recordsWritten:") {
                declared = Self.footerCount(count)
                footerSeen = true
                header.byteCount = splitter.consumedOffset
                if !sawColumns {
                    throw EPFError.badHeader(location: location, message: "no column names before the footer",
                                             offset: record.offset)
                }
                pending = nil
                return
            } else if !sawColumns {
                header.columns = split(text(record, from: 1), by: separator)
                sawColumns = true
            } else {
                header.otherTags.append(text(record))
            }
            guard let next = try splitter.next() else {
                header.byteCount = splitter.consumedOffset
                pending = nil
                if !sawColumns {
                    throw EPFError.badHeader(location: location, message: "no column names", offset: 0)
                }
                return
            }
            record = next
        }
        if !sawColumns {
            let preview = text(record).prefix(40).unicodeScalars.map { $0.value < 0x20 ? "." : String($0) }.joined()
            throw EPFError.badHeader(location: location,
                                     message: "the first record does not start with '#' column names: '\(preview)'",
                                     offset: record.offset)
        }
        header.byteCount = record.offset
        pending = record
    }

    /// Calls `body` for every data record, then checks the footer. The record passed to `body` is valid only
    /// during the call. Throws what the source throws (I/O, corrupt compression); bad records and truncation
    /// are reported in the summary, not thrown.
    @discardableResult
    package func forEachRecord(_ body: (EPFRecord) throws -> Void) throws -> EPFReadSummary {
        var summary = EPFReadSummary()
        let expectedFields = header.columns.count
        let separator: Int32 = header.flavor == .flat ? 0x09 : 0x01
        let validate = options.validate
        var cleanSpans = ChunkValidation.Cursor()
        var number = 0
        var current = pending
        pending = nil
        if current == nil && !footerSeen { current = try splitter.next() }
        if footerSeen {
            // The footer came right after the header (a table without rows): what follows it is not data either.
            while let extra = try splitter.next() {
                if extra.length > 0 { summary.recordsAfterFooter += 1 }
            }
        }
        while let record = current {
            let recordBase = splitter.base + record.start
            let footerTag = "#recordsWritten:".utf8
            if record.length >= footerTag.count && recordBase.load(as: UInt8.self) == UInt8(ascii: "#") {
                let bytes = UnsafeRawBufferPointer(start: recordBase, count: record.length)
                if bytes.starts(with: footerTag) {
                    declared = Self.footerCount(text(record, from: footerTag.count))
                    footerSeen = true
                    // Records after the footer are not data: they are counted as a problem of the file.
                    while let extra = try splitter.next() {
                        if extra.length > 0 { summary.recordsAfterFooter += 1 }
                    }
                    break
                }
            }
            number += 1
            var issues: RecordIssues = []
            if !record.terminated { issues.insert(.unterminated) }
            // Locate fields.
            var fields = 0
            var fieldStart = 0
            let length = record.length
            while true {
                let remaining = length - fieldStart
                let found = remaining > 0 ? memchr(recordBase + fieldStart, separator, remaining) : nil
                let fieldEnd = found.map { recordBase.distance(to: $0) } ?? length
                if fields >= fieldCapacity { growFields() }
                fieldBounds[fields &* 2] = fieldStart
                fieldBounds[fields &* 2 &+ 1] = fieldEnd
                fields &+= 1
                if found == nil { break }
                fieldStart = fieldEnd &+ 1
            }
            if fields != expectedFields { issues.insert(.fieldCount) }
            if validate {
                var knownClean = false
                if let windows {
                    let start = Int(record.offset)
                    knownClean = windows.isClean(start: start, end: start + length)
                } else if let (tracker, streamOffset) = chunkValidation {
                    let start = streamOffset + record.offset
                    knownClean = cleanSpans.isClean(tracker, start: start, end: start + Int64(length))
                }
                // One pass for the common clean record; which problems a dirty one has, separately.
                if !knownClean && !UTF8Validator.isCleanText(recordBase, count: length) {
                    if memchr(recordBase, 0, length) != nil { issues.insert(.nulByte) }
                    if !UTF8Validator.isValid(recordBase, count: length) { issues.insert(.invalidUTF8) }
                }
            }
            if !issues.isEmpty {
                summary.badRecords += 1
                for name in issues.names { summary.problemCounts[name, default: 0] += 1 }
                if summary.problemSamples.count < options.problemSamples {
                    summary.problemSamples.append(RecordProblem(record: number, offset: record.offset,
                                                                kinds: issues.names,
                                                                fields: issues.contains(.fieldCount) ? fields : nil))
                }
            }
            try body(EPFRecord(number: number, offset: record.offset,
                               bytes: UnsafeRawBufferPointer(start: recordBase, count: length),
                               fieldCount: fields, storedFields: fields, bounds: fieldBounds, issues: issues))
            current = try splitter.next()
        }
        summary.records = number
        summary.declaredRecords = declared
        summary.bytes = splitter.totalRead
        summary.truncated = header.flavor == .relational && !footerSeen
        if header.flavor == .relational && !footerSeen {
            summary.problemCounts["truncated", default: 0] += 1
        }
        return summary
    }

    /// Chunk checks done ahead by the reading thread, and the offset of this table's first byte in that stream
    /// (set by `FeedInput`); records in clean chunks skip their own UTF-8 and NUL checks.
    package var chunkValidation: (tracker: ChunkValidation, streamOffset: Int64)?

    /// Bytes of the input file consumed so far and its size, for progress (set by `FeedInput`); nil when unknown.
    package var inputPosition: (() -> (read: Int64, total: Int64))?

    /// The count of a `#recordsWritten:` record from the text after the tag; -1 when it is not a number (a broken
    /// footer never matches).
    static func footerCount(_ value: String) -> Int {
        Int(value.trimmingCharacters(in: .whitespaces)) ?? -1
    }

    /// Byte offset where the stream ended (for truncation messages).
    package var endOffset: Int64 { splitter.totalRead }

    /// Bytes of the stream consumed so far (records handed out and their terminators).
    var consumedOffset: Int64 { splitter.consumedOffset }

    private func growFields() {
        let newCapacity = fieldCapacity * 2
        let bigger = UnsafeMutablePointer<Int>.allocate(capacity: newCapacity * 2)
        bigger.update(from: fieldBounds, count: fieldCapacity * 2)
        fieldBounds.deallocate()
        fieldBounds = bigger
        fieldCapacity = newCapacity
    }
}
