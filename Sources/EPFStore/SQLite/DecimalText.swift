import Foundation

/// Plain decimal texts (`1.99`, `-0.990`, `12`), compared as numbers without SQLite.
enum DecimalText {
    /// The most significant digits `certainlyDiffer` compares: far fewer than a Double's 15, so two texts it calls
    /// different are different doubles under any rounding (SQLite's `CAST(... AS REAL)` included).
    static let maximumDigits = 12

    /// True when both texts are plain decimals (an optional `-`, digits, an optional `.` and digits; at most
    /// `maximumDigits` significant) whose values differ. False when they are equal or either is anything else
    /// (NULL, blank, exponent, spaces, too long): the caller then compares the SQLite way.
    static func certainlyDiffer(_ left: UnsafeRawBufferPointer?, _ right: UnsafeRawBufferPointer?) -> Bool {
        guard let left, let right else { return false }
        return equal(left, right) == false
    }

    /// Whether two plain decimals (see `certainlyDiffer`) have the same value; nil when either is not one.
    static func equal(_ left: UnsafeRawBufferPointer, _ right: UnsafeRawBufferPointer) -> Bool? {
        guard let a = Canonical(left), let b = Canonical(right) else { return nil }
        if a.isZero && b.isZero { return true }
        return a.negative == b.negative && left[a.integer].elementsEqual(right[b.integer])
            && left[a.fraction].elementsEqual(right[b.fraction])
    }

    /// Whether `equal` can compare this text.
    static func isPlain(_ text: UnsafeRawBufferPointer) -> Bool { Canonical(text) != nil }

    /// A plain decimal's value (`strtod`, correctly rounded, as SQLite reads a number of so few digits).
    static func double(_ text: UnsafeRawBufferPointer) -> Double {
        var characters = [CChar](repeating: 0, count: text.count + 1)
        for (index, byte) in text.enumerated() { characters[index] = CChar(bitPattern: byte) }
        return strtod(characters, nil)
    }

    /// A decimal's digits without leading zeros before the point or trailing zeros after it.
    private struct Canonical {
        var negative = false
        var integer: Range<Int>
        var fraction: Range<Int>
        var isZero: Bool { integer.isEmpty && fraction.isEmpty }

        init?(_ text: UnsafeRawBufferPointer) {
            let zero = UInt8(ascii: "0"), nine = UInt8(ascii: "9")
            var index = 0
            if index < text.count, text[index] == UInt8(ascii: "-") {
                negative = true
                index += 1
            }
            let integerStart = index
            while index < text.count, text[index] >= zero, text[index] <= nine { index += 1 }
            var integer = integerStart..<index
            var fraction = index..<index
            if index < text.count, text[index] == UInt8(ascii: ".") {
                index += 1
                let fractionStart = index
                while index < text.count, text[index] >= zero, text[index] <= nine { index += 1 }
                fraction = fractionStart..<index
            }
            guard index == text.count, !(integer.isEmpty && fraction.isEmpty) else { return nil }
            while let first = integer.first, text[first] == zero { integer = integer.dropFirst() }
            while let last = fraction.last, text[last] == zero { fraction = fraction.dropLast() }
            guard integer.count + fraction.count <= DecimalText.maximumDigits else { return nil }
            self.integer = integer
            self.fraction = fraction
        }
    }
}
