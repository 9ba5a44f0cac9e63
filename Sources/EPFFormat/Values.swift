import Foundation

/// Strict parsing of typed EPF values from raw field bytes. Every function returns nil for anything malformed,
/// so the caller decides whether that is a reject, a NULL or a warning.
@usableFromInline
package enum EPFValues {
    /// An integer: optional sign and 1-19 ASCII digits, nothing else (no spaces, brackets or control bytes).
    @inline(__always)
    @usableFromInline
    package static func integer(_ field: UnsafeRawBufferPointer) -> Int64? {
        guard field.count > 0, field.count <= 20, let base = field.baseAddress else { return nil }
        var index = 0
        var negative = false
        let first = base.load(as: UInt8.self)
        if first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
            negative = first == UInt8(ascii: "-")
            index = 1
            guard field.count > 1 else { return nil }
        }
        // The magnitude, unsigned: -9223372036854775808 (Int64.min) has no positive counterpart.
        var magnitude: UInt64 = 0
        while index < field.count {
            let digit = base.load(fromByteOffset: index, as: UInt8.self) &- 0x30
            guard digit < 10 else { return nil }
            let (multiplied, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
            let (added, overflow2) = multiplied.addingReportingOverflow(UInt64(digit))
            guard !overflow1, !overflow2 else { return nil }
            magnitude = added
            index += 1
        }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return Int64(bitPattern: 0 &- magnitude)
        }
        guard magnitude <= UInt64(Int64.max) else { return nil }
        return Int64(magnitude)
    }

    /// A decimal such as `0.99`, `-1.5`, `1234567.990`: digits with at most one point. Returns the text as given.
    @usableFromInline
    package static func decimal(_ field: UnsafeRawBufferPointer) -> Bool {
        guard field.count > 0, field.count <= 40 else { return false }
        var index = 0
        if field[0] == UInt8(ascii: "-") { index = 1 }
        var digits = 0
        var points = 0
        while index < field.count {
            let byte = field[index]
            if byte == UInt8(ascii: ".") {
                points += 1
                if points > 1 { return false }
            } else if byte >= 0x30 && byte <= 0x39 {
                digits += 1
            } else {
                return false
            }
            index += 1
        }
        return digits > 0
    }

    /// Length of the canonical DATETIME text, `YYYY-MM-DDTHH:MM:SSZ`.
    @usableFromInline
    package static let canonicalDatetimeLength = 20

    /// Normalises an EPF DATETIME to its one canonical form, ISO-8601 UTC `YYYY-MM-DDTHH:MM:SSZ` (the form of
    /// Apple's Lookup `releaseDate`), whatever shape the feed used; nil when the text is not a date.
    ///
    /// Accepted: `2012 09 25`, `2012-09-25`, `2012/9/5`, `2012 09 25 10 00 00`, `2012-09-25 10:00:00`,
    /// `2012-09-25T10:00:00Z`, `2012-09-25-10:00:00-Etc/GMT`, optional fractional seconds (dropped), a missing
    /// time (`T00:00:00Z`), a year and month (`2012-09` is the 1st), a bare year (`2012` is January 1st).
    /// Refused: 1-3 digit years (`12 9 25`: the century is a guess), years before 1000, impossible days
    /// (`2012 02 30`), other time zones, letters, repeated or leading separators.
    package static func datetime(_ field: UnsafeRawBufferPointer) -> String? {
        var bytes: (UInt64, UInt64, UInt64) = (0, 0, 0)
        return withUnsafeMutableBytes(of: &bytes) { buffer -> String? in
            guard let base = buffer.baseAddress, canonicalDatetime(field, into: base) else { return nil }
            return String(decoding: UnsafeRawBufferPointer(start: base, count: canonicalDatetimeLength),
                          as: UTF8.self)
        }
    }

    /// Writes the canonical form of a DATETIME (see `datetime(_:)`) as 20 bytes at `output`; false, with
    /// `output` unspecified, when the field is not a date. Allocates nothing.
    @usableFromInline
    package static func canonicalDatetime(_ field: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer)
        -> Bool {
        guard let base = field.baseAddress, field.count >= 4, field.count <= 64 else { return false }
        var end = field.count
        func byte(_ index: Int) -> UInt8 { base.load(fromByteOffset: index, as: UInt8.self) }
        if end > 8, memcmp(base + (end - 8), "-Etc/GMT", 8) == 0 {
            end -= 8
        } else if byte(end - 1) == UInt8(ascii: "Z") {
            end -= 1
        }
        // Runs of digits with one separator between them: year, month, day, hour, minute, second, fraction.
        var parts: (Int, Int, Int, Int, Int, Int) = (0, 1, 1, 0, 0, 0)
        var digitCounts: (Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0)
        var part = 0
        var value = 0
        var digits = 0
        var lastSeparator: UInt8 = 0
        var index = 0
        func store() -> Bool {
            switch part {
            case 0: parts.0 = value; digitCounts.0 = digits
            case 1: parts.1 = value; digitCounts.1 = digits
            case 2: parts.2 = value; digitCounts.2 = digits
            case 3: parts.3 = value; digitCounts.3 = digits
            case 4: parts.4 = value; digitCounts.4 = digits
            case 5: parts.5 = value; digitCounts.5 = digits
            case 6: return lastSeparator == UInt8(ascii: ".") // fractional seconds, dropped
            default: return false
            }
            return true
        }
        while index < end {
            let character = byte(index)
            if character &- 0x30 < 10 {
                digits += 1
                if digits <= 9 { value = value &* 10 &+ Int(character &- 0x30) }
            } else {
                guard digits > 0, Self.isDateSeparator(character), store() else { return false }
                part += 1
                value = 0
                digits = 0
                lastSeparator = character
            }
            index += 1
        }
        guard digits > 0, store() else { return false }
        let count = part + 1
        guard count <= 3 || count >= 5 else { return false }
        guard digitCounts.0 == 4, parts.0 >= 1000 else { return false }
        if count >= 2 { guard digitCounts.1 <= 2, (1...12).contains(parts.1) else { return false } }
        if count >= 3 {
            guard digitCounts.2 <= 2, parts.2 >= 1, parts.2 <= daysIn(month: parts.1, year: parts.0) else {
                return false
            }
        }
        if count >= 5 {
            guard digitCounts.3 <= 2, digitCounts.4 <= 2, digitCounts.5 <= 2, parts.3 <= 23, parts.4 <= 59,
                  parts.5 <= 60 else { return false }
        }
        let out = output.assumingMemoryBound(to: UInt8.self)
        func put(_ number: Int, at position: Int, width: Int) {
            var rest = number
            for offset in stride(from: width - 1, through: 0, by: -1) {
                out[position + offset] = UInt8(0x30 + rest % 10)
                rest /= 10
            }
        }
        put(parts.0, at: 0, width: 4)
        out[4] = UInt8(ascii: "-")
        put(parts.1, at: 5, width: 2)
        out[7] = UInt8(ascii: "-")
        put(parts.2, at: 8, width: 2)
        out[10] = UInt8(ascii: "T")
        put(parts.3, at: 11, width: 2)
        out[13] = UInt8(ascii: ":")
        put(parts.4, at: 14, width: 2)
        out[16] = UInt8(ascii: ":")
        put(parts.5, at: 17, width: 2)
        out[19] = UInt8(ascii: "Z")
        return true
    }

    @inline(__always)
    private static func isDateSeparator(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "T")
            || byte == UInt8(ascii: "/") || byte == UInt8(ascii: ".")
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Formats milliseconds since 1970 as ISO-8601 UTC, e.g. `2016-01-06T10:00:01Z`.
    package static func isoTimestamp(milliseconds: Int64) -> String {
        isoText(milliseconds: milliseconds, dateOnly: false)
    }

    /// `isoTimestamp`, or its first 10 characters (the date). Digits are written by hand for years 0 to 9999:
    /// `String(format:)` took a fifth of `epf changes --csv` (2.3 µs a line, boxing its arguments).
    static func isoText(milliseconds: Int64, dateOnly: Bool) -> String {
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let year = Int(parts.tm_year) + 1900
        guard (0...9999).contains(year) else {
            let text = String(format: "%04d-%02d-%02dT%02d:%02d:%02dZ", year, Int(parts.tm_mon) + 1,
                              Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
            return dateOnly ? String(text.prefix(10)) : text
        }
        return String(unsafeUninitializedCapacity: 20) { buffer in
            var end = 0
            func put(_ value: Int32, digits: Int, then separator: Unicode.Scalar) {
                var rest = value
                for position in stride(from: end + digits - 1, through: end, by: -1) {
                    buffer[position] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
                buffer[end + digits] = UInt8(ascii: separator)
                end += digits + 1
            }
            put(Int32(year), digits: 4, then: "-")
            put(parts.tm_mon + 1, digits: 2, then: "-")
            put(parts.tm_mday, digits: 2, then: "T")
            put(parts.tm_hour, digits: 2, then: ":")
            put(parts.tm_min, digits: 2, then: ":")
            put(parts.tm_sec, digits: 2, then: "Z")
            return dateOnly ? 10 : end
        }
    }
}
