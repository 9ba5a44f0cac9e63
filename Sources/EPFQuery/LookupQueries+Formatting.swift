import JSONText

/// Formatting helpers of Lookup objects that need no database: genre and device lists, dates, view URLs.
extension LookupQueries {
    /// Comma-separated integers (as `group_concat` writes them) in order; anything else is skipped.
    /// Genre ids from a list like "6016,6014p" ('p' marks a primary genre): primary genres first, each part in
    /// ascending order.
    static func primaryFirst(_ text: String) -> [Int64] {
        var primary: [Int64] = []
        var others: [Int64] = []
        for part in text.split(separator: ",") {
            if part.hasSuffix("p") {
                if let id = Int64(part.dropLast()) { primary.append(id) }
            } else if let id = Int64(part) {
                others.append(id)
            }
        }
        return primary.sorted() + others.sorted()
    }

    static func integers(_ text: String) -> [Int64] {
        var result: [Int64] = []
        var value: Int64 = 0
        var negative = false
        var digits = 0
        func flush() {
            if digits > 0 { result.append(negative ? -value : value) }
            value = 0
            negative = false
            digits = 0
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                value = value &* 10 &+ Int64(byte - UInt8(ascii: "0"))
                digits += 1
            case UInt8(ascii: "-"): negative = true
            default: flush()
            }
        }
        flush()
        return result
    }

    /// A feed date ("2012-09-25", "2012", "2012-09-25T10:00:00Z") in Apple's form "2012-09-25T00:00:00Z".
    static func appleDate(_ text: String) -> String {
        let utf8 = text.utf8
        guard utf8.count == 4 || utf8.count == 7 || utf8.count == 10 else { return text }
        var bytes: (UInt64, UInt64) = (0, 0)
        let count = utf8.count
        withUnsafeMutableBytes(of: &bytes) { $0.copyBytes(from: utf8) }
        return withUnsafeBytes(of: bytes) { bytes in
            func digits(_ range: Range<Int>) -> Bool {
                range.upperBound <= count && bytes[range].allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
            }
            if count == 4, digits(0..<4) { return text + "-01-01T00:00:00Z" }
            if count == 7, digits(0..<4), bytes[4] == UInt8(ascii: "-"), digits(5..<7) {
                return text + "-01T00:00:00Z"
            }
            if count == 10, digits(0..<4), digits(5..<7), digits(8..<10) { return text + "T00:00:00Z" }
            return text
        }
    }

    /// A view URL with the storefront country put in (`http://itunes.apple.com/app/x/id1` + "us" ->
    /// `http://itunes.apple.com/us/app/x/id1`); unchanged when country is nil or the URL has no host part.
    static func viewURL(_ url: String, country: String?) -> String {
        guard let country, let scheme = url.range(of: "://") else { return url }
        let afterScheme = url[scheme.upperBound...]
        guard let slash = afterScheme.firstIndex(of: "/") else { return url }
        let path = afterScheme[afterScheme.index(after: slash)...]
        let firstSegment = path.prefix { $0 != "/" && $0 != "?" }
        if CountryCodes.isAlpha2(String(firstSegment)) {
            return String(url[..<path.startIndex]) + country + String(path.dropFirst(firstSegment.count))
        }
        return String(url[..<path.startIndex]) + country + "/" + String(path)
    }
}

/// A price's feed text and currency code as found in a price row.
struct PriceKey: Hashable {
    var text: String
    var currency: String
}

/// A price ready for a Lookup object: `price`, `formattedPrice` and `currency`.
struct FormattedPrice {
    var number: String
    var formatted: String
    var currency: String

    /// `"price":N,"formattedPrice":"…","currency":"…"`: the members an app's object has, serialized once for
    /// re-targeting stored documents (see `LookupQueries.storedDocument(_:country:)`).
    var appMembers: [UInt8] {
        JSONValue.object([("price", .decimal(number)), ("formattedPrice", .string(formatted)),
                          ("currency", .string(currency))]).serialized().dropFirst().dropLast().map { $0 }
    }
}

/// Builds a JSON object, leaving out nil values.
struct Fields {
    var pairs: [(String, JSONValue)] = []

    init() { pairs.reserveCapacity(32) }

    mutating func add(_ key: String, _ value: JSONValue?) {
        if let value { pairs.append((key, value)) }
    }

    mutating func add(_ key: String, _ text: String?) {
        if let text { pairs.append((key, .string(text))) }
    }

    var json: JSONValue { .object(pairs) }
}
