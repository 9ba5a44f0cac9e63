import CSQLite

/// The full-text index `epf_search` over titles and artist/seller names, used by `epf search`.
///
/// An FTS5 table with columns `kind` and `id` (unindexed), `title` and `names`, tokenized by
/// `unicode61 remove_diacritics 2` so case and accents do not matter. Runs of CJK, Kana and Hangul
/// characters would be one token each for unicode61, so `searchText(_:)` puts a space between such
/// characters on both sides (index and query): any CJK word is then found as a phrase.
///
/// Prefix indexes for 2 and 3 characters (`prefix = '2 3'`) let a short prefix ("ka*") read one doclist
/// instead of merging the doclists of every token it begins: 20-30 ms less per query on a million rows,
/// for about 16% more build time and 50% more index. A 1-character index would double the build time.
/// Indexes built before have none and answer the same, only slower.
public enum SearchIndex {
    /// The entity kinds stored in the index's `kind` column, per source table.
    public static let kinds = ["software", "ebook", "album", "song", "video", "artist"]

    /// Rebuilds `epf_search` from whichever of application, collection, song, video and artist exist.
    ///
    /// Builds `epf_search_new` with one `INSERT ... SELECT` per table, then replaces `epf_search` with it.
    /// The caller holds the write transaction, so readers see the old index or the new one, never half.
    /// Throws `SQLiteError` (with the SQL) when a statement fails; the caller's rollback undoes everything.
    public static func rebuild(_ connection: SQLiteConnection) throws {
        try connection.registerCJKSpacingFunction()
        try connection.execute("""
            DROP TABLE IF EXISTS epf_search_new;
            CREATE VIRTUAL TABLE epf_search_new USING fts5(kind UNINDEXED, id UNINDEXED, title, names,
                tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3');
            """)
        let hasMediaType = try connection.tableExists("media_type")
        for table in ["application", "collection", "song", "video", "artist"] {
            guard try connection.tableExists(table) else { continue }
            // Tables loaded from old or odd headers may lack a column: it reads as NULL, and a table without
            // its id column is left out, instead of failing the import.
            let present = Set(try connection.query("SELECT name FROM pragma_table_info(?1)", [.text(table)])
                .compactMap { row -> String? in
                    if case .text(let name) = row.first { return name }
                    return nil
                })
            if let sql = insertStatement(table: table, present: present, hasMediaType: hasMediaType) {
                try connection.execute(sql)
            }
        }
        try connection.execute("""
            INSERT INTO epf_search_new(epf_search_new) VALUES ('optimize');
            DROP TABLE IF EXISTS epf_search;
            ALTER TABLE epf_search_new RENAME TO epf_search;
            """)
    }

    /// The `INSERT ... SELECT` that indexes one table, built from the columns it has; nil without its id column.
    static func insertStatement(table: String, present: Set<String>, hasMediaType: Bool) -> String? {
        func column(_ name: String) -> String { present.contains(name) ? "t.\"\(name)\"" : "NULL" }
        let prefix = "INSERT INTO epf_search_new(kind, id, title, names) "
        switch table {
        case "application":
            guard present.contains("application_id") else { return nil }
            let artist = column("artist_name")
            let seller = column("seller_name")
            return prefix + """
                SELECT 'software', t.application_id, epf_cjk(\(column("title"))),
                    epf_cjk(CASE WHEN \(seller) IS NULL OR \(seller) = \(artist) THEN \(artist)
                                 WHEN \(artist) IS NULL THEN \(seller)
                                 ELSE \(artist) || ' ' || \(seller) END)
                FROM application t
                """
        case "collection":
            guard present.contains("collection_id") else { return nil }
            let kind = hasMediaType && present.contains("media_type_id")
                ? "CASE WHEN (SELECT m.name FROM media_type m WHERE m.media_type_id = t.media_type_id) "
                    + "LIKE '%book%' THEN 'ebook' ELSE 'album' END"
                : "'album'"
            return prefix + "SELECT \(kind), t.collection_id, epf_cjk(\(column("name"))), "
                + "epf_cjk(\(column("artist_display_name"))) FROM collection t"
        case "song", "video":
            guard present.contains("\(table)_id") else { return nil }
            return prefix + "SELECT '\(table)', t.\(table)_id, epf_cjk(\(column("name"))), "
                + "epf_cjk(\(column("artist_display_name"))) FROM \(table) t"
        case "artist":
            guard present.contains("artist_id") else { return nil }
            return prefix + "SELECT 'artist', t.artist_id, epf_cjk(\(column("name"))), NULL FROM artist t"
        default:
            return nil
        }
    }

    /// Puts a space between consecutive CJK ideographs, Kana and Hangul characters; other text is unchanged.
    ///
    /// "東京タワー" becomes "東 京 タ ワ ー", so each character is a token and the word is a phrase.
    public static func searchText(_ text: String) -> String {
        var text = text
        return text.withUTF8 { utf8 in
            guard let spaced = spaceCJK(UnsafeRawBufferPointer(utf8)) else {
                return String(decoding: utf8, as: UTF8.self)
            }
            return String(decoding: spaced, as: UTF8.self)
        }
    }

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

    /// The spaced bytes, or nil when the text holds no two adjacent CJK characters (the common case).
    static func spaceCJK(_ bytes: UnsafeRawBufferPointer) -> [UInt8]? {
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

/// The SQL function `epf_cjk(text)`: `SearchIndex.searchText` for use inside `INSERT ... SELECT`.
private func cjkSpacingFunction(_ context: OpaquePointer?, _ count: Int32,
                                _ values: UnsafeMutablePointer<OpaquePointer?>?) {
    guard count == 1, let value = values?[0] else { return sqlite3_result_null(context) }
    guard sqlite3_value_type(value) != SQLITE_NULL, let text = sqlite3_value_text(value) else {
        return sqlite3_result_null(context)
    }
    let length = Int(sqlite3_value_bytes(value))
    guard let spaced = SearchIndex.spaceCJK(UnsafeRawBufferPointer(start: text, count: length)) else {
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
    public func registerCJKSpacingFunction() throws {
        let rc = sqlite3_create_function_v2(handle, "epf_cjk", 1,
                                            SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
                                            nil, cjkSpacingFunction, nil, nil, nil)
        if rc != SQLITE_OK { throw error(rc, sql: "sqlite3_create_function_v2(epf_cjk)") }
    }

    /// Splits off the first SQL statement of `sql`: its text (empty when `sql` holds only whitespace or
    /// comments) and the text after it.
    ///
    /// Lets callers refuse input holding more than one statement. The corresponding C function is
    /// `sqlite3_prepare_v2(3)` with its tail pointer. Throws `SQLiteError` with the SQL on a syntax error.
    public func splitFirstStatement(_ sql: String) throws -> (first: String, rest: String) {
        var utf8 = Array(sql.utf8)
        utf8.append(0)
        return try utf8.withUnsafeBufferPointer { buffer -> (String, String) in
            guard let base = buffer.baseAddress else { return ("", "") }
            return try base.withMemoryRebound(to: CChar.self, capacity: buffer.count) { chars in
                var statement: OpaquePointer?
                var tail: UnsafePointer<CChar>?
                let rc = sqlite3_prepare_v2(handle, chars, Int32(buffer.count - 1), &statement, &tail)
                defer { sqlite3_finalize(statement) }
                guard rc == SQLITE_OK else { throw error(rc, sql: sql) }
                let consumed = tail.map { $0 - chars } ?? buffer.count - 1
                let rest = String(decoding: buffer[consumed..<(buffer.count - 1)], as: UTF8.self)
                guard statement != nil else { return ("", rest) }
                return (String(decoding: buffer[0..<consumed], as: UTF8.self), rest)
            }
        }
    }
}

// MARK: Ranking

/// What `epf_rank` computes once per query (kept with `xSetAuxdata`).
private struct RankQueryData {
    /// Mean tokens per row over the whole table.
    var averageLength: Double
    /// Tokens in the exact-match text, -1 when there is none.
    var exactTokens: Int32
}

/// The SQL function `epf_rank(epf_search, exactColumn, exactText, weight...)` for `ORDER BY`: lower is better.
///
/// FTS5's `bm25` with every phrase's IDF taken as 1 (k1 = 1.2, b = 0.75, one weight per column), minus 1000
/// when column `exactColumn`, ASCII-lower-cased, equals `exactText` (so exact titles come first). FTS5's
/// `bm25` counts the rows holding each phrase before the first row is ranked, which reads the whole doclist
/// of a common word (tens of milliseconds for a word in every row); with one phrase IDF does not change the
/// order at all. The exact comparison reads the column's text only when its token count equals the text's.
private func rankFunction(_ api: UnsafePointer<Fts5ExtensionApi>?, _ fts: OpaquePointer?, _ context: OpaquePointer?,
                          _ count: Int32, _ values: UnsafeMutablePointer<OpaquePointer?>?) {
    guard let api = api?.pointee, let fts, let values, count >= 2,
          let getAux = api.xGetAuxdata, let setAux = api.xSetAuxdata, let instCount = api.xInstCount,
          let inst = api.xInst, let columnSize = api.xColumnSize, let phraseCount = api.xPhraseCount else {
        return sqlite3_result_error(context, "epf_rank: wrong use", -1)
    }
    let exactColumn = sqlite3_value_int(values[0])
    let exactText = sqlite3_value_text(values[1])
    let exactLength = Int(sqlite3_value_bytes(values[1]))
    var data: RankQueryData
    if let saved = getAux(fts, 0) {
        data = saved.assumingMemoryBound(to: RankQueryData.self).pointee
    } else {
        var rows: Int64 = 0
        var tokens: Int64 = 0
        guard api.xRowCount?(fts, &rows) == SQLITE_OK, api.xColumnTotalSize?(fts, -1, &tokens) == SQLITE_OK else {
            return sqlite3_result_error(context, "epf_rank: cannot read the index totals", -1)
        }
        data = RankQueryData(averageLength: Double(max(tokens, 1)) / Double(max(rows, 1)), exactTokens: -1)
        if let exactText, exactLength > 0, let tokenize = api.xTokenize {
            var tokenCount: Int32 = 0
            let rc = exactText.withMemoryRebound(to: CChar.self, capacity: exactLength) { text in
                tokenize(fts, text, Int32(exactLength), &tokenCount) { counter, flags, _, _, _, _ in
                    if flags & FTS5_TOKEN_COLOCATED == 0 {
                        counter?.assumingMemoryBound(to: Int32.self).pointee += 1
                    }
                    return SQLITE_OK
                }
            }
            if rc == SQLITE_OK { data.exactTokens = tokenCount }
        }
        let saved = UnsafeMutablePointer<RankQueryData>.allocate(capacity: 1)
        saved.initialize(to: data)
        guard setAux(fts, saved, { $0?.assumingMemoryBound(to: RankQueryData.self).deallocate() }) == SQLITE_OK
        else {
            return sqlite3_result_error(context, "epf_rank: out of memory", -1)
        }
    }
    let phrases = Int(phraseCount(fts))
    var frequencies = [Double](repeating: 0, count: phrases)
    var instances: Int32 = 0
    guard instCount(fts, &instances) == SQLITE_OK else {
        return sqlite3_result_error(context, "epf_rank: cannot read the matches", -1)
    }
    for index in 0..<instances {
        var phrase: Int32 = 0
        var column: Int32 = 0
        var offset: Int32 = 0
        guard inst(fts, index, &phrase, &column, &offset) == SQLITE_OK, phrase >= 0, Int(phrase) < phrases else {
            continue
        }
        frequencies[Int(phrase)] += count > column + 2 ? sqlite3_value_double(values[Int(column) + 2]) : 1.0
    }
    var length: Int32 = 0
    guard columnSize(fts, -1, &length) == SQLITE_OK else {
        return sqlite3_result_error(context, "epf_rank: cannot read the row size", -1)
    }
    let k1 = 1.2
    let b = 0.75
    let norm = k1 * (1 - b + b * Double(length) / data.averageLength)
    var score = 0.0
    for frequency in frequencies { score += frequency * (k1 + 1) / (frequency + norm) }
    var result = -score
    var exactSize: Int32 = 0
    if data.exactTokens >= 0, let exactText, columnSize(fts, exactColumn, &exactSize) == SQLITE_OK,
       exactSize == data.exactTokens, let columnText = api.xColumnText {
        var text: UnsafePointer<CChar>?
        var bytes: Int32 = 0
        if columnText(fts, exactColumn, &text, &bytes) == SQLITE_OK, let text, Int(bytes) == exactLength {
            var same = true
            for index in 0..<exactLength {
                var byte = UInt8(bitPattern: text[index])
                if byte >= 0x41 && byte <= 0x5A { byte += 0x20 }
                if byte != exactText[index] {
                    same = false
                    break
                }
            }
            if same { result -= 1000 }
        }
    }
    sqlite3_result_double(context, result)
}

/// The pointer type `fts5(?)` hands the API out under; SQLite keeps the pointer, so it must be static.
private let fts5PointerType: StaticString = "fts5_api_ptr"

extension SQLiteConnection {
    /// Registers the FTS5 auxiliary function `epf_rank` (see `rankFunction`) on this connection.
    ///
    /// The corresponding C calls are `sqlite3_bind_pointer(3)` on `SELECT fts5(?1)` to get the `fts5_api`,
    /// then its `xCreateFunction`. Throws `SQLiteError` when SQLite lacks FTS5.
    public func registerSearchRankFunction() throws {
        let statement = try prepare("SELECT fts5(?1)")
        var api: UnsafeMutablePointer<fts5_api>?
        try withUnsafeMutablePointer(to: &api) { pointer in
            let type = UnsafeRawPointer(fts5PointerType.utf8Start).assumingMemoryBound(to: CChar.self)
            try statement.check(sqlite3_bind_pointer(statement.handle, 1, pointer, type, nil))
            try statement.step()
            statement.reset()
        }
        guard let api, let create = api.pointee.xCreateFunction else {
            throw SQLiteError(code: SQLITE_ERROR, message: "FTS5 is not available", sql: statement.sql)
        }
        let rc = create(api, "epf_rank", nil, { api, fts, context, count, values in
            rankFunction(api, fts, context, count, values)
        }, nil)
        if rc != SQLITE_OK { throw error(rc, sql: "fts5_api.xCreateFunction(epf_rank)") }
    }
}
