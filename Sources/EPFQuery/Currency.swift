/// How prices are shown in one ISO 4217 currency: one fixed rule per currency, never converted.
package struct CurrencyFormat: Sendable, Equatable {
    /// ISO 4217 code, e.g. "USD".
    package let code: String
    /// Text put before the amount ("$", "CHF "), or empty.
    package let prefix: String
    /// Text put after the amount (" €", " kr"), or empty.
    package let suffix: String
    /// Digits shown after the decimal separator (2 for USD, 0 for JPY and KRW).
    package let minorDigits: Int
    /// "." or ",".
    package let decimalSeparator: String
    /// Thousands separator: ",", ".", " " or "'".
    package let groupingSeparator: String

    // code|symbol|minor digits|p(refix) or s(uffix)|decimal separator|grouping separator
    private static let table = """
    USD|$|2|p|.|,;CAD|$|2|p|.|,;AUD|$|2|p|.|,;NZD|$|2|p|.|,;HKD|HK$|2|p|.|,;SGD|S$|2|p|.|,;\
    TWD|NT$|0|p|.|,;MXN|$|2|p|.|,;BRL|R$ |2|p|,|.;EUR| €|2|s|,|.;GBP|£|2|p|.|,;JPY|¥|0|p|.|,;\
    CNY|¥|2|p|.|,;KRW|₩|0|p|.|,;INR|₹|2|p|.|,;RUB| ₽|2|s|,| ;CHF|CHF |2|p|.|';SEK| kr|2|s|,| ;\
    NOK| kr|2|s|,| ;DKK| kr.|2|s|,|.;PLN| zł|2|s|,| ;CZK| Kč|2|s|,| ;HUF| Ft|0|s|,| ;RON| lei|2|s|,|.;\
    BGN| лв.|2|s|,| ;HRK| kn|2|s|,|.;TRY|₺|2|p|,|.;ILS|₪|2|p|.|,;ZAR|R|2|p|.|,;SAR|SAR |2|p|.|,;\
    AED|AED |2|p|.|,;QAR|QAR |2|p|.|,;EGP|EGP |2|p|.|,;KWD|KWD |3|p|.|,;IDR|Rp |0|p|,|.;THB|฿|2|p|.|,;\
    MYR|RM |2|p|.|,;PHP|₱|2|p|.|,;VND| ₫|0|s|,|.;PKR|Rs |0|p|.|,;NGN|₦|2|p|.|,;KZT| ₸|0|s|,| ;\
    TZS|TSh |0|p|.|,;UAH| ₴|2|s|,| ;CLP|$|0|p|,|.;COP|$|0|p|,|.;PEN|S/ |2|p|.|,;ARS|$|2|p|,|.;\
    ISK| kr|0|s|,|.;BHD|BHD |3|p|.|,;OMR|OMR |3|p|.|,;JOD|JOD |3|p|.|,;LKR|Rs |2|p|.|,;BDT|৳|2|p|.|,
    """

    private static let known: [String: CurrencyFormat] = {
        var map: [String: CurrencyFormat] = [:]
        for entry in table.split(separator: ";") {
            let parts = entry.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 6, let minor = Int(parts[2]) else { continue }
            let symbolFirst = parts[3] == "p"
            map[parts[0]] = CurrencyFormat(code: parts[0], prefix: symbolFirst ? parts[1] : "",
                                           suffix: symbolFirst ? "" : parts[1], minorDigits: minor,
                                           decimalSeparator: parts[4], groupingSeparator: parts[5])
        }
        return map
    }()

    /// The rule for a currency code (any case); unknown codes get "CODE 1,234.56" with 2 digits.
    package static func forCode(_ code: String) -> CurrencyFormat {
        let upper = code.uppercased()
        if let format = known[upper] { return format }
        return CurrencyFormat(code: upper, prefix: upper.isEmpty ? "" : upper + " ", suffix: "", minorDigits: 2,
                              decimalSeparator: ".", groupingSeparator: ",")
    }

    /// Whether the code has its own rule (not the generic fallback).
    package static func isKnown(_ code: String) -> Bool { known[code.uppercased()] != nil }

    /// Formats an exact decimal string from the feed ("0.990", "120.000"): "Free" for zero, else symbol and amount.
    ///
    /// Rounds half up to the currency's minor digits using the decimal text itself (no `Double`).
    /// Returns nil when the text is not a decimal number.
    package func format(_ decimalText: String) -> String? {
        guard let amount = DecimalText(decimalText)?.rounded(to: minorDigits) else { return nil }
        if amount.isZero { return "Free" }
        var integer = ""
        let digits = Array(amount.integerDigits)
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { integer += groupingSeparator }
            integer.append(digit)
        }
        var number = integer
        if minorDigits > 0 { number += decimalSeparator + amount.fractionDigits }
        return (amount.negative ? "-" : "") + prefix + number + suffix
    }

    /// The amount as a plain JSON number text with the currency's minor digits ("0.99", "120", "0.00").
    package func jsonNumber(_ decimalText: String) -> String? {
        guard let amount = DecimalText(decimalText)?.rounded(to: minorDigits) else { return nil }
        let sign = amount.negative && !amount.isZero ? "-" : ""
        return sign + amount.integerDigits + (minorDigits > 0 ? "." + amount.fractionDigits : "")
    }
}

/// An exact decimal read from text: sign, integer digits and fraction digits.
struct DecimalText {
    var negative: Bool
    var integerDigits: String
    var fractionDigits: String

    /// Parses "-12.340", "0.99", ".5", "7"; nil for anything else.
    init?(_ text: String) {
        var body = Substring(text.trimmingASCIIWhitespace())
        negative = false
        if body.first == "-" {
            negative = true
            body = body.dropFirst()
        } else if body.first == "+" {
            body = body.dropFirst()
        }
        let parts = body.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let integer = parts.first.map(String.init) ?? ""
        let fraction = parts.count > 1 ? String(parts[1]) : ""
        guard !(integer.isEmpty && fraction.isEmpty),
              integer.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              fraction.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        let trimmed = integer.drop { $0 == "0" }
        integerDigits = trimmed.isEmpty ? "0" : String(trimmed)
        fractionDigits = fraction
    }

    var isZero: Bool { integerDigits.allSatisfy { $0 == "0" } && fractionDigits.allSatisfy { $0 == "0" } }

    /// Rounds half up (away from zero) to `digits` fraction digits, padding with zeros.
    func rounded(to digits: Int) -> DecimalText {
        var copy = self
        if fractionDigits.count <= digits {
            copy.fractionDigits = fractionDigits + String(repeating: "0", count: digits - fractionDigits.count)
            return copy
        }
        let kept = Array(fractionDigits.prefix(digits))
        let roundUp = fractionDigits.utf8[fractionDigits.utf8.index(fractionDigits.utf8.startIndex,
                                                                     offsetBy: digits)] >= UInt8(ascii: "5")
        var all = Array(integerDigits) + kept
        if roundUp {
            var index = all.count - 1
            var carry = true
            while carry && index >= 0 {
                if all[index] == "9" {
                    all[index] = "0"
                    index -= 1
                } else {
                    all[index] = Character(UnicodeScalar(UInt8(all[index].asciiValue ?? 48) + 1))
                    carry = false
                }
            }
            if carry { all.insert("1", at: 0) }
        }
        copy.integerDigits = String(all.prefix(all.count - digits))
        copy.fractionDigits = String(all.suffix(digits))
        return copy
    }
}

extension String {
    func trimmingASCIIWhitespace() -> Substring {
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" || first == "\n" || first == "\r" {
            slice = slice.dropFirst()
        }
        while let last = slice.last, last == " " || last == "\t" || last == "\n" || last == "\r" {
            slice = slice.dropLast()
        }
        return slice
    }
}
