import EPFSQLite

/// Texts copied out of SQLite (prices as stored, currency codes) into one byte buffer, reused from batch to batch,
/// so keeping a row's texts makes no String. A text is known by its range in the buffer, nil for NULL.
struct TextArena: Sendable {
    private var bytes: [UInt8] = []

    /// Copies a text in (nil stays nil, for NULL); its range.
    mutating func append(_ text: UnsafeRawBufferPointer?) -> Range<Int>? {
        guard let text else { return nil }
        let start = bytes.count
        text.withMemoryRebound(to: UInt8.self) { bytes.append(contentsOf: $0) }
        return start..<bytes.count
    }

    mutating func removeAll() { bytes.removeAll(keepingCapacity: true) }

    /// Whether a text of this arena is the same bytes as one of `other` (both NULL counts as the same).
    func same(_ range: Range<Int>?, as otherRange: Range<Int>?, in other: TextArena) -> Bool {
        switch (range, otherRange) {
        case (nil, nil): return true
        case (let range?, let otherRange?): return bytes[range].elementsEqual(other.bytes[otherRange])
        default: return false
        }
    }

    /// Calls `body` with the bytes of a text of this arena.
    func withText<Result>(_ range: Range<Int>, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        bytes.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[range])) }
    }

    /// Calls `body` with the bytes of a text of this arena, nil for NULL.
    func withOptionalText<Result>(_ range: Range<Int>?, _ body: (UnsafeRawBufferPointer?) -> Result) -> Result {
        guard let range else { return body(nil) }
        return withText(range, body)
    }

    /// Whether two texts are the same bytes (both NULL counts as the same).
    static func same(_ left: UnsafeRawBufferPointer?, _ right: UnsafeRawBufferPointer?) -> Bool {
        switch (left, right) {
        case (nil, nil): return true
        case (let left?, let right?): return left.elementsEqual(right)
        default: return false
        }
    }

    /// Binds a text (NULL for nil) to a parameter of `statement`.
    func bind(_ range: Range<Int>?, to statement: SQLiteStatement, at index: Int32) throws {
        guard let range else { return try statement.bindNull(at: index) }
        try bytes.withUnsafeBytes { buffer in
            try statement.bind(text: UnsafeRawBufferPointer(rebasing: buffer[range]), at: index)
        }
    }
}
