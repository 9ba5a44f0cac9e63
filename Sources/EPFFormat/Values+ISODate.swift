import Foundation

/// Calendar dates (`YYYY-MM-DD`, UTC) beside the instants EPF stores as milliseconds since 1970.
extension EPFValues {
    /// The UTC calendar date of an instant, `YYYY-MM-DD` (`1452074401007` -> `2016-01-06`).
    package static func isoDate(milliseconds: Int64) -> String {
        isoText(milliseconds: milliseconds, dateOnly: true)
    }

    /// A feed folder's date stamp (`20260106`, as in `itunes20260106`) as the ISO 8601 instant every `--json` writes
    /// (`2026-01-06T00:00:00Z`); a stamp that is not a real date is returned as it is.
    package static func isoTimestamp(feedDay stamp: String) -> String {
        let bytes = Array(stamp.utf8)
        guard bytes.count == 8 else { return stamp }
        let dashed = String(decoding: bytes[0..<4] + [UInt8(ascii: "-")] + bytes[4..<6] + [UInt8(ascii: "-")]
                            + bytes[6..<8], as: UTF8.self)
        guard let milliseconds = milliseconds(isoDate: dashed) else { return stamp }
        return isoTimestamp(milliseconds: milliseconds)
    }

    /// Midnight UTC of a date written exactly `YYYY-MM-DD` (years 1970 ... 9999), in milliseconds since 1970;
    /// nil for anything else, including dates that do not exist (`2026-02-30`).
    package static func milliseconds(isoDate text: String) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard byte >= 0x30 && byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              (1970...9999).contains(year), (1...12).contains(month), (1...31).contains(day) else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        let seconds = timegm(&parts)
        let milliseconds = Int64(seconds) * 1000
        // timegm normalises 2026-02-30 to 2026-03-02: a date that does not exist reads back differently.
        guard isoDate(milliseconds: milliseconds) == text else { return nil }
        return milliseconds
    }
}
