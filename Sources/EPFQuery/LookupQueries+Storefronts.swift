import JSONText

/// Whether a storefront sells an item. In the EPF a price row is what says so: an item with no row in a
/// storefront's price table is not sold there (Apple's API then answers `resultCount: 0`).
extension LookupQueries {
    /// Whether the storefront of `country` (normalized alpha-2) sells `item`: true when the item shows a price
    /// there or its price table has a row for it there, false when the table has none; nil when that cannot be
    /// told (artists have no price; the price table or the storefront table is not loaded, or has no storefront
    /// for the country).
    func sells(_ item: LookupItem, country: String) throws -> Bool? {
        if item.country == country { return true }
        guard let priceTable = item.kind.catalogueTable.priceTable, tables.contains(priceTable),
              let storefront = try storefrontID(country: country) else { return nil }
        let sql = "SELECT 1 FROM \(priceTable) WHERE \(item.kind.catalogueTable.idColumn) = ?1 AND storefront_id = ?2"
        return try firstRow(sql, [.integer(item.id), .integer(storefront)]) { _ in true } ?? false
    }

    /// `item` for Apple's paths with a country: nil when that storefront does not sell it (Apple leaves such items
    /// out of lookups and searches); unchanged when it does or when that cannot be told.
    func soldOrNil(_ item: LookupItem?, country: String?) throws -> LookupItem? {
        guard let item, let country else { return item }
        return try sells(item, country: country) == false ? nil : item
    }

    /// `item` for the `/v1` paths and the CLI with a country: its object says whether that storefront sells it,
    /// `"availableInStorefront": true` or `false` with `"price": null`; unchanged when that cannot be told.
    func markingAvailability(_ item: LookupItem, country: String?) throws -> LookupItem {
        guard let country, let sold = try sells(item, country: country) else { return item }
        if sold, case .serialized(var bytes) = item.value, bytes.last == UInt8(ascii: "}"), bytes.count > 2 {
            // The common case on `/v1/apps/{id}?country=`: a priced stored document gets one constant member.
            bytes.insert(contentsOf: Self.soldMember, at: bytes.count - 1)
            return LookupItem(id: item.id, kind: item.kind, value: .serialized(bytes), country: item.country)
        }
        var members: [(String, JSONValue)] = [("availableInStorefront", .bool(sold))]
        if !sold { members.append(("price", .null)) }
        return LookupItem(id: item.id, kind: item.kind, value: Self.appending(members, to: item.value),
                          country: item.country)
    }

    private static let soldMember = Array(#","availableInStorefront":true"#.utf8)

    /// An object with `members` added at its end; a serialized object gets them spliced in before its closing
    /// brace. Anything else is returned as it is.
    static func appending(_ members: [(String, JSONValue)], to value: JSONValue) -> JSONValue {
        switch value {
        case .object(let pairs):
            return .object(pairs + members)
        case .serialized(var bytes):
            guard let close = bytes.lastIndex(of: UInt8(ascii: "}")) else { return value }
            let tail = JSONValue.object(members).serialized()
            // `{"a":1}` + `{"b":2}` -> `{"a":1,"b":2}`; an empty object takes the members without the comma.
            let isEmpty = bytes[..<close].last(where: { $0 != UInt8(ascii: " ") }) == UInt8(ascii: "{")
            var insertion = isEmpty ? [] : [UInt8(ascii: ",")]
            insertion += tail.dropFirst().dropLast()
            bytes.insert(contentsOf: insertion, at: close)
            return .serialized(bytes)
        default:
            return value
        }
    }
}
