import EPFFormat
import Foundation

/// Writes the rejects file of one table next to the database, in EPF format. Each entry is one record:
///
/// `reason`, `record`, `offset`, `action`, `column`, `value`, `detail`, then the table's own columns.
///
/// - `action` `rejected`: the row was not loaded; the original record's fields follow (so the entry has the
///   record's field count plus seven). `column` and `value` name the offending value when there is one.
/// - `action` `repaired`: the row was loaded with `column` stored as NULL because `value` (the original text)
///   was not of the column's type; the table's columns follow empty.
///
/// `value` is at most 200 bytes of the original (cut at a character boundary, `...` appended) with control bytes
/// written `\xNN` and backslashes `\\`, so no value can break the file. A `#recordsWritten:` footer counts the
/// entries. Nothing is created until the first entry.
package final class RejectsWriter {
    package let path: String
    private let columns: [String]
    private var handle: FileHandle?
    private var buffer: [UInt8] = []
    /// Entries written (rejected rows plus repairs).
    private(set) var entries = 0

    /// Prepares the rejects file. With `resumeAt`, keeps the file's first bytes (holding `resumedEntries`
    /// entries) and appends after them.
    package init(path: String, columns: [String], resumeAt: Int64?, resumedEntries: Int) throws {
        self.path = path
        self.columns = columns
        if let resumeAt, resumedEntries > 0, FileManager.default.fileExists(atPath: path) {
            guard let handle = FileHandle(forUpdatingAtPath: path) else {
                throw ImportError.io(path: path, message: "cannot open the rejects file for writing")
            }
            try handle.truncate(atOffset: UInt64(resumeAt))
            try handle.seekToEnd()
            self.handle = handle
            entries = resumedEntries
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
            throw ImportError.io(path: directory, message: "cannot create the rejects directory: \(errorText(error))")
        }
        guard FileManager.default.createFile(atPath: path, contents: nil),
              let handle = FileHandle(forUpdatingAtPath: path) else {
            throw ImportError.io(path: path, message: "cannot create the rejects file")
        }
        self.handle = handle
        var header = "#" + (Self.leadingColumns + columns).joined(separator: "\u{01}")
        header += "\u{02}\n#exportMode:REJECTS\u{02}\n"
        buffer.insert(contentsOf: header.utf8, at: 0)
        return handle
    }

    /// The columns every entry starts with.
    package static let leadingColumns = ["reason", "record", "offset", "action", "column", "value", "detail"]

    private func appendPrefix(_ record: EPFRecord, reason: RejectReason, action: String) {
        entries += 1
        var prefix = "\(reason.kind)\u{01}\(record.number)\u{01}\(record.offset)\u{01}\(action)\u{01}"
        prefix += (reason.column ?? "") + "\u{01}" + (reason.value ?? "") + "\u{01}"
        prefix += reason.detail.replacingOccurrences(of: "\u{01}", with: " ")
            .replacingOccurrences(of: "\u{02}", with: " ") + "\u{01}"
        buffer.append(contentsOf: prefix.utf8)
    }

    /// Writes a rejected record: the reason, then the record's original bytes.
    package func write(_ record: EPFRecord, reason: RejectReason) {
        appendPrefix(record, reason: reason, action: "rejected")
        buffer.append(contentsOf: record.bytes)
        buffer.append(contentsOf: [0x02, 0x0A])
        if buffer.count > 1 << 20 { _ = try? flush() }
    }

    /// Writes a repair: the record was loaded with `reason.column` stored as NULL.
    func writeRepair(_ record: EPFRecord, reason: RejectReason) {
        appendPrefix(record, reason: reason, action: "repaired")
        if columns.count > 1 { buffer.append(contentsOf: repeatElement(UInt8(0x01), count: columns.count - 1)) }
        buffer.append(contentsOf: [0x02, 0x0A])
        if buffer.count > 1 << 20 { _ = try? flush() }
    }

    /// Writes buffered entries; returns the file's length (0 while there is no file).
    @discardableResult
    package func flush() throws -> Int64 {
        guard entries > 0 else { return 0 }
        let handle = try open()
        if !buffer.isEmpty {
            try handle.write(contentsOf: buffer)
            buffer.removeAll(keepingCapacity: true)
        }
        return Int64(try handle.offset())
    }

    /// Writes the footer and closes; does nothing when there were no entries.
    package func finish() throws {
        guard entries > 0 else { return }
        buffer.append(contentsOf: "#recordsWritten:\(entries)\u{02}\n".utf8)
        try flush()
        try handle?.close()
        handle = nil
    }

    /// Closes, keeping what was written (with its footer) when there were entries.
    package func discardIfEmpty() {
        if entries > 0 { try? finish() }
        try? handle?.close()
        handle = nil
    }
}
