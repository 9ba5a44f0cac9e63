import EPFStore

/// Full-text search over titles and artist/seller names.
extension QueryEngine {
    /// Full-text search over titles and artist/seller names, ranked: exact title first, then bm25.
    ///
    /// The bm25 is FTS5's without the IDF factor (see `SQLiteConnection.registerSearchRankFunction`): the
    /// same order for a one-word term, and no pass over every row holding a common word. When a term
    /// matches more than a few thousand entries, only the first few thousand in index order (apps first)
    /// are ranked, and whole-word matches are preferred to prefix matches, so a vague term still answers
    /// in milliseconds; equal ranks keep index order.
    /// Case and diacritics do not matter, the last word matches as a prefix, CJK words match as phrases,
    /// and FTS5 syntax in the term is neutralised. `entity` restricts the kind; `country` selects the price
    /// storefront (default "us"). A term with no letters or digits gives no results. Throws
    /// `QueryError.badArgument` for an unknown country or a limit outside 1...1000; returns no results
    /// when the database has no search index (`epf_search`).
    public func search(term: String, entity: EntityKind?, country: String?, limit: Int) throws -> LookupResult {
        guard (1...1000).contains(limit) else {
            throw QueryError.badArgument(name: "limit", message: "must be from 1 to 1000, got \(limit)")
        }
        let country = try normalizedCountry(country)
        guard let match = Self.ftsQuery(term) else { return LookupResult(items: [], invalidIds: []) }
        return try reading {
            guard tables.contains("epf_search") else { return LookupResult(items: [], invalidIds: []) }
            if !rankFunctionRegistered {
                try connection.registerSearchRankFunction()
                rankFunctionRegistered = true
            }
            let filter = entity == nil ? "" : "AND kind = ?3"
            // Ranking every match of a vague term (a word in a million names) costs seconds, so rank within
            // a window: the first `searchWindow` matches in index order. Whole words are tried before the
            // prefix form, which FTS5 must expand over every token it matches (unless the index has a
            // prefix index for that length) before returning a row.
            let probe = """
                SELECT rowid FROM epf_search WHERE epf_search MATCH ?1 \(filter) LIMIT ?2
                """
            let kindBinding: [SQLValue] = entity.map { [.text($0.rawValue)] } ?? []
            let wholeWords = String(match.dropLast())
            var wholeCount = 0
            try forEachRow(probe, [.text(wholeWords), .integer(Int64(Self.searchWindow))] + kindBinding) { _ in
                wholeCount += 1
                return true
            }
            let expression = wholeCount >= Self.searchWindow ? wholeWords : match
            // Ranks only (no content read): `kind` and `id` are read below for the winners alone.
            let ranked = """
                SELECT rowid, epf_rank(epf_search, 2, ?2, 0.0, 0.0, 10.0, 1.0) FROM epf_search
                WHERE epf_search MATCH ?1 \(filter) LIMIT ?4
                """
            let exact = SearchIndex.searchText(String(term.trimmingASCIIWhitespace())).lowercased()
            var scored: [(rank: Double, rowid: Int64)] = []
            try forEachRow(ranked, [.text(expression), .text(exact), kindBinding.first ?? .null,
                                    .integer(Int64(Self.searchWindow))]) { row in
                if let rowid = row.statement.int64(at: 0), case .real(let rank) = row.statement.value(at: 1) {
                    scored.append((rank, rowid))
                }
                return true
            }
            scored.sort { $0.rank != $1.rank ? $0.rank < $1.rank : $0.rowid < $1.rowid }
            var items: [LookupItem] = []
            for hit in scored.prefix(limit) {
                let found = try firstRow("SELECT kind, id FROM epf_search WHERE rowid = ?1",
                                         [.integer(hit.rowid)]) { row -> (EntityKind, Int64)? in
                    guard let kindText = row.statement.text(at: 0), let kind = EntityKind(rawValue: kindText),
                          let id = row.statement.int64(at: 1) else { return nil }
                    return (kind, id)
                }
                guard let (kind, id) = found else { continue }
                if let item = try item(kind: kind, id: id, country: country, language: nil, allPrices: false) {
                    items.append(item)
                }
            }
            return LookupResult(items: items, invalidIds: [])
        }
    }

    /// How many matches are ranked at most (see `search`): bm25 costs about 7 µs a row.
    static let searchWindow = 3000

    /// The FTS5 MATCH expression for a user's term: each word a quoted phrase, the last one a prefix.
    ///
    /// Quotes inside words are doubled, words without letters or digits are dropped; nil when nothing is left.
    public static func ftsQuery(_ term: String) -> String? {
        var phrases: [String] = []
        for word in term.split(whereSeparator: { $0.isWhitespace }) {
            guard word.contains(where: { $0.isLetter || $0.isNumber }) else { continue }
            let spaced = SearchIndex.searchText(String(word))
            var quoted = "\""
            for character in spaced {
                if character == "\"" { quoted += "\"\"" } else { quoted.append(character) }
            }
            phrases.append(quoted + "\"")
        }
        guard !phrases.isEmpty else { return nil }
        return phrases.joined(separator: " ") + "*"
    }
}
