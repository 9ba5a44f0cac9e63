import CSQLite

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
    package func registerSearchRankFunction() throws {
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
