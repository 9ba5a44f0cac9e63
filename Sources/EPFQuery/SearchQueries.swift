import EPFSQLite
import EPFSchema

/// Full-text search over titles and artist and seller names (`epf_search`).
package final class SearchQueries: SessionReading {
    let session: ReadSession
    let lookups: LookupQueries

    init(session: ReadSession, lookups: LookupQueries) {
        self.session = session
        self.lookups = lookups
    }
}

/// Full-text search over titles and artist/seller names.
extension SearchQueries {
    /// Full-text search over titles and artist/seller names, ranked: exact title first, then bm25.
    ///
    /// The bm25 is FTS5's without the IDF factor (see `SQLiteConnection.registerSearchRankFunction`): the
    /// same order for a one-word term, and no pass over every row holding a common word. When a term
    /// matches more than a few thousand entries, only the first few thousand in index order (apps first)
    /// are ranked, and whole-word matches are preferred to prefix matches, so a vague term still answers
    /// in milliseconds; equal ranks keep index order.
    /// Case and diacritics do not matter, the last word matches as a prefix, CJK words match as phrases,
    /// and FTS5 syntax in the term is neutralised. `entity` restricts the kind; `country` selects the price
    /// storefront (default "us") and, when given, each item says whether that storefront sells it
    /// (`availableInStorefront`, as a lookup in that country says). A term with no letters or digits gives no
    /// results (send `searchJSON`: a search has no `invalidIds`). Throws
    /// `QueryError.badArgument` for an unknown country or a limit outside 1...1000; returns no results
    /// when the database has no search index (`epf_search`).
    package func matches(term: String, entity: EntityKind?, country: String?, limit: Int) throws -> LookupResult {
        guard (1...1000).contains(limit) else {
            throw QueryError.badArgument(name: "limit", message: "must be from 1 to 1000, got \(limit)")
        }
        let country = try normalizedCountry(country)
        return try reading {
            var items: [LookupItem] = []
            for rowid in try rankedMatches(term: term, kinds: entity.map { [$0] }, column: nil).prefix(limit) {
                guard let (kind, id) = try searchHit(rowid) else { continue }
                if let item = try lookups.item(kind: kind, id: id, country: country, language: nil, allPrices: false) {
                    // With a country, what a lookup in that storefront says: whether it sells the item.
                    items.append(try lookups.markingAvailability(item, country: country))
                }
            }
            return LookupResult(items: items, invalidIds: [])
        }
    }

    /// The rowids in `epf_search` of the entries matching `term`, best first (see `search`): of `kinds` only
    /// (nil: every kind), matching in one column of the index only (`title` or `names`) when `column` is set.
    /// Empty when the term has no letters or digits or there is no search index. Runs inside `reading`.
    func rankedMatches(term: String, kinds: Set<EntityKind>?, column: String?) throws -> [Int64] {
        guard let match = Self.ftsQuery(term), tables.contains("epf_search"), kinds?.isEmpty != true else {
            return []
        }
        if !session.rankFunctionRegistered {
            try connection.registerSearchRankFunction()
            session.rankFunctionRegistered = true
        }
        // Kind names are the enum's raw values, never user text.
        let filter = kinds.map { set in
            "AND kind IN (" + set.map { "'\($0.rawValue)'" }.sorted().joined(separator: ", ") + ")"
        } ?? ""
        func restricted(_ expression: String) -> String {
            column.map { "\($0) : (\(expression))" } ?? expression
        }
        // Ranking every match of a vague term (a word in a million names) costs seconds, so rank within
        // a window: the first `searchWindow` matches in index order. Whole words are tried before the
        // prefix form, which FTS5 must expand over every token it matches (unless the index has a
        // prefix index for that length) before returning a row.
        let probe = "SELECT rowid FROM epf_search WHERE epf_search MATCH ?1 \(filter) LIMIT ?2"
        let wholeWords = String(match.dropLast())
        var wholeCount = 0
        try forEachRow(probe, [.text(restricted(wholeWords)), .integer(Int64(Self.searchWindow))]) { _ in
            wholeCount += 1
            return true
        }
        let expression = restricted(wholeCount >= Self.searchWindow ? wholeWords : match)
        // Ranks only (no content read): `kind` and `id` are read for the winners alone (`searchHit`).
        let ranked = """
            SELECT rowid, epf_rank(epf_search, 2, ?2, 0.0, 0.0, 10.0, 1.0) FROM epf_search
            WHERE epf_search MATCH ?1 \(filter) LIMIT ?3
            """
        let exact = SearchIndex.searchText(String(term.trimmingASCIIWhitespace())).lowercased()
        var scored: [(rank: Double, rowid: Int64)] = []
        try forEachRow(ranked, [.text(expression), .text(exact), .integer(Int64(Self.searchWindow))]) { row in
            if let rowid = row.statement.int64(at: 0), case .real(let rank) = row.statement.value(at: 1) {
                scored.append((rank, rowid))
            }
            return true
        }
        scored.sort { $0.rank != $1.rank ? $0.rank < $1.rank : $0.rowid < $1.rowid }
        return scored.map(\.rowid)
    }

    /// The kind and Apple ID of a search index entry, nil when the row is gone or unreadable.
    func searchHit(_ rowid: Int64) throws -> (EntityKind, Int64)? {
        try firstRow("SELECT kind, id FROM epf_search WHERE rowid = ?1", [.integer(rowid)]) { row in
            guard let kindText = row.statement.text(at: 0), let kind = EntityKind(rawValue: kindText),
                  let id = row.statement.int64(at: 1) else { return nil }
            return (kind, id)
        }
    }

    /// How many matches are ranked at most (see `search`): bm25 costs about 7 µs a row.
    static let searchWindow = 3000

    /// The FTS5 MATCH expression for a user's term: each word a quoted phrase, the last one a prefix.
    ///
    /// Quotes inside words are doubled, NUL bytes removed (FTS5 reads the expression as a C string: a NUL ends it
    /// inside the quotes), words without letters or digits are dropped; nil when nothing is left. Quotes are found
    /// among Unicode scalars, not Characters: a quote followed by a combining mark is one Character, not a quote.
    package static func ftsQuery(_ term: String) -> String? {
        var phrases: [String] = []
        for word in term.split(whereSeparator: { $0.isWhitespace }) {
            guard word.contains(where: { $0.isLetter || $0.isNumber }) else { continue }
            let spaced = SearchIndex.searchText(String(word))
            var quoted = "\""
            for scalar in spaced.unicodeScalars where scalar != "\u{0}" {
                if scalar == "\"" { quoted += "\"\"" } else { quoted.unicodeScalars.append(scalar) }
            }
            phrases.append(quoted + "\"")
        }
        guard !phrases.isEmpty else { return nil }
        return phrases.joined(separator: " ") + "*"
    }
}
