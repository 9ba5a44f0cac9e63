import EPFFormat
import Foundation

/// A naive EPF table reader, written from EPF-FORMAT.md with whole arrays and no buffering, to check the real one.
enum ReferenceTableReader {
    static func read(_ bytes: [UInt8], validate: Bool) -> TableReading {
        var reading = TableReading()
        let flat = isFlat(bytes)
        let records = split(bytes, flat: flat)
        var header = EPFHeader()
        header.flavor = flat ? .flat : .relational
        let separator: UInt8 = flat ? 0x09 : 0x01
        var index = 0
        var sawColumns = false
        func text(_ bytes: ArraySlice<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }
        func fields(_ bytes: ArraySlice<UInt8>) -> [String] {
            bytes.split(separator: separator, omittingEmptySubsequences: false).map { text($0) }
        }
        func starts(_ record: ArraySlice<UInt8>, _ tag: String) -> Bool { record.starts(with: tag.utf8) }
        func after(_ record: ArraySlice<UInt8>, _ tag: String) -> ArraySlice<UInt8> {
            record.dropFirst(tag.utf8.count)
        }
        guard !records.isEmpty else {
            reading.error = "bad header"
            return reading
        }
        if flat, let first = records.first?.bytes.first, first != UInt8(ascii: "#") {
            header.columns = fields(records[0].bytes)
            sawColumns = true
            index = 1
        }
        var footer: Int?
        while index < records.count, let first = records[index].bytes.first, first == UInt8(ascii: "#") {
            let record = records[index].bytes
            if starts(record, "##") {
                header.legalLines += 1
            } else if starts(record, "#primaryKey:") {
                header.primaryKey = fields(after(record, "#primaryKey:")).filter { !$0.isEmpty }
            } else if starts(record, "#dbTypes:") {
                header.dbTypes = fields(after(record, "#dbTypes:"))
            } else if starts(record, "#exportMode:") {
                let value = text(after(record, "#exportMode:")).trimmingCharacters(in: .whitespaces)
                header.exportMode = ExportMode(rawValue: value.uppercased())
                if header.exportMode == nil { header.unknownExportMode = value }
            } else if starts(record, "#recordsWritten:") {
                footer = index
                break
            } else if !sawColumns {
                header.columns = fields(record.dropFirst())
                sawColumns = true
            } else {
                header.otherTags.append(text(record))
            }
            index += 1
        }
        guard sawColumns else {
            reading.error = "bad header"
            return reading
        }
        header.byteCount = Int64(index < records.count ? records[index].offset : bytes.count)
        if let footer {
            header.byteCount = Int64(footer + 1 < records.count ? records[footer + 1].offset : bytes.count)
        }
        var data: [Record] = []
        if footer == nil {
            while index < records.count {
                if starts(records[index].bytes, "#recordsWritten:") {
                    footer = index
                    break
                }
                data.append(records[index])
                index += 1
            }
        }
        var declared = -2
        var afterFooter = 0
        if let footer {
            let value = text(after(records[footer].bytes, "#recordsWritten:")).trimmingCharacters(in: .whitespaces)
            declared = Int(value) ?? -1
            afterFooter = records[(footer + 1)...].filter { !$0.bytes.isEmpty }.count
        }
        var problems: [String: Int] = [:]
        var bad = 0
        for record in data {
            let split = record.bytes.split(separator: separator, omittingEmptySubsequences: false).map(Array.init)
            var issues: [String] = []
            if split.count != header.columns.count { issues.append("field-count") }
            if validate && String(validating: record.bytes, as: UTF8.self) == nil { issues.append("invalid-utf8") }
            if validate && record.bytes.contains(0) { issues.append("nul-byte") }
            if !record.terminated { issues.append("unterminated") }
            let ordered = ["field-count", "invalid-utf8", "nul-byte", "unterminated"].filter(issues.contains)
            if !ordered.isEmpty { bad += 1 }
            for issue in ordered { problems[issue, default: 0] += 1 }
            reading.records.append(TableReading.Record(offset: record.offset, fields: split,
                                                       terminated: record.terminated, issues: ordered))
        }
        let truncated = !flat && footer == nil
        if truncated { problems["truncated", default: 0] += 1 }
        reading.header = header
        reading.summary = [data.count, declared, truncated ? 1 : 0, bytes.count, bad, afterFooter]
        reading.problemCounts = problems
        return reading
    }

    struct Record {
        var offset: Int
        var bytes: ArraySlice<UInt8>
        var terminated: Bool
    }

    /// Relational unless there is no `0x02 0x0A` and the first line holds a tab and no `0x01`.
    static func isFlat(_ bytes: [UInt8]) -> Bool {
        for index in bytes.indices.dropLast() where bytes[index] == 0x02 && bytes[index + 1] == 0x0A { return false }
        guard let newline = bytes.firstIndex(of: 0x0A) else { return false }
        let line = bytes[..<newline]
        return line.contains(0x09) && !line.contains(0x01)
    }

    /// Records ending at `0x02 0x0A` (Flat: at `\n`, a `\r` before it dropped); a last record without its end.
    static func split(_ bytes: [UInt8], flat: Bool) -> [Record] {
        var records: [Record] = []
        var start = 0
        var index = 0
        while index < bytes.count {
            if flat && bytes[index] == 0x0A {
                let end = index > start && bytes[index - 1] == 0x0D ? index - 1 : index
                records.append(Record(offset: start, bytes: bytes[start..<end], terminated: true))
                start = index + 1
            } else if !flat && bytes[index] == 0x02 && index + 1 < bytes.count && bytes[index + 1] == 0x0A {
                records.append(Record(offset: start, bytes: bytes[start..<index], terminated: true))
                start = index + 2
                index += 1
            }
            index += 1
        }
        if start < bytes.count {
            records.append(Record(offset: start, bytes: bytes[start...], terminated: false))
        }
        return records
    }
}
