import CSQLite

/// Decimals (EPF's `DECIMAL(9,3)` prices) stored as SQLite REAL values and written back as plain decimal text.
///
/// A decimal of at most `exactDigits` significant digits becomes the nearest double and comes back from it
/// unchanged: the shortest text that reads as the same double is the decimal itself, without trailing zeros
/// (`0.990` -> 0.99 -> `0.99`, `1225000.000` -> `1225000`). So a price compares, sorts and sums as a number in
/// SQL, and epf still prints it with no binary noise and no exponent.
package enum DecimalNumber {
    /// The most significant digits a decimal may have to be stored as a REAL and written back exactly
    /// (`DBL_DIG`). Every `DECIMAL(9,3)` value has at most 9, and the overflowing ones Apple writes
    /// (`1234567.990`) 10.
    package static let exactDigits = 15

    /// The shortest plain decimal reading as `value`: digits, an optional `-` and point, no exponent, no
    /// trailing zeros after the point and no point without a fraction (`0.99`, `1225000`, `-1.5`, `0`). Only a
    /// value below 1e-21 or from 1e22 keeps an exponent (`1e+300`).
    package static func text(_ value: Double) -> String {
        guard value.isFinite else { return value.isNaN ? "NaN" : value < 0 ? "-Infinity" : "Infinity" }
        if value == 0 { return "0" }
        // Swift's description is the shortest text that reads back as the same double; it uses an exponent
        // outside 2^-4...2^53 or so, which is rewritten here as plain digits.
        let shortest = value.description
        guard let exponentAt = shortest.firstIndex(where: { $0 == "e" || $0 == "E" }) else {
            return shortest.hasSuffix(".0") ? String(shortest.dropLast(2)) : shortest
        }
        let mantissa = shortest[..<exponentAt]
        let exponent = Int(shortest[shortest.index(after: exponentAt)...]) ?? 0
        // No decimal of a price table has such an exponent; a computed one keeps its short spelling.
        guard abs(exponent) <= 21 else { return shortest }
        let negative = mantissa.hasPrefix("-")
        let unsigned = negative ? mantissa.dropFirst() : mantissa[...]
        let point = unsigned.firstIndex(of: ".")
        let integerDigits = point.map { unsigned.distance(from: unsigned.startIndex, to: $0) } ?? unsigned.count
        var digits = String(unsigned.filter { $0 != "." })
        while digits.count > 1, digits.hasSuffix("0") { digits.removeLast() }
        let pointAt = integerDigits + exponent
        var result: String
        if pointAt <= 0 {
            result = "0." + String(repeating: "0", count: -pointAt) + digits
        } else if pointAt >= digits.count {
            result = digits + String(repeating: "0", count: pointAt - digits.count)
        } else {
            let cut = digits.index(digits.startIndex, offsetBy: pointAt)
            result = digits[..<cut] + "." + digits[cut...]
        }
        return negative ? "-" + result : result
    }

    /// `text(value)`'s UTF-8 bytes handed to `body` (valid only during the call). A value of at most three
    /// decimals (every price) is written without allocating: the history writes one per change recorded.
    package static func withText<T>(_ value: Double, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        let scaled = (value * 1000).rounded()
        // The thousandths read back as the value: that decimal of at most 15 digits is the only one of so few
        // digits that does, so it is the shortest text too.
        guard scaled.magnitude < 1e15, scaled / 1000 == value else {
            var text = text(value)
            return try text.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
        }
        return try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { buffer in
            var thousandths = UInt64(scaled.magnitude)
            var end = buffer.count
            func put(_ byte: UInt8) {
                end -= 1
                buffer[end] = byte
            }
            var fraction = thousandths % 1000
            thousandths /= 1000
            var fractionDigits = 3
            while fractionDigits > 0, fraction % 10 == 0 {
                fraction /= 10
                fractionDigits -= 1
            }
            if fractionDigits > 0 {
                for _ in 0..<fractionDigits {
                    put(UInt8(ascii: "0") + UInt8(fraction % 10))
                    fraction /= 10
                }
                put(UInt8(ascii: "."))
            }
            repeat {
                put(UInt8(ascii: "0") + UInt8(thousandths % 10))
                thousandths /= 10
            } while thousandths > 0
            if scaled < 0 { put(UInt8(ascii: "-")) }
            return try body(UnsafeRawBufferPointer(UnsafeMutableBufferPointer(rebasing: buffer[end...])))
        }
    }
}

extension SQLiteStatement {
    /// A decimal column of the current row as text, nil when NULL: a REAL or INTEGER as its plain decimal
    /// (`DecimalNumber.text`: `0.99`, `1225000`), a text as stored (a database from before prices were numbers,
    /// or a table epf does not know).
    package func decimalText(at index: Int32) -> String? {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_NULL: return nil
        case SQLITE_FLOAT, SQLITE_INTEGER: return DecimalNumber.text(sqlite3_column_double(handle, index))
        default: return text(at: index)
        }
    }

    /// Hands `body` a decimal column of the current row as `decimalText` writes it, as bytes (nil when NULL),
    /// without making a String for a stored text. The bytes are valid only during the call.
    package func withDecimalText<T>(_ index: Int32, _ body: (UnsafeRawBufferPointer?) throws -> T) rethrows -> T {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_FLOAT, SQLITE_INTEGER:
            return try DecimalNumber.withText(sqlite3_column_double(handle, index)) { try body($0) }
        default:
            return try body(columnText(index))
        }
    }
}

extension PreUpdateValue {
    /// Hands `body` the value as a decimal text (`SQLiteStatement.withDecimalText`), nil when NULL; the bytes are
    /// valid only during the call.
    package func withDecimalText<T>(_ body: (UnsafeRawBufferPointer?) throws -> T) rethrows -> T {
        if let number = realValue { return try DecimalNumber.withText(number) { try body($0) } }
        return try body(textBytes)
    }
}
