import EPFFormat
import Foundation

/// Why a record was not loaded.
public struct RejectReason: Sendable, Equatable {
    /// Short machine-readable kind: field-count, invalid-utf8, nul-byte, unterminated, bad-integer, bad-decimal,
    /// bad-date, empty-key.
    public let kind: String
    /// Human-readable detail: the column and the offending value (truncated).
    public let detail: String
}

/// Checks the typed values of a record against a schema and binds them to an INSERT statement, without
/// allocating per field on the good path.
final class RowBinder {
    private enum Kind: UInt8 { case integer, decimal, text, datetime }
    private let kinds: [Kind]
    private let names: [String]
    private let keyColumns: Set<Int>
    private let rejectBadDates: Bool
    /// Dates that could not be parsed and were stored as NULL.
    private(set) var nulledDates = 0
    /// Column index of `export_date`, if present.
    let exportDateColumn: Int?
    /// The column count the schema expects from the file.
    let columnCount: Int

    /// Per-column kind codes and key flags in plain memory: the hot loop reads them without ARC traffic.
    private let kindTable: UnsafeMutablePointer<Kind>
    private let keyTable: UnsafeMutablePointer<Bool>

    deinit {
        kindTable.deallocate()
        keyTable.deallocate()
    }

    init(schema: TableSchema, fileColumns: Int, rejectBadDates: Bool) {
        let fileSchema = schema.columns.prefix(fileColumns)
        kinds = fileSchema.map { column in
            switch column.type {
            case .integer, .boolean: return .integer
            case .decimal: return .decimal
            case .text: return .text
            case .datetime: return .datetime
            }
        }
        names = fileSchema.map(\.name)
        keyColumns = Set(schema.primaryKey.compactMap { key in fileSchema.firstIndex { $0.name == key } })
        exportDateColumn = fileSchema.firstIndex { $0.name == "export_date" }
        self.rejectBadDates = rejectBadDates
        columnCount = fileSchema.count
        kindTable = UnsafeMutablePointer<Kind>.allocate(capacity: max(1, kinds.count))
        keyTable = UnsafeMutablePointer<Bool>.allocate(capacity: max(1, kinds.count))
        for (index, kind) in kinds.enumerated() {
            (kindTable + index).initialize(to: kind)
            (keyTable + index).initialize(to: keyColumns.contains(index))
        }
    }

    private static func preview(_ field: UnsafeRawBufferPointer) -> String {
        let text = String(decoding: field.prefix(40), as: UTF8.self)
        let visible = text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7f
            ? String(format: "\\x%02x", $0.value) : String($0) }.joined()
        return field.count > 40 ? visible + "..." : visible
    }

    /// The record-level problem, if any, as a reject reason.
    func recordProblem(_ record: EPFRecord) -> RejectReason? {
        let issues = record.issues
        if issues.isEmpty { return nil }
        if issues.contains(.unterminated) {
            return RejectReason(kind: "unterminated", detail: "the file ends inside this record")
        }
        if issues.contains(.fieldCount) {
            return RejectReason(kind: "field-count",
                                detail: "\(record.fieldCount) fields, header has \(columnCount) "
                                    + "(a stray 0x01 inside a value?)")
        }
        if issues.contains(.nulByte) { return RejectReason(kind: "nul-byte", detail: "a NUL byte inside the record") }
        return RejectReason(kind: "invalid-utf8", detail: "bytes that are not UTF-8")
    }

    /// Validates every field and binds it to `statement` (parameters 1...n in file order). Returns the reason when
    /// the record must be rejected; then the statement's bindings are incomplete and it must not be stepped.
    @inline(__always)
    func bind(_ record: EPFRecord, to statement: SQLiteStatement?) throws -> RejectReason? {
        if let problem = recordProblem(record) { return problem }
        for index in 0..<columnCount {
            let field = record.field(index)
            let parameter = Int32(index + 1)
            if field.isEmpty {
                if keyTable[index] {
                    return RejectReason(kind: "empty-key", detail: "primary key column \(names[index]) is empty")
                }
                try statement?.bindNull(at: parameter)
                continue
            }
            switch kindTable[index] {
            case .integer:
                guard let value = EPFValues.integer(field) else {
                    return RejectReason(kind: "bad-integer",
                                        detail: "junk in integer column \(names[index]): '\(Self.preview(field))'")
                }
                try statement?.bind(value, at: parameter)
            case .text:
                if let base = field.baseAddress {
                    try statement?.bindTextNoCopy(base, count: field.count, at: parameter)
                }
            case .decimal:
                guard EPFValues.decimal(field), let base = field.baseAddress else {
                    return RejectReason(kind: "bad-decimal",
                                        detail: "not a decimal in column \(names[index]): '\(Self.preview(field))'")
                }
                try statement?.bindTextNoCopy(base, count: field.count, at: parameter)
            case .datetime:
                if let normalised = EPFValues.datetime(field) {
                    try statement?.bind(normalised, at: parameter)
                } else if rejectBadDates {
                    return RejectReason(kind: "bad-date",
                                        detail: "unparseable date in column \(names[index]): '\(Self.preview(field))'")
                } else {
                    nulledDates += 1
                    try statement?.bindNull(at: parameter)
                }
            }
        }
        return nil
    }
}

/// Writes rejected records next to the database, in EPF format: `reason`, `record`, `offset`, `detail`, then the
/// original record's bytes, and a `#recordsWritten:` footer. Nothing is created until the first reject.
final class RejectsWriter {
    let path: String
    private let columns: [String]
    private var handle: FileHandle?
    private var buffer: [UInt8] = []
    private(set) var count = 0

    /// Prepares the rejects file. With `resumeAt`, keeps the file's first bytes and appends after them.
    init(path: String, columns: [String], resumeAt: Int64?, resumedCount: Int) throws {
        self.path = path
        self.columns = columns
        if let resumeAt, resumedCount > 0, FileManager.default.fileExists(atPath: path) {
            guard let handle = FileHandle(forUpdatingAtPath: path) else {
                throw ImportError.io(path: path, message: "cannot open the rejects file for writing")
            }
            try handle.truncate(atOffset: UInt64(resumeAt))
            try handle.seekToEnd()
            self.handle = handle
            count = resumedCount
        } else {
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    private func open() throws -> FileHandle {
        if let handle { return handle }
        let directory = (path as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw ImportError.io(path: directory, message: "cannot create the rejects directory: \(error)")
        }
        guard FileManager.default.createFile(atPath: path, contents: nil),
              let handle = FileHandle(forUpdatingAtPath: path) else {
            throw ImportError.io(path: path, message: "cannot create the rejects file")
        }
        self.handle = handle
        var header = "#reason\u{01}record\u{01}offset\u{01}detail\u{01}" + columns.joined(separator: "\u{01}")
        header += "\u{02}\n#exportMode:REJECTS\u{02}\n"
        buffer.insert(contentsOf: header.utf8, at: 0)
        return handle
    }

    func write(_ record: EPFRecord, reason: RejectReason) {
        count += 1
        let prefix = "\(reason.kind)\u{01}\(record.number)\u{01}\(record.offset)\u{01}"
            + reason.detail.replacingOccurrences(of: "\u{01}", with: " ") + "\u{01}"
        buffer.append(contentsOf: prefix.utf8)
        buffer.append(contentsOf: record.bytes)
        buffer.append(contentsOf: [0x02, 0x0A])
        if buffer.count > 1 << 20 { _ = try? flush() }
    }

    /// Writes buffered rejects; returns the file's length (0 while there is no file).
    @discardableResult
    func flush() throws -> Int64 {
        guard count > 0 else { return 0 }
        let handle = try open()
        if !buffer.isEmpty {
            try handle.write(contentsOf: buffer)
            buffer.removeAll(keepingCapacity: true)
        }
        return Int64(try handle.offset())
    }

    /// Writes the footer and closes; does nothing when there were no rejects.
    func finish() throws {
        guard count > 0 else { return }
        buffer.append(contentsOf: "#recordsWritten:\(count)\u{02}\n".utf8)
        try flush()
        try handle?.close()
        handle = nil
    }

    /// Closes, keeping what was written (with its footer) when there were rejects.
    func discardIfEmpty() {
        if count > 0 { try? finish() }
        try? handle?.close()
        handle = nil
    }
}

/// A set of 64-bit key hashes with open addressing, to count duplicate keys in an incremental file without a
/// `Set` insertion (and SipHash) per row. Memory grows with the number of distinct keys (16 bytes each at most).
struct KeyHashSet {
    private var slots: [UInt64]
    private var mask: Int
    private(set) var count = 0

    init(capacity: Int = 1 << 16) {
        var size = 1
        while size < capacity * 2 { size <<= 1 }
        slots = Array(repeating: 0, count: size)
        mask = size - 1
    }

    /// Inserts a hash; returns false when it was already present. 0 is remapped so it can mark empty slots.
    mutating func insert(_ hash: UInt64) -> Bool {
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
    static func hash(_ record: EPFRecord, keyIndexes: [Int]) -> UInt64 {
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
