#if canImport(Glibc)
import EPFSQLite
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import JSONText

/// Stored lookup documents: reading them, re-targeting them to a country, and building them for the importer.
extension LookupQueries {
    /// A stored document made for a country, or why there is none.
    enum CountryDocument {
        /// The document for the country; `priced` when it shows a price in that storefront.
        case document([UInt8], priced: Bool)
        /// No such app.
        case missing
        /// The document does not have the expected shape (no US price to replace, an escaped link): build the
        /// answer from the tables.
        case unusable
    }

    /// The stored document of an app re-targeted to `country` (normalized): the same bytes as a lookup from the
    /// tables with that country, since a country changes only the link's country segment and the three price
    /// fields (`price`, `formattedPrice`, `currency`, read here from `application_price`). Works on the bytes: one
    /// statement reads the document and the price together, and the answer is built from SQLite's copy of the
    /// document with a few byte searches, without a copy of its own first.
    func storedDocument(_ id: Int64, country: String) throws -> CountryDocument {
        guard let storefront = try storefrontID(country: country), let statement = try documentAndPriceStatement()
        else {
            guard let stored = try storedDocument(id) else { return .missing }
            return stored.withUnsafeBytes { Self.retarget($0, country: country, price: nil) }
        }
        defer { statement.reset() }
        do {
            try statement.bind(id, at: 1)
            try statement.bind(storefront, at: 2)
            guard try statement.step() else { return .missing }
            let price = statement.decimalText(at: 1).flatMap { priceMembers($0, currency: statement.text(at: 2) ?? "") }
            return statement.withBlob(at: 0) { Self.retarget($0, country: country, price: price) } ?? .missing
        } catch let error as SQLiteError {
            throw QueryError.sqlite(error)
        }
    }

    /// `stored` re-targeted to `country`: the link's country segment replaced, and the price fields replaced by
    /// `price` (the serialized members of the storefront's price, exactly what `addPrice(name: "price")` adds),
    /// or removed when it is nil.
    static func retarget(_ stored: UnsafeRawBufferPointer, country: String, price: [UInt8]?) -> CountryDocument {
        let quote = UInt8(ascii: "\"")
        let backslash = UInt8(ascii: "\\")
        // The link comes before the price in every stored document: find it first, then the price after it.
        var link: (value: Range<Int>, country: Range<Int>?)?
        if let key = find(viewURLKey, in: stored, from: 0, to: stored.count, anchor: viewURLAnchor),
           let end = firstIndex(of: quote, in: stored, from: key.upperBound, to: stored.count) {
            link = (key.upperBound..<end, countrySegment(stored, key.upperBound..<end))
        }
        guard let priceStart = find(priceKey, in: stored, from: link?.value.upperBound ?? 0,
                                    to: stored.count)?.lowerBound,
              let currency = find(currencyKey, in: stored, from: priceStart, to: stored.count),
              let currencyEnd = firstIndex(of: quote, in: stored, from: currency.upperBound, to: stored.count),
              stored[currencyEnd - 1] != backslash,
              find(formattedPriceKey, in: stored, from: priceStart, to: currency.lowerBound) != nil
        else { return .unusable }
        if let link,
           firstIndex(of: backslash, in: stored, from: link.value.lowerBound, to: link.value.upperBound) != nil {
            return .unusable
        }
        var result: [UInt8] = []
        result.reserveCapacity(stored.count + 64)
        var copied = 0
        if let link, let segment = link.country {
            result.append(contentsOf: UnsafeRawBufferPointer(rebasing: stored[..<segment.lowerBound]))
            result.append(contentsOf: country.utf8)
            if segment.isEmpty { result.append(UInt8(ascii: "/")) }
            copied = segment.upperBound
        }
        result.append(contentsOf: UnsafeRawBufferPointer(rebasing: stored[copied..<priceStart]))
        if let price {
            // An object's members after the comma that ends the field before them.
            result.append(UInt8(ascii: ","))
            result.append(contentsOf: price)
        }
        result.append(contentsOf: UnsafeRawBufferPointer(rebasing: stored[(currencyEnd + 1)...]))
        return .document(result, priced: price != nil)
    }

    /// The range of the country segment of the URL at `url` in `bytes` (`…://host/us/app/…` -> `us`), or an empty
    /// range where one goes (before the first path segment) when that segment is no country; nil when the URL has
    /// no `://` or no path (`viewURL` leaves such URLs unchanged).
    static func countrySegment(_ bytes: UnsafeRawBufferPointer, _ url: Range<Int>) -> Range<Int>? {
        guard let scheme = find(schemeSeparator, in: bytes, from: url.lowerBound, to: url.upperBound),
              let slash = firstIndex(of: UInt8(ascii: "/"), in: bytes, from: scheme.upperBound, to: url.upperBound)
        else { return nil }
        let start = slash + 1
        var end = start
        while end < url.upperBound, bytes[end] != UInt8(ascii: "/"), bytes[end] != UInt8(ascii: "?") { end += 1 }
        if end - start == 2, CountryCodes.isAlpha2(bytes[start], bytes[start + 1]) {
            return start..<end
        }
        return start..<start
    }

    /// `"price":…,"formattedPrice":"…","currency":"…"` for a price as stored, kept for the next app with the same
    /// price; nil when the price cannot be read.
    private func priceMembers(_ text: String, currency: String) -> [UInt8]? {
        let key = PriceKey(text: text, currency: currency)
        if let members = priceMembers[key] { return members }
        guard let price = formattedPrice(key.text, currency: key.currency) else { return nil }
        if priceMembers.count >= 4096 { priceMembers.removeAll(keepingCapacity: true) }
        let members = price.appMembers
        priceMembers[key] = members
        return members
    }

    /// The statement of `storedDocument(_:country:)`, nil without an `application_price` table. Kept apart from the
    /// statement cache: it runs on every lookup with a country, where hashing its SQL text would cost more than
    /// the read.
    private func documentAndPriceStatement() throws -> SQLiteStatement? {
        dropStaleStatements()
        if let documentAndPrice { return documentAndPrice }
        guard tables.contains("application_price") else { return nil }
        do {
            let statement = try connection.prepare("""
                SELECT d.body, p.retail_price, p.currency_code FROM \(LookupDocuments.table) d
                LEFT JOIN application_price p ON p.application_id = d.application_id AND p.storefront_id = ?2
                WHERE d.application_id = ?1
                """)
            documentAndPrice = statement
            return statement
        } catch let error as SQLiteError {
            throw QueryError.sqlite(error)
        }
    }

    static let priceKey = Array(#","price":"#.utf8)
    static let formattedPriceKey = Array(#","formattedPrice":""#.utf8)
    static let currencyKey = Array(#","currency":""#.utf8)
    static let viewURLKey = Array(#","trackViewUrl":""#.utf8)
    /// The `V` of `viewURLKey`: the link is searched from the document's start, past names and other keys that
    /// are full of commas and quotes, and only `artistViewUrl` shares the letter.
    static let viewURLAnchor = 7
    static let schemeSeparator = Array("://".utf8)

    /// The first occurrence of `needle` in `haystack[from..<to]` (`memchr` for its byte at `anchor`, then
    /// `memcmp`): anchor on a byte that is rare in documents, so that few places are compared. In a serialized
    /// object a key with its quotes, colon and the comma before it can only be that key: inside string values
    /// quotes are escaped.
    static func find(_ needle: [UInt8], in haystack: UnsafeRawBufferPointer, from: Int, to: Int,
                     anchor: Int = 0) -> Range<Int>? {
        guard from >= 0, to <= haystack.count, to - from >= needle.count, anchor >= 0, anchor < needle.count,
              let base = haystack.baseAddress else {
            return nil
        }
        return needle.withUnsafeBytes { key -> Range<Int>? in
            guard let keyBase = key.baseAddress else { return nil }
            let byte = Int32(needle[anchor])
            var start = from
            let last = to - needle.count
            while start <= last {
                guard let found = memchr(base + start + anchor, byte, last - start + 1) else { return nil }
                let index = base.distance(to: UnsafeRawPointer(found)) - anchor
                if memcmp(base + index, keyBase, needle.count) == 0 { return index..<(index + needle.count) }
                start = index + 1
            }
            return nil
        }
    }

    /// The index of the first `byte` in `bytes[from..<to]` (`memchr`), nil when there is none.
    @inline(__always)
    static func firstIndex(of byte: UInt8, in bytes: UnsafeRawBufferPointer, from: Int, to: Int) -> Int? {
        guard from >= 0, to <= bytes.count, from < to, let base = bytes.baseAddress,
              let found = memchr(base + from, Int32(byte), to - from) else { return nil }
        return base.distance(to: UnsafeRawPointer(found))
    }

    /// An app's stored lookup document, nil when there is none (the documents cover every app).
    func storedDocument(_ id: Int64) throws -> [UInt8]? {
        let sql = "SELECT body FROM \(LookupDocuments.table) WHERE application_id = ?1"
        return try firstRow(sql, id: id) { row in
            guard case .blob(let body) = row.statement.value(at: 0) else { return nil }
            return body
        }
    }

    /// The lookup documents of these apps (those that exist), read in one snapshot: what `LookupDocuments`
    /// stores. Always built from the tables.
    func documents(for ids: [Int64]) throws -> [(id: Int64, body: [UInt8])] {
        try reading {
            var batch: [(id: Int64, body: [UInt8])] = []
            batch.reserveCapacity(ids.count)
            for app in ids {
                if let value = try application(app, country: nil, language: nil, allPrices: false)?.value {
                    batch.append((app, value.serialized()))
                }
            }
            return batch
        }
    }
}
