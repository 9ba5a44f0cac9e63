/// A JSON document with ordered object keys, written straight to UTF-8 bytes.
///
/// Shared by the CLI (`--json`) and the HTTP API. Objects keep their keys in insertion order so
/// output is stable and reads like Apple's Lookup API. Numbers that must stay exact (prices) use
/// `.decimal`, which holds the decimal text itself instead of a `Double`.
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    /// A finite double; non-finite values are written as `null`.
    case double(Double)
    /// An exact decimal number as text, e.g. `"0.99"`; text that is not a JSON number is written as `null`.
    case decimal(String)
    case string(String)
    case array([JSONValue])
    /// Key/value pairs in output order. Duplicate keys are written as given.
    case object([(String, JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.int(a), .int(b)): return a == b
        case let (.double(a), .double(b)): return a == b
        case let (.decimal(a), .decimal(b)): return a == b
        case let (.string(a), .string(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.object(a), .object(b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    /// The value for a key of an object (the first one), nil for other values or a missing key.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let pairs) = self else { return nil }
        return pairs.first { $0.0 == key }?.1
    }

    /// The text of a `.string`, nil otherwise.
    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The number of an `.int`, nil otherwise.
    public var intValue: Int64? {
        if case .int(let number) = self { return number }
        return nil
    }

    /// The elements of an `.array`, nil otherwise.
    public var arrayValue: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// Compact UTF-8 JSON (RFC 8259). Strings escape `"`, `\`, control characters and U+2028/U+2029.
    public func serialized() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(1024)
        write(to: &bytes)
        return bytes
    }

    /// Appends the compact UTF-8 JSON of this value to `bytes`.
    public func write(to bytes: inout [UInt8]) {
        switch self {
        case .null: bytes.append(contentsOf: JSONValue.nullBytes)
        case .bool(let value): bytes.append(contentsOf: value ? JSONValue.trueBytes : JSONValue.falseBytes)
        case .int(let number): JSONValue.appendInteger(number, to: &bytes)
        case .double(let number):
            if number.isFinite {
                if number == number.rounded(), abs(number) < 1e15 {
                    JSONValue.appendInteger(Int64(number), to: &bytes)
                } else {
                    bytes.append(contentsOf: "\(number)".utf8)
                }
            } else {
                bytes.append(contentsOf: JSONValue.nullBytes)
            }
        case .decimal(let text):
            if JSONValue.isJSONNumber(text) {
                bytes.append(contentsOf: text.utf8)
            } else {
                bytes.append(contentsOf: JSONValue.nullBytes)
            }
        case .string(let text): JSONValue.appendString(text, to: &bytes)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                element.write(to: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let pairs):
            bytes.append(UInt8(ascii: "{"))
            for (index, pair) in pairs.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                JSONValue.appendString(pair.0, to: &bytes)
                bytes.append(UInt8(ascii: ":"))
                pair.1.write(to: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// The serialized JSON as a `String`.
    public var jsonText: String { String(decoding: serialized(), as: UTF8.self) }

    private static let nullBytes: [UInt8] = Array("null".utf8)
    private static let trueBytes: [UInt8] = Array("true".utf8)
    private static let falseBytes: [UInt8] = Array("false".utf8)
    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    private static func appendInteger(_ number: Int64, to bytes: inout [UInt8]) {
        if number == 0 {
            bytes.append(UInt8(ascii: "0"))
            return
        }
        var magnitude = number.magnitude
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                      UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            while magnitude > 0 {
                buffer[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            }
            if number < 0 { bytes.append(UInt8(ascii: "-")) }
            for index in stride(from: count - 1, through: 0, by: -1) { bytes.append(buffer[index]) }
        }
    }

    /// Bytes that may need escaping in a JSON string: `"`, `\\`, controls, and 0xE2 (the lead byte of
    /// U+2028 and U+2029).
    private static let mayEscape: [Bool] = (0..<256).map { byte in
        byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0xE2
    }

    private static func appendString(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            mayEscape.withUnsafeBufferPointer { mayEscape in
                var start = 0
                var index = 0
                let count = utf8.count
                while index < count {
                    let byte = utf8[index]
                    guard mayEscape[Int(byte)] else {
                        index += 1
                        continue
                    }
                    if byte == 0xE2 {
                        // U+2028 and U+2029 are valid JSON but break JavaScript string literals.
                        guard index + 2 < count, utf8[index + 1] == 0x80,
                              utf8[index + 2] == 0xA8 || utf8[index + 2] == 0xA9 else {
                            index += 1
                            continue
                        }
                    }
                    if start < index { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index])) }
                    bytes.append(UInt8(ascii: "\\"))
                    switch byte {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
                    case 0x0A: bytes.append(UInt8(ascii: "n"))
                    case 0x0D: bytes.append(UInt8(ascii: "r"))
                    case 0x09: bytes.append(UInt8(ascii: "t"))
                    case 0xE2:
                        bytes.append(contentsOf: utf8[index + 2] == 0xA8 ? JSONValue.lineSeparator
                                                                        : JSONValue.paragraphSeparator)
                        index += 2
                    default:
                        bytes.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                                  hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0xF)]])
                    }
                    index += 1
                    start = index
                }
                if start < count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<count])) }
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static let lineSeparator: [UInt8] = Array("u2028".utf8)
    private static let paragraphSeparator: [UInt8] = Array("u2029".utf8)

    /// Whether text is a JSON number: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    static func isJSONNumber(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        var index = 0
        func digits() -> Int {
            let start = index
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
            return index - start
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count else { return false }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else if digits() == 0 {
            return false
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            if digits() == 0 { return false }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            if digits() == 0 { return false }
        }
        return index == bytes.count
    }
}
