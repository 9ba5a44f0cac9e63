#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import EPFStore
import JSONText

/// Stored lookup documents: reading them, re-targeting them to a country, and building them for the importer.
extension QueryEngine {
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
    /// fields (`price`, `formattedPrice`, `currency`, read here from `application_price`). Works on the bytes: a
    /// few byte searches, and one statement reads the document and the price together.
    func storedDocument(_ id: Int64, country: String) throws -> CountryDocument {
        guard let (stored, members) = try storedDocumentAndPrice(id, country: country) else { return .missing }
        let quote = UInt8(ascii: "\"")
        let backslash = UInt8(ascii: "\\")
        // The link comes before the price in every stored document: find it first, then the price after it.
        var link: (value: Range<Int>, country: Range<Int>?)?
        if let key = Self.find(Self.viewURLKey, in: stored, from: 0, to: stored.count),
           let end = stored[key.upperBound...].firstIndex(of: quote) {
            link = (key.upperBound..<end, Self.countrySegment(stored, key.upperBound..<end))
        }
        guard let priceStart = Self.find(Self.priceKey, in: stored, from: link?.value.upperBound ?? 0,
                                         to: stored.count)?.lowerBound,
              let currency = Self.find(Self.currencyKey, in: stored, from: priceStart, to: stored.count),
              let currencyEnd = stored[currency.upperBound...].firstIndex(of: quote),
              stored[currencyEnd - 1] != backslash,
              Self.find(Self.formattedPriceKey, in: stored, from: priceStart, to: currency.lowerBound) != nil
        else { return .unusable }
        if let link, stored[link.value].contains(backslash) { return .unusable }
        var result: [UInt8] = []
        result.reserveCapacity(stored.count + 64)
        var copied = 0
        if let link, let segment = link.country {
            result.append(contentsOf: stored[..<segment.lowerBound])
            result.append(contentsOf: country.utf8)
            if segment.isEmpty { result.append(UInt8(ascii: "/")) }
            copied = segment.upperBound
        }
        result.append(contentsOf: stored[copied..<priceStart])
        if let members {
            // An object's members after the comma that ends the field before them.
            result.append(UInt8(ascii: ","))
            result.append(contentsOf: members)
        }
        result.append(contentsOf: stored[(currencyEnd + 1)...])
        return .document(result, priced: members != nil)
    }

    /// The range of the country segment of the URL at `url` in `bytes` (`…://host/us/app/…` -> `us`), or an empty
    /// range where one goes (before the first path segment) when that segment is no country; nil when the URL has
    /// no `://` or no path (`viewURL` leaves such URLs unchanged).
    static func countrySegment(_ bytes: [UInt8], _ url: Range<Int>) -> Range<Int>? {
        guard let scheme = find(schemeSeparator, in: bytes, from: url.lowerBound, to: url.upperBound),
              let slash = bytes[scheme.upperBound..<url.upperBound].firstIndex(of: UInt8(ascii: "/")) else {
            return nil
        }
        let start = slash + 1
        var end = start
        while end < url.upperBound, bytes[end] != UInt8(ascii: "/"), bytes[end] != UInt8(ascii: "?") { end += 1 }
        if end - start == 2, CountryCodes.isAlpha2(bytes[start], bytes[start + 1]) {
            return start..<end
        }
        return start..<start
    }

    /// An app's stored document and the serialized members of its price in the storefront of `country` (nil when
    /// it has no price there: exactly what `addPrice(name: "price")` adds), read by one statement; nil when the
    /// app has no document.
    func storedDocumentAndPrice(_ id: Int64, country: String) throws -> (body: [UInt8], members: [UInt8]?)? {
        guard let storefront = try storefrontID(country: country), let statement = try documentAndPriceStatement()
        else { return try storedDocument(id).map { ($0, nil) } }
        defer { statement.reset() }
        do {
            try statement.bind(id, at: 1)
            try statement.bind(storefront, at: 2)
            guard try statement.step(), case .blob(let body) = statement.value(at: 0) else { return nil }
            guard let text = statement.text(at: 1) else { return (body, nil) }
            return (body, priceMembers(text, currency: statement.text(at: 2) ?? ""))
        } catch let error as SQLiteError {
            throw QueryError.sqlite(error)
        }
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

    /// The statement of `storedDocumentAndPrice`, nil without an `application_price` table. Kept apart from the
    /// statement cache: it runs on every lookup with a country, where hashing its SQL text would cost more than
    /// the read.
    private func documentAndPriceStatement() throws -> SQLiteStatement? {
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
    static let schemeSeparator = Array("://".utf8)

    /// The first occurrence of `needle` in `haystack[from..<to]` (`memchr` and `memcmp`). In a serialized object a
    /// key with its quotes, colon and the comma before it can only be that key: inside string values quotes are
    /// escaped.
    static func find(_ needle: [UInt8], in haystack: [UInt8], from: Int, to: Int) -> Range<Int>? {
        guard from >= 0, to <= haystack.count, to - from >= needle.count else { return nil }
        return haystack.withUnsafeBytes { bytes -> Range<Int>? in
            needle.withUnsafeBytes { key -> Range<Int>? in
                guard let base = bytes.baseAddress, let keyBase = key.baseAddress, let first = needle.first else {
                    return nil
                }
                var start = from
                let last = to - needle.count
                while start <= last {
                    guard let found = memchr(base + start, Int32(first), last - start + 1) else { return nil }
                    let index = base.distance(to: UnsafeRawPointer(found))
                    if memcmp(found, keyBase, needle.count) == 0 { return index..<(index + needle.count) }
                    start = index + 1
                }
                return nil
            }
        }
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
