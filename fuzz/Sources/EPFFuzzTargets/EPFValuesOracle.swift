import EPFFormat
import Foundation

/// Every field of a reading through the value parsers, checked against naive versions of them.
enum EPFValuesOracle {
    static func verify(_ reading: TableReading) throws(FuzzFailure) {
        for declared in reading.header?.dbTypes ?? [] { _ = EPFColumnType(declared: declared) }
        for record in reading.records.prefix(64) {
            for field in record.fields.prefix(64) {
                let failure = field.withUnsafeBytes { raw -> FuzzFailure? in
                    do throws(FuzzFailure) { try checkField(raw, field) } catch { return error }
                    return nil
                }
                if let failure { throw failure }
            }
        }
    }

    static func checkField(_ raw: UnsafeRawBufferPointer, _ bytes: [UInt8]) throws(FuzzFailure) {
        let integer = EPFValues.integer(raw)
        try check(integer == naiveInteger(bytes),
                  "integer(\(preview(bytes))) = \(String(describing: integer)), naive "
                      + "\(String(describing: naiveInteger(bytes)))")
        try check(EPFValues.decimal(raw) == naiveDecimal(bytes),
                  "decimal(\(preview(bytes))) = \(EPFValues.decimal(raw))")
        if let date = EPFValues.datetime(raw) {
            let again = Array(date.utf8).withUnsafeBytes { EPFValues.datetime($0) }
            try check(date.utf8.count == EPFValues.canonicalDatetimeLength && again == date,
                      "datetime(\(preview(bytes))) = \(date), which reads back as \(String(describing: again))")
            let day = String(date.prefix(10))
            if let milliseconds = EPFValues.milliseconds(isoDate: day) {
                try check(EPFValues.isoDate(milliseconds: milliseconds) == day, "isoDate round trip of \(day)")
            }
        }
    }

    /// At most 20 bytes: an optional sign and ASCII digits whose value fits, as Swift's own parser reads them.
    static func naiveInteger(_ bytes: [UInt8]) -> Int64? {
        let signed = bytes.first == UInt8(ascii: "-") || bytes.first == UInt8(ascii: "+")
        let digits = signed ? bytes.dropFirst() : bytes[...]
        guard bytes.count <= 20, !digits.isEmpty, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int64(String(decoding: bytes, as: UTF8.self))
    }

    /// An optional minus, digits with at most one point, at least one digit, at most 40 bytes.
    static func naiveDecimal(_ bytes: [UInt8]) -> Bool {
        let body = bytes.first == UInt8(ascii: "-") ? bytes.dropFirst() : bytes[...]
        return bytes.count <= 40 && body.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || $0 == UInt8(ascii: ".") }
            && body.filter { $0 == UInt8(ascii: ".") }.count <= 1 && body.contains { $0 >= 0x30 && $0 <= 0x39 }
    }
}
