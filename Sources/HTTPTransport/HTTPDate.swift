import Glibc

/// HTTP dates in IMF-fixdate form (`Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110 section 5.6.7).
///
/// Formatting and parsing use `gmtime_r`/`timegm` and fixed tables: no `DateFormatter`, no locale.
package enum HTTPDate {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Formats seconds since 1970 (UTC) as an IMF-fixdate.
    package static func format(_ seconds: Int64) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let year = Int(parts.tm_year) + 1900
        let yearText = String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        return "\(days[Int(parts.tm_wday) % 7]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon) % 12]) "
            + "\(yearText) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }

    /// Parses an IMF-fixdate; nil for anything else (obsolete forms are ignored, as RFC 9110 allows).
    package static func parse(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        // "Sun, 06 Nov 1994 08:49:37 GMT" is exactly 29 bytes.
        guard bytes.count == 29, bytes[3] == UInt8(ascii: ","), bytes[4] == 0x20, bytes[7] == 0x20,
              bytes[11] == 0x20, bytes[16] == 0x20, bytes[19] == UInt8(ascii: ":"),
              bytes[22] == UInt8(ascii: ":"), bytes[25] == 0x20,
              bytes[26...28].elementsEqual("GMT".utf8) else { return nil }
        func number(_ range: Range<Int>) -> Int32? {
            var value: Int32 = 0
            for index in range {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) else { return nil }
                value = value * 10 + Int32(bytes[index] - UInt8(ascii: "0"))
            }
            return value
        }
        let monthName = String(decoding: bytes[8..<11], as: UTF8.self)
        guard let month = months.firstIndex(of: monthName), let day = number(5..<7), let year = number(12..<16),
              let hour = number(17..<19), let minute = number(20..<22), let second = number(23..<25),
              (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        var parts = tm()
        parts.tm_year = year - 1900
        parts.tm_mon = Int32(month)
        parts.tm_mday = day
        parts.tm_hour = hour
        parts.tm_min = minute
        parts.tm_sec = second
        return Int64(timegm(&parts))
    }
}

/// The `Date: ...\r\n` header line, rendered at most once per second. One per worker thread.
final class DateHeaderCache {
    private var second: Int64 = -1
    private(set) var line: [UInt8] = []
    /// The last formatted IMF-fixdate (for access logs).
    private(set) var text = ""

    /// Refreshes the cached line when the wall-clock second changed.
    func refresh() {
        let now = Int64(time(nil))
        guard now != second else { return }
        second = now
        text = HTTPDate.format(now)
        line = Array("Date: \(text)\r\n".utf8)
    }
}
