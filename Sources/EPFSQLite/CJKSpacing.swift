import CSQLite

/// The spacing that lets FTS5's unicode61 tokenizer find CJK words: a space between consecutive CJK ideographs,
/// Kana and Hangul characters, so each is a token and a word is a phrase. `epf_cjk(text)` applies it in SQL.
package enum CJKSpacing {
    /// Whether a Unicode scalar value is a CJK ideograph, Kana, Bopomofo or Hangul character.
    @inline(__always)
    static func isCJK(_ scalar: UInt32) -> Bool {
        switch scalar {
        case 0x1100...0x11FF, 0x2E80...0x2FDF, 0x3040...0x30FF, 0x3100...0x31FF, 0x3400...0x4DBF,
             0x4E00...0x9FFF, 0xA960...0xA97F, 0xAC00...0xD7FF, 0xF900...0xFAFF, 0xFF66...0xFF9F,
             0x20000...0x3FFFF:
            return true
        default:
            return false
        }
    }

    /// The spaced bytes of UTF-8 text, or nil when the text holds no two adjacent CJK characters (the common case).
    package static func space(_ bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        // Every CJK scalar starts with a lead byte of 0xE1 or more (U+1100 is E1 84 80).
        guard bytes.contains(where: { $0 >= 0xE1 }) else { return nil }
        var output: [UInt8] = []
        var changed = false
        output.reserveCapacity(bytes.count + bytes.count / 2)
        var index = 0
        var previousCJK = false
        while index < bytes.count {
            let lead = bytes[index]
            var length = 1
            var scalar = UInt32(lead)
            if lead >= 0xF0, index + 3 < bytes.count {
                length = 4
                scalar = (UInt32(lead & 0x07) << 18) | (UInt32(bytes[index + 1] & 0x3F) << 12)
                    | (UInt32(bytes[index + 2] & 0x3F) << 6) | UInt32(bytes[index + 3] & 0x3F)
            } else if lead >= 0xE0, index + 2 < bytes.count {
                length = 3
                scalar = (UInt32(lead & 0x0F) << 12) | (UInt32(bytes[index + 1] & 0x3F) << 6)
                    | UInt32(bytes[index + 2] & 0x3F)
            } else if lead >= 0xC0, index + 1 < bytes.count {
                length = 2
                scalar = (UInt32(lead & 0x1F) << 6) | UInt32(bytes[index + 1] & 0x3F)
            }
            let cjk = isCJK(scalar)
            if cjk && previousCJK {
                output.append(0x20)
                changed = true
            }
            previousCJK = cjk
            let end = min(index + length, bytes.count)
            output.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[index..<end]))
            index += length
        }
        return changed ? output : nil
    }
}

/// The SQL function `epf_cjk(text)`: `CJKSpacing.space` for use inside `INSERT ... SELECT`.
private func cjkSpacingFunction(_ context: OpaquePointer?, _ count: Int32,
                                _ values: UnsafeMutablePointer<OpaquePointer?>?) {
    guard count == 1, let value = values?[0] else { return sqlite3_result_null(context) }
    guard sqlite3_value_type(value) != SQLITE_NULL, let text = sqlite3_value_text(value) else {
        return sqlite3_result_null(context)
    }
    let length = Int(sqlite3_value_bytes(value))
    guard let spaced = CJKSpacing.space(UnsafeRawBufferPointer(start: text, count: length)) else {
        return sqlite3_result_value(context, value)
    }
    spaced.withUnsafeBufferPointer { buffer in
        buffer.withMemoryRebound(to: CChar.self) { chars in
            sqlite3_result_text64(context, chars.baseAddress, UInt64(chars.count), sqliteTransient,
                                  UInt8(SQLITE_UTF8))
        }
    }
}

extension SQLiteConnection {
    /// Registers `epf_cjk(text)` on this connection (deterministic, innocuous). Calling it again replaces it.
    ///
    /// The corresponding C function is `sqlite3_create_function_v2(3)`.
    package func registerCJKSpacingFunction() throws {
        let rc = sqlite3_create_function_v2(handle, "epf_cjk", 1,
                                            SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
                                            nil, cjkSpacingFunction, nil, nil, nil)
        if rc != SQLITE_OK { throw error(rc, sql: "sqlite3_create_function_v2(epf_cjk)") }
    }
}
