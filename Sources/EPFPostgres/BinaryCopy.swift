/// How a column travels in PostgreSQL's binary COPY format, and the type it is created with.
package enum PostgresColumnKind: UInt8, Sendable {
    /// `bigint`: 8 bytes, network order.
    case bigint
    /// `boolean`: one byte, 0 or 1 (from EPF's 0/1 integers).
    case boolean
    /// `numeric`: EPF's DECIMAL text converted to base-10000 digits, exact.
    case numeric
    /// `timestamptz`: microseconds since 2000-01-01 UTC, from epf's canonical `YYYY-MM-DDTHH:MM:SSZ` text.
    case timestamptz
    /// `text`: the UTF-8 bytes as they are.
    case text

    /// The SQL type name.
    package var sqlType: String {
        switch self {
        case .bigint: return "bigint"
        case .boolean: return "boolean"
        case .numeric: return "numeric"
        case .timestamptz: return "timestamptz"
        case .text: return "text"
        }
    }
}

/// Encodes rows in PostgreSQL's binary COPY format (the file layout of `COPY ... (FORMAT binary)`: a signature,
/// then per row a field count and per field a length and the value in the type's binary form) into a buffer that
/// `flush(to:)` hands to libpq. Values arrive in column order; a row can be discarded until the next begins.
package final class BinaryCopyWriter {
    private let kinds: UnsafeMutablePointer<PostgresColumnKind>
    private let columnCount: Int
    private var buffer: UnsafeMutableRawPointer
    private var capacity: Int
    private var count = 0
    private var rowStart = 0
    /// Bytes buffered before `flush` should be called.
    package let flushThreshold = 1 << 18

    /// A writer for rows of these column kinds; the buffer starts with the format's header.
    package init(kinds: [PostgresColumnKind]) {
        columnCount = kinds.count
        self.kinds = UnsafeMutablePointer<PostgresColumnKind>.allocate(capacity: max(1, kinds.count))
        self.kinds.initialize(from: kinds, count: kinds.count)
        capacity = 1 << 19
        buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
        writeHeader()
    }

    deinit {
        kinds.deallocate()
        buffer.deallocate()
    }

    /// Bytes waiting to be sent.
    package var pendingBytes: Int { count }

    private func writeHeader() {
        let signature: [UInt8] = [0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00]
        reserve(signature.count + 8)
        for byte in signature { put8(byte) }
        put32(0) // flags
        put32(0) // header extension length
    }

    /// Starts a new COPY stream: the header again (after `finishStream` and a new `COPY` command).
    package func startStream() {
        count = 0
        rowStart = 0
        writeHeader()
    }

    /// Appends the trailer (a field count of -1) that ends the stream.
    package func finishStream() {
        reserve(2)
        put16(0xffff)
    }

    @inline(__always)
    private func reserve(_ bytes: Int) {
        if count &+ bytes > capacity { grow(count + bytes) }
    }

    private func grow(_ needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let larger = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 8)
        larger.copyMemory(from: buffer, byteCount: count)
        buffer.deallocate()
        buffer = larger
        capacity = newCapacity
    }

    @inline(__always) private func put8(_ value: UInt8) {
        buffer.storeBytes(of: value, toByteOffset: count, as: UInt8.self)
        count &+= 1
    }

    @inline(__always) private func put16(_ value: UInt16) {
        buffer.storeBytes(of: value.bigEndian, toByteOffset: count, as: UInt16.self)
        count &+= 2
    }

    @inline(__always) private func put32(_ value: UInt32) {
        buffer.storeBytes(of: value.bigEndian, toByteOffset: count, as: UInt32.self)
        count &+= 4
    }

    @inline(__always) private func put64(_ value: UInt64) {
        buffer.storeBytes(of: value.bigEndian, toByteOffset: count, as: UInt64.self)
        count &+= 8
    }

    /// Starts a row of all the columns.
    @inline(__always)
    package func beginRow() {
        rowStart = count
        reserve(2)
        put16(UInt16(columnCount))
    }

    /// Drops the row begun last (a rejected record).
    package func discardRow() { count = rowStart }

    /// A NULL value.
    @inline(__always)
    package func writeNull() {
        reserve(4)
        put32(UInt32.max)
    }

    /// An integer for column `column` (`bigint`, or `boolean` where 0 is false).
    @inline(__always)
    package func writeInteger(_ value: Int64, column: Int) {
        if kinds[column] == .boolean {
            reserve(5)
            put32(1)
            put8(value != 0 ? 1 : 0)
        } else {
            reserve(12)
            put32(8)
            put64(UInt64(bitPattern: value))
        }
    }

    /// A value given as text for column `column`: converted for `numeric` (decimal text) and `timestamptz`
    /// (canonical `YYYY-MM-DDTHH:MM:SSZ`), copied for `text`. Returns false when the text is not of that form.
    @inline(__always)
    package func writeText(_ bytes: UnsafeRawPointer, count length: Int, column: Int) -> Bool {
        switch kinds[column] {
        case .numeric:
            return writeNumeric(UnsafeRawBufferPointer(start: bytes, count: length))
        case .timestamptz:
            guard let micros = Self.microseconds(UnsafeRawBufferPointer(start: bytes, count: length)) else {
                return false
            }
            reserve(12)
            put32(8)
            put64(UInt64(bitPattern: micros))
            return true
        case .bigint, .boolean, .text:
            reserve(4 + length)
            put32(UInt32(length))
            (buffer + count).copyMemory(from: bytes, byteCount: length)
            count &+= length
            return true
        }
    }

    /// Writes a decimal such as `-12.340` as `numeric`: base-10000 digit groups around the decimal point, the
    /// weight of the first group, the sign and the display scale (the digits after the point, kept exactly).
    /// Allocates nothing: EPF decimals are at most 40 bytes (`EPFValues.decimal`), so at most 11 groups.
    private func writeNumeric(_ text: UnsafeRawBufferPointer) -> Bool {
        guard text.count <= 40 else { return false }
        var negative = false
        var index = 0
        if index < text.count && text[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        var integerStart = index
        var point = -1
        while index < text.count {
            let byte = text[index]
            if byte == UInt8(ascii: ".") {
                guard point < 0 else { return false }
                point = index
            } else if byte &- 0x30 >= 10 {
                return false
            }
            index += 1
        }
        let integerEnd = point < 0 ? text.count : point
        let fractionStart = point < 0 ? text.count : point + 1
        let scale = text.count - fractionStart
        guard integerEnd > integerStart || scale > 0 else { return false }
        while integerStart < integerEnd && text[integerStart] == UInt8(ascii: "0") { integerStart += 1 }
        let integerCount = integerEnd - integerStart
        // Pad to whole groups of four: the integer part on the left, the fraction on the right.
        let integerPad = (4 - integerCount % 4) % 4
        let total = integerPad + integerCount + scale
        let groupCount = (total + 3) / 4
        func digit(_ position: Int) -> UInt16 {
            if position < integerPad { return 0 }
            let inInteger = position - integerPad
            if inInteger < integerCount { return UInt16(text[integerStart + inInteger] &- 0x30) }
            let inFraction = inInteger - integerCount
            if inFraction < scale { return UInt16(text[fractionStart + inFraction] &- 0x30) }
            return 0
        }
        return withUnsafeTemporaryAllocation(of: UInt16.self, capacity: 16) { groups -> Bool in
            for group in 0..<groupCount {
                let base = group * 4
                groups[group] = digit(base) * 1000 + digit(base + 1) * 100 + digit(base + 2) * 10 + digit(base + 3)
            }
            var first = 0
            var last = groupCount
            var weight = (integerPad + integerCount) / 4 - 1
            while first < last && groups[first] == 0 {
                first += 1
                weight -= 1
            }
            while last > first && groups[last - 1] == 0 { last -= 1 }
            if first == last {
                weight = 0
                negative = false
            }
            let used = last - first
            reserve(4 + 8 + used * 2)
            put32(UInt32(8 + used * 2))
            put16(UInt16(used))
            put16(UInt16(bitPattern: Int16(weight)))
            put16(negative ? 0x4000 : 0)
            put16(UInt16(scale))
            for group in first..<last { put16(groups[group]) }
            return true
        }
    }

    /// Microseconds from 2000-01-01T00:00:00Z to a canonical `YYYY-MM-DDTHH:MM:SSZ`, nil when not that form.
    package static func microseconds(_ text: UnsafeRawBufferPointer) -> Int64? {
        guard text.count == 20 else { return nil }
        func number(_ start: Int, _ width: Int) -> Int64? {
            var value: Int64 = 0
            for offset in start..<(start + width) {
                let digit = text[offset] &- 0x30
                guard digit < 10 else { return nil }
                value = value * 10 + Int64(digit)
            }
            return value
        }
        guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2), let hour = number(11, 2),
              let minute = number(14, 2), let second = number(17, 2) else { return nil }
        // Days from the civil date (proleptic Gregorian), as in Howard Hinnant's days_from_civil.
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let daysSince1970 = era * 146_097 + dayOfEra - 719_468
        let daysSince2000 = daysSince1970 - 10_957
        return ((daysSince2000 * 86_400) + hour * 3600 + minute * 60 + second) * 1_000_000
    }

    /// Sends the buffered bytes to the connection's COPY and empties the buffer (keeping a begun row's bytes
    /// out of it is the caller's business: flush between rows).
    package func flush(to connection: PostgresConnection) throws {
        try connection.putCopyData(UnsafeRawBufferPointer(start: buffer, count: count))
        count = 0
        rowStart = 0
    }
}
