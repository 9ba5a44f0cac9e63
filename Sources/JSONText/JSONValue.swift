/// A JSON document with ordered object keys, written straight to UTF-8 bytes.
///
/// Shared by the CLI (`--json`) and the HTTP API. Objects keep their keys in insertion order so
/// output is stable and reads like Apple's Lookup API. Numbers that must stay exact (prices) use
/// `.decimal`, which holds the decimal text itself instead of a `Double`.
package enum JSONValue: Equatable, Sendable {
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
    /// A value already serialized as compact JSON (a stored lookup document), written as is. It has no keys or
    /// elements to read: `subscript` and the accessors return nil.
    case serialized([UInt8])

    package static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
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
        case let (.serialized(a), .serialized(b)): return a == b
        default: return false
        }
    }

    /// The value for a key of an object (the first one), nil for other values or a missing key.
    package subscript(key: String) -> JSONValue? {
        guard case .object(let pairs) = self else { return nil }
        return pairs.first { $0.0 == key }?.1
    }

    /// The text of a `.string`, nil otherwise.
    package var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The number of an `.int`, nil otherwise.
    package var intValue: Int64? {
        if case .int(let number) = self { return number }
        return nil
    }

    /// The elements of an `.array`, nil otherwise.
    package var arrayValue: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// Compact UTF-8 JSON (RFC 8259). Strings escape `"`, `\\`, control characters and U+2028/U+2029.
    package func serialized() -> [UInt8] {
        var writer = JSONWriter(capacity: 1024)
        write(to: &writer)
        return writer.bytes()
    }

    /// Appends the compact UTF-8 JSON of this value to `bytes`.
    package func write(to bytes: inout [UInt8]) {
        var writer = JSONWriter(capacity: 1024)
        write(to: &writer)
        writer.withBytes { bytes.append(contentsOf: $0) }
    }

    /// Appends the compact JSON of this value to `writer`.
    package func write(to writer: inout JSONWriter) {
        switch self {
        case .null: writer.append(JSONValue.nullBytes)
        case .bool(let value): writer.append(value ? JSONValue.trueBytes : JSONValue.falseBytes)
        case .int(let number): writer.appendInteger(number)
        case .double(let number):
            if number.isFinite {
                if number == number.rounded(), abs(number) < 1e15 {
                    writer.appendInteger(Int64(number))
                } else {
                    writer.append(Array("\(number)".utf8))
                }
            } else {
                writer.append(JSONValue.nullBytes)
            }
        case .decimal(let text):
            if JSONValue.isJSONNumber(text) {
                writer.appendUTF8(of: text)
            } else {
                writer.append(JSONValue.nullBytes)
            }
        case .string(let text): writer.appendString(text)
        case .serialized(let bytes): writer.append(bytes)
        case .array(let elements):
            writer.append(UInt8(ascii: "["))
            var first = true
            for element in elements {
                if !first { writer.append(UInt8(ascii: ",")) }
                first = false
                element.write(to: &writer)
            }
            writer.append(UInt8(ascii: "]"))
        case .object(let pairs):
            writer.append(UInt8(ascii: "{"))
            var first = true
            for pair in pairs {
                if !first { writer.append(UInt8(ascii: ",")) }
                first = false
                writer.appendString(pair.0)
                writer.append(UInt8(ascii: ":"))
                pair.1.write(to: &writer)
            }
            writer.append(UInt8(ascii: "}"))
        }
    }

    /// Indented JSON for people (two spaces a level, one member or element a line), as a `String`: what the
    /// CLI prints for `--json`. Same values and escapes as `serialized()`.
    package var prettyText: String {
        var writer = JSONWriter(capacity: 1024)
        writePretty(to: &writer, level: 0)
        return writer.withBytes { String(decoding: $0, as: UTF8.self) }
    }

    private func writePretty(to writer: inout JSONWriter, level: Int) {
        func newline(_ level: Int) {
            writer.append(UInt8(ascii: "\n"))
            for _ in 0..<(level * 2) { writer.append(UInt8(ascii: " ")) }
        }
        switch self {
        case .array(let elements) where !elements.isEmpty:
            writer.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { writer.append(UInt8(ascii: ",")) }
                newline(level + 1)
                element.writePretty(to: &writer, level: level + 1)
            }
            newline(level)
            writer.append(UInt8(ascii: "]"))
        case .object(let pairs) where !pairs.isEmpty:
            writer.append(UInt8(ascii: "{"))
            for (index, pair) in pairs.enumerated() {
                if index > 0 { writer.append(UInt8(ascii: ",")) }
                newline(level + 1)
                writer.appendString(pair.0)
                writer.append(UInt8(ascii: ":"))
                writer.append(UInt8(ascii: " "))
                pair.1.writePretty(to: &writer, level: level + 1)
            }
            newline(level)
            writer.append(UInt8(ascii: "}"))
        default:
            write(to: &writer)
        }
    }

    /// The serialized JSON as a `String`.
    package var jsonText: String { String(decoding: serialized(), as: UTF8.self) }

    static let nullBytes: [UInt8] = Array("null".utf8)
    static let trueBytes: [UInt8] = Array("true".utf8)
    static let falseBytes: [UInt8] = Array("false".utf8)

    /// Whether text is a JSON number: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    package static func isJSONNumber(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { isJSONNumber($0) }
    }

    private static func isJSONNumber(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
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

/// A growing byte buffer that JSON is written into, freed by its one owner (`deinit`): the one JSON writer of
/// the project (the CLI's `--json`, the HTTP API's bodies and errors, the stored lookup documents).
///
/// Appending to an `Array` checks uniqueness and capacity through several calls per byte; this keeps a
/// raw pointer and a count, and grows by doubling.
package struct JSONWriter: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private var count = 0

    /// An empty writer with room for `capacity` bytes before it grows.
    package init(capacity: Int) {
        self.capacity = max(capacity, 64)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    /// A copy of the bytes written.
    package func bytes() -> [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }

    /// Forgets the bytes written, keeping the room they took.
    package mutating func removeAll() { count = 0 }

    /// Calls `body` with the bytes written.
    package func withBytes<T>(_ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        try body(UnsafeBufferPointer(start: base, count: count))
    }

    @inline(__always)
    private mutating func reserve(_ extra: Int) {
        if count + extra > capacity { grow(to: count + extra) }
    }

    private mutating func grow(to needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.initialize(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    /// Appends one byte as is.
    @inline(__always)
    package mutating func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    /// Appends bytes as they are (already JSON, or part of a literal).
    package mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count)
        (base + count).update(from: source, count: bytes.count)
        count += bytes.count
    }

    /// Appends bytes as they are (already JSON, or part of a literal).
    package mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { append($0) }
    }

    /// Appends the UTF-8 of `text` unescaped (already JSON, e.g. a checked number).
    package mutating func appendUTF8(of text: String) {
        var text = text
        text.withUTF8 { append($0) }
    }

    /// Appends an integer in decimal.
    package mutating func appendInteger(_ number: Int64) {
        reserve(20)
        if number == 0 {
            append(UInt8(ascii: "0"))
            return
        }
        if number < 0 { append(UInt8(ascii: "-")) }
        var magnitude = number.magnitude
        var digits = 0
        var scratch = magnitude
        while scratch > 0 {
            digits += 1
            scratch /= 10
        }
        var index = count + digits - 1
        while magnitude > 0 {
            base[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
            magnitude /= 10
            index -= 1
        }
        count += digits
    }

    /// A JSON string literal: escapes `"`, `\\`, control characters and U+2028/U+2029.
    package mutating func appendString(_ text: String) {
        var text = text
        text.withUTF8 { appendString(utf8: $0) }
    }

    /// A JSON string literal of UTF-8 bytes, escaped as `appendString(_:)` escapes (bytes that are not UTF-8 go
    /// out as they came).
    package mutating func appendString(utf8: UnsafeBufferPointer<UInt8>) {
        append(UInt8(ascii: "\""))
        guard let source = utf8.baseAddress else {
            append(UInt8(ascii: "\""))
            return
        }
        let count = utf8.count
        var start = 0
        var index = 0
        while index < count {
            // Eight bytes at a time while they are plain ASCII with no quote, backslash or control.
            while index + 8 <= count,
                  !JSONWriter.mayNeedEscape(UnsafeRawPointer(source + index).loadUnaligned(as: UInt64.self)) {
                index += 8
            }
            guard index < count else { break }
            let byte = source[index]
            guard byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0xE2 else {
                index += 1
                continue
            }
            if byte == 0xE2 {
                // U+2028 and U+2029 are valid JSON but break JavaScript string literals.
                guard index + 2 < count, source[index + 1] == 0x80,
                      source[index + 2] == 0xA8 || source[index + 2] == 0xA9 else {
                    index += 1
                    continue
                }
            }
            append(UnsafeBufferPointer(start: source + start, count: index - start))
            append(UInt8(ascii: "\\"))
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): append(byte)
            case 0x0A: append(UInt8(ascii: "n"))
            case 0x0D: append(UInt8(ascii: "r"))
            case 0x09: append(UInt8(ascii: "t"))
            case 0xE2:
                append(source[index + 2] == 0xA8 ? JSONWriter.lineSeparator : JSONWriter.paragraphSeparator)
                index += 2
            default:
                append(JSONWriter.controlEscapes[Int(byte)])
            }
            index += 1
            start = index
        }
        append(UnsafeBufferPointer(start: source + start, count: count - start))
        append(UInt8(ascii: "\""))
    }

    /// Whether any of eight bytes is a control, `"`, `\\` or not ASCII (then they are looked at one by one).
    @inline(__always)
    private static func mayNeedEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        func hasZeroByte(_ value: UInt64) -> Bool { (value &- ones) & ~value & high != 0 }
        return word & high != 0 || (word &- ones &* 0x20) & ~word & high != 0
            || hasZeroByte(word ^ (ones &* 0x22)) || hasZeroByte(word ^ (ones &* 0x5C))
    }

    private static let lineSeparator: [UInt8] = Array("u2028".utf8)
    private static let paragraphSeparator: [UInt8] = Array("u2029".utf8)
    /// `u00XX` for each control character (after the backslash).
    private static let controlEscapes: [[UInt8]] = (0..<32).map { byte in
        let hex = Array("0123456789abcdef".utf8)
        return Array("u00".utf8) + [hex[byte >> 4], hex[byte & 0xF]]
    }
}
