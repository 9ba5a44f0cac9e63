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
    /// fields (`price`, `formattedPrice`, `currency`, read here from `application_price`).
    func storedDocument(_ id: Int64, country: String) throws -> CountryDocument {
        guard let stored = try storedDocument(id) else { return .missing }
        let document = stored[...]
        guard let priceStart = Self.range(of: Self.priceKey, in: document)?.lowerBound,
              let currency = Self.range(of: Self.currencyKey, in: document[priceStart...]),
              let currencyEnd = document[currency.upperBound...].firstIndex(of: UInt8(ascii: "\"")),
              document[currencyEnd - 1] != UInt8(ascii: "\\"),
              Self.range(of: Self.formattedPriceKey, in: document[priceStart..<currency.lowerBound]) != nil
        else { return .unusable }
        var link: (value: Range<Int>, text: String)?
        if let key = Self.range(of: Self.viewURLKey, in: document) {
            guard let end = document[key.upperBound...].firstIndex(of: UInt8(ascii: "\"")), end < priceStart,
                  !document[key.upperBound..<end].contains(UInt8(ascii: "\\")) else { return .unusable }
            link = (key.upperBound..<end, String(decoding: document[key.upperBound..<end], as: UTF8.self))
        }
        // The three fields exactly as the tables' lookup adds them.
        var priceFields = Fields()
        let priced = try addPrice(&priceFields, of: .application, id: id, country: country,
                                  name: "price") != nil
        var result: [UInt8] = []
        result.reserveCapacity(stored.count + 64)
        var copied = 0
        if let link {
            result.append(contentsOf: document[..<link.value.lowerBound])
            var writer = JSONWriter(capacity: link.text.utf8.count + 16)
            writer.appendString(Self.viewURL(link.text, country: country))
            // The writer's quotes are already in the document.
            writer.withBytes { result.append(contentsOf: $0.dropFirst().dropLast()) }
            copied = link.value.upperBound
        }
        result.append(contentsOf: document[copied..<priceStart])
        if priced {
            // An object's members without its braces, after the comma that ends the field before them.
            result.append(UInt8(ascii: ","))
            result.append(contentsOf: priceFields.json.serialized().dropFirst().dropLast())
        }
        result.append(contentsOf: document[(currencyEnd + 1)...])
        return .document(result, priced: priced)
    }

    static let priceKey = Array(#","price":"#.utf8)
    static let formattedPriceKey = Array(#","formattedPrice":""#.utf8)
    static let currencyKey = Array(#","currency":""#.utf8)
    static let viewURLKey = Array(#","trackViewUrl":""#.utf8)

    /// The first occurrence of `needle` in `haystack`. In a serialized object a key with its quotes, colon and
    /// the comma before it can only be that key: inside string values quotes are escaped.
    static func range(of needle: [UInt8], in haystack: ArraySlice<UInt8>) -> Range<Int>? {
        guard let first = needle.first, haystack.count >= needle.count else { return nil }
        var index = haystack.startIndex
        let last = haystack.endIndex - needle.count
        while index <= last {
            guard let found = haystack[index...last].firstIndex(of: first) else { return nil }
            if haystack[found..<(found + needle.count)].elementsEqual(needle) { return found..<(found + needle.count) }
            index = found + 1
        }
        return nil
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
