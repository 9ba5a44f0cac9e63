import Foundation

/// Strict parsing of typed EPF values from raw field bytes. Every function returns nil for anything malformed,
/// so the caller decides whether that is a reject, a NULL or a warning.
public enum EPFValues {
    /// An integer: optional sign and 1-19 ASCII digits, nothing else (no spaces, brackets or control bytes).
    @inline(__always)
    public static func integer(_ field: UnsafeRawBufferPointer) -> Int64? {
        guard field.count > 0, field.count <= 20, let base = field.baseAddress else { return nil }
        var index = 0
        var negative = false
        let first = base.load(as: UInt8.self)
        if first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
            negative = first == UInt8(ascii: "-")
            index = 1
            guard field.count > 1 else { return nil }
        }
        var value: Int64 = 0
        while index < field.count {
            let digit = base.load(fromByteOffset: index, as: UInt8.self) &- 0x30
            guard digit < 10 else { return nil }
            let (multiplied, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (added, overflow2) = multiplied.addingReportingOverflow(Int64(digit))
            guard !overflow1, !overflow2 else { return nil }
            value = added
            index += 1
        }
        return negative ? -value : value
    }

    /// A decimal such as `0.99`, `-1.5`, `1234567.990`: digits with at most one point. Returns the text as given.
    public static func decimal(_ field: UnsafeRawBufferPointer) -> Bool {
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

    /// Normalises an EPF DATETIME to ISO-8601 text.
    ///
    /// Accepted: `2012 09 25` (`2012-09-25`), `2012 09 25 10 00 00` and `2012-09-25 10:00:00`
    /// (`2012-09-25T10:00:00Z`), `2012-09-25-10:00:00-Etc/GMT` (`2012-09-25T10:00:00Z`), a bare year
    /// `2012` (`2012`). Broken values (1-2 digit years, month 13, letters) return nil.
    public static func datetime(_ field: UnsafeRawBufferPointer) -> String? {
        guard field.count >= 4, field.count <= 64 else { return nil }
        var text = String(decoding: field, as: UTF8.self)
        if text.hasSuffix("-Etc/GMT") { text.removeLast(8) }
        if text.hasSuffix("Z") { text.removeLast() }
        // Split into runs of digits; every separator must be one of " -:T/.".
        var numbers: [Substring] = []
        var current = text.startIndex
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            if character.isASCII && character.isNumber {
                index = text.index(after: index)
                continue
            }
            guard " -:T/.".contains(character) else { return nil }
            if current < index { numbers.append(text[current..<index]) }
            index = text.index(after: index)
            current = index
        }
        if current < text.endIndex { numbers.append(text[current..<text.endIndex]) }
        guard let yearText = numbers.first, yearText.count == 4, let year = Int(yearText), year >= 1000 else {
            return nil
        }
        if numbers.count == 1 { return String(yearText) }
        guard numbers.count == 3 || numbers.count >= 6,
              let month = Int(numbers[1]), let day = Int(numbers[2]),
              numbers[1].count <= 2, numbers[2].count <= 2,
              (1...12).contains(month), (1...31).contains(day) else { return nil }
        let date = "\(yearText)-\(twoDigits(month))-\(twoDigits(day))"
        if numbers.count == 3 { return date }
        guard let hour = Int(numbers[3]), let minute = Int(numbers[4]), let second = Int(numbers[5]),
              (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second) else { return nil }
        if hour == 0 && minute == 0 && second == 0 && numbers.count == 6 && !text.contains(":") { return date }
        return "\(date)T\(twoDigits(hour)):\(twoDigits(minute)):\(twoDigits(second))Z"
    }

    private static func twoDigits(_ value: Int) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }

    /// Formats milliseconds since 1970 as ISO-8601 UTC, e.g. `2016-01-06T10:00:01Z`.
    public static func isoTimestamp(milliseconds: Int64) -> String {
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
                      Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
    }
}

/// Fast UTF-8 validation of raw bytes (rejects overlongs, surrogates and code points above U+10FFFF).
public enum UTF8Validator {
    /// True when every byte sequence is well-formed UTF-8.
    @inline(__always)
    public static func isValid(_ start: UnsafeRawPointer, count: Int) -> Bool {
        var index = 0
        while index < count {
            // ASCII runs, 16 bytes at a time, wherever they start.
            while index &+ 16 <= count {
                let low = start.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                let high = start.loadUnaligned(fromByteOffset: index &+ 8, as: UInt64.self)
                if (low | high) & 0x8080_8080_8080_8080 != 0 { break }
                index &+= 16
            }
            guard index < count else { return true }
            let byte = start.load(fromByteOffset: index, as: UInt8.self)
            if byte < 0x80 {
                index &+= 1
                continue
            }
            let left = count &- index
            if byte >= 0xc2 && byte <= 0xdf {
                guard left >= 2, start.load(fromByteOffset: index &+ 1, as: UInt8.self) & 0xc0 == 0x80 else {
                    return false
                }
                index &+= 2
            } else if byte >= 0xe0 && byte <= 0xef {
                guard left >= 3 else { return false }
                let tail = UInt16(littleEndian: start.loadUnaligned(fromByteOffset: index &+ 1, as: UInt16.self))
                guard tail & 0xc0c0 == 0x8080 else { return false }
                let second = UInt8(truncatingIfNeeded: tail)
                // No overlongs (E0 80..9F) and no surrogates (ED A0..BF).
                if byte == 0xe0 && second < 0xa0 { return false }
                if byte == 0xed && second > 0x9f { return false }
                index &+= 3
            } else if byte >= 0xf0 && byte <= 0xf4 {
                guard left >= 4 else { return false }
                let tail = UInt32(littleEndian: start.loadUnaligned(fromByteOffset: index, as: UInt32.self))
                guard tail & 0xc0c0_c000 == 0x8080_8000 else { return false }
                let second = UInt8(truncatingIfNeeded: tail >> 8)
                // No overlongs (F0 80..8F) and nothing above U+10FFFF (F4 90..BF).
                if byte == 0xf0 && second < 0x90 { return false }
                if byte == 0xf4 && second > 0x8f { return false }
                index &+= 4
            } else {
                return false
            }
        }
        return true
    }
}
