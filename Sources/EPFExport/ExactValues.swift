import Foundation

/// Conversions of stored values to Parquet's numbers, exact or refused (nil): a value that does not convert
/// exactly makes the export write its column as text instead (see `TableExporter`).
enum ExactValues {
    /// The largest unscaled DECIMAL(18, 3) value.
    static let decimalLimit: Int64 = 999_999_999_999_999_999

    /// A plain decimal text (`0.99`, `-1.5`, `1225000`, `.5`) as thousandths, parsed digit by digit (never through
    /// a Double); nil when it is not one, has a non-zero fourth fraction digit, or exceeds 18 digits.
    static func thousandths(_ text: UnsafeRawBufferPointer) -> Int64? {
        var index = 0
        let count = text.count
        var negative = false
        if count > 0 && (text[0] == UInt8(ascii: "-") || text[0] == UInt8(ascii: "+")) {
            negative = text[0] == UInt8(ascii: "-")
            index = 1
        }
        var value: Int64 = 0
        var digits = 0
        while index < count, text[index] &- 0x30 < 10 {
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            guard !overflow else { return nil }
            value = times + Int64(text[index] &- 0x30)
            guard value <= decimalLimit / 1000 else { return nil }
            digits += 1
            index += 1
        }
        value *= 1000
        var scale: Int64 = 100
        if index < count && text[index] == UInt8(ascii: ".") {
            index += 1
            while index < count, text[index] &- 0x30 < 10 {
                let digit = Int64(text[index] &- 0x30)
                if scale == 0 {
                    guard digit == 0 else { return nil }
                } else {
                    value += digit * scale
                    scale /= 10
                }
                digits += 1
                index += 1
            }
        }
        guard index == count, digits > 0, value <= decimalLimit else { return nil }
        return negative ? -value : value
    }

    /// A whole number of units as thousandths; nil beyond DECIMAL(18, 3).
    static func thousandths(_ integer: Int64) -> Int64? {
        let (value, overflow) = integer.multipliedReportingOverflow(by: 1000)
        guard !overflow, value.magnitude <= decimalLimit.magnitude else { return nil }
        return value
    }

    /// A double that holds a decimal of at most 3 fraction digits (as SQLite's REAL holds `0.99`: the nearest
    /// double, exact to 15 significant digits) as thousandths; nil when it holds more digits than that or is out
    /// of range.
    static func thousandths(_ double: Double) -> Int64? {
        // Below 9e12 the thousandths are below 2^53, so they and their division by 1000 are exact doubles.
        guard double.isFinite, abs(double) < 9e12 else { return nil }
        let value = Int64((double * 1000).rounded())
        // The decimal of 3 fraction digits nearest the double must read back as the same double. Dividing the
        // exact integer by 1000 is correctly rounded, as parsing its text would be: no String per price.
        guard Double(value) / 1000 == double else { return nil }
        return value
    }

    /// Canonical EPF date-time text (`YYYY-MM-DDTHH:MM:SSZ`, as the import stores DATETIME; also a bare
    /// `YYYY-MM-DD`) as milliseconds since 1970 UTC; nil for anything else.
    static func milliseconds(_ text: UnsafeRawBufferPointer) -> Int64? {
        guard text.count == 20 || text.count == 10 else { return nil }
        func number(_ start: Int, _ length: Int) -> Int? {
            var value = 0
            for index in start..<(start + length) {
                let digit = text[index] &- 0x30
                guard digit < 10 else { return nil }
                value = value * 10 + Int(digit)
            }
            return value
        }
        guard text[4] == UInt8(ascii: "-"), text[7] == UInt8(ascii: "-"), let year = number(0, 4),
              let month = number(5, 2), let day = number(8, 2), (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        var seconds = 0
        if text.count == 20 {
            guard text[10] == UInt8(ascii: "T"), text[13] == UInt8(ascii: ":"), text[16] == UInt8(ascii: ":"),
                  text[19] == UInt8(ascii: "Z"), let hour = number(11, 2), let minute = number(14, 2),
                  let second = number(17, 2), hour < 24, minute < 60, second <= 60 else { return nil }
            seconds = hour * 3600 + minute * 60 + second
        }
        return (Int64(daysFromCivil(year: year, month: month, day: day)) * 86400 + Int64(seconds)) * 1000
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let shifted = month <= 2 ? year - 1 : year
        let era = (shifted >= 0 ? shifted : shifted - 399) / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
