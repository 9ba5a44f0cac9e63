import EPFFormat
import EPFSQLite
import EPFSchema
import Foundation
import JSONText

/// One recorded price change (see `EPFSchema.PriceHistory`).
package struct PriceChange: Sendable, Equatable {
    /// The Apple ID.
    package let id: Int64
    /// `app`, `collection`, `song` or `video`.
    package let kind: String
    /// EPF storefront id.
    package let storefrontId: Int64
    /// ISO 3166 alpha-2 lowercase, nil when the storefront is unknown.
    package let country: String?
    /// `changed`, `appeared` (now sold there) or `disappeared` (no longer sold there).
    package let change: String
    /// The prices as stored (the feed's decimal text), nil where there was none.
    package let oldPrice: String?
    package let newPrice: String?
    /// ISO 4217 code of the new price (of the old one for `disappeared`).
    package let currency: String?
    /// The export's `export_date`, milliseconds since 1970 UTC.
    package let exportDate: Int64
    /// The position of the change in the history: later changes have larger numbers.
    package let sequence: Int64

    /// Whether the price went down (a `changed` row with both prices).
    package var isDrop: Bool {
        guard change == "changed", let old = oldPrice.flatMap(Double.init), let new = newPrice.flatMap(Double.init)
        else { return false }
        return new < old
    }

    /// A price as JSON number text and display text in this change's currency.
    package func formatted(_ price: String?) -> (number: String, text: String)? {
        guard let price else { return nil }
        let format = CurrencyFormat.forCode(currency ?? "")
        guard let number = format.jsonNumber(price), let text = format.format(price) else { return nil }
        return (number, text)
    }

    /// `{"id", "kind", "storefrontId", "country", "change", "exportDate", "currency", "oldPrice", "newPrice",
    /// "oldFormattedPrice", "newFormattedPrice"}`; prices are numbers rounded to the currency's digits, null
    /// where there is none.
    package var json: JSONValue { json(old: formatted(oldPrice), new: formatted(newPrice)) }

    /// `json` with the prices already formatted (`formatted(oldPrice)`, `formatted(newPrice)`), for a listing that
    /// formats each price once.
    package func json(old: (number: String, text: String)?, new: (number: String, text: String)?) -> JSONValue {
        .object([
            ("id", .int(id)), ("kind", .string(kind)), ("storefrontId", .int(storefrontId)),
            ("country", country.map { .string($0) } ?? .null), ("change", .string(change)),
            ("exportDate", .string(EPFValues.isoTimestamp(milliseconds: exportDate))),
            ("currency", currency.map { .string($0.uppercased()) } ?? .null),
            ("oldPrice", old.map { .decimal($0.number) } ?? .null), ("newPrice", new.map { .decimal($0.number) } ?? .null),
            ("oldFormattedPrice", old.map { .string($0.text) } ?? .null),
            ("newFormattedPrice", new.map { .string($0.text) } ?? .null),
        ])
    }
}

/// The prices of a listing of changes, each formatted once per currency: a feed repeats a few hundred price tiers,
/// and formatting one (`PriceChange.formatted`) took a third of `epf changes --kind price --csv`.
package final class FormattedPrices {
    private var known: [String: (number: String, text: String)?] = [:]
    /// Formatted prices kept at most (a hostile feed may have a price per row).
    private static let limit = 65_536

    package init() {}

    /// `change.formatted(price)`, from what is kept when the same price was formatted in the same currency.
    package func of(_ price: String?, in change: PriceChange) -> (number: String, text: String)? {
        guard let price else { return nil }
        let key = (change.currency ?? "") + "\u{0}" + price
        if let kept = known[key] { return kept }
        let formatted = change.formatted(price)
        if known.count < Self.limit { known[key] = formatted }
        return formatted
    }
}

/// One page of `ChangeQueries.pricePage`.
package struct PriceChangePage: Sendable {
    package let changes: [PriceChange]
    /// The cursor of the next page, nil on the last one.
    package let nextCursor: String?

    /// `{"resultCount": N, "changes": [...], "nextCursor": "..." or null}`.
    package var json: JSONValue {
        .object([("resultCount", .int(Int64(changes.count))), ("changes", .array(changes.map(\.json))),
                 ("nextCursor", nextCursor.map { .string($0) } ?? .null)])
    }
}

/// The price history (`epf_price_history`): one item's prices over time, and the feed of price changes.
extension ChangeQueries {
    private static let priceColumns = "id, kind, storefront_id, change, old_price, new_price, currency, export_date, seq"

    private func priceChange(_ statement: SQLiteStatement, countries: [Int64: StorefrontRow]) -> PriceChange {
        let storefront = statement.int64(at: 2) ?? 0
        return PriceChange(id: statement.int64(at: 0) ?? 0, kind: statement.text(at: 1) ?? "",
                           storefrontId: storefront, country: countries[storefront]?.country
                               ?? AppleStorefronts.entry(id: Int(storefront))?.linkCode,
                           change: statement.text(at: 3) ?? "", oldPrice: statement.text(at: 4),
                           newPrice: statement.text(at: 5), currency: statement.text(at: 6),
                           exportDate: statement.int64(at: 7) ?? 0, sequence: statement.int64(at: 8) ?? 0)
    }

    /// The storefront of `country` (alpha-2 or alpha-3, any case) for a filter: from the data's storefront
    /// table, else Apple's list. Throws `QueryError.badArgument` naming `country` when neither knows it.
    private func storefront(ofCountry country: String) throws -> Int64 {
        if let code = try normalizedCountry(country), let id = try storefrontID(country: code) { return id }
        if let id = AppleStorefronts.id(forCountryCode: country) { return Int64(id) }
        throw QueryError.badArgument(name: "country", message: "no storefront for '\(country.prefix(40))'")
    }

    /// The recorded price changes of one item, oldest first (by export date, then as recorded), optionally in one
    /// storefront (`country`) and from exports dated `since` (`YYYY-MM-DD`) on. `kind` (`app`, `collection`,
    /// `song`, `video`) limits them to one kind of item. Empty when nothing was recorded (or history is off).
    package func priceHistory(id: Int64, kind: String? = nil, country: String? = nil, since: String? = nil) throws
        -> [PriceChange] {
        let sinceMilliseconds = try since.map { try Self.changesSince($0, kind: nil) } ?? 0
        return try reading {
            guard let history = PriceHistoryRead(tables: tables) else { return [] }
            var sql = "SELECT \(Self.priceColumns) FROM \(history.table) WHERE id = ?1 AND export_date >= ?2"
            var bindings: [SQLValue] = [.integer(id), .integer(sinceMilliseconds)]
            if let kind {
                bindings.append(.text(kind))
                sql += " AND kind = ?\(bindings.count)"
            }
            if let country {
                bindings.append(.integer(try storefront(ofCountry: country)))
                sql += " AND storefront_id = ?\(bindings.count)"
            }
            let countries = try smallTables().storefronts
            var changes: [PriceChange] = []
            try forEachRow(sql + " ORDER BY export_date, seq", bindings) { row in
                changes.append(priceChange(row.statement, countries: countries))
                return true
            }
            return changes
        }
    }

    /// The price changes of exports dated `since` or later, in order (by export date, then as recorded), at most
    /// `limit` after `cursor` (a page's `nextCursor`, as for `page`): optionally of one storefront (`country`) and
    /// only drops (`drops`: a price that went down). Throws `QueryError.badArgument` for a bad value.
    package func pricePage(since: String, country: String?, drops: Bool, limit: Int, cursor: String?) throws
        -> PriceChangePage {
        let after = try Self.pagePosition(since: try Self.changesSince(since, kind: nil), limit: limit, cursor: cursor)
        return try reading {
            guard let history = PriceHistoryRead(tables: tables) else {
                return PriceChangePage(changes: [], nextCursor: nil)
            }
            var filters = ""
            var bindings: [SQLValue] = []
            if let country {
                bindings.append(.integer(try storefront(ofCountry: country)))
                filters += "storefront_id = ?4 AND "
            }
            if drops {
                filters += "change = 'changed' AND CAST(new_price AS REAL) < CAST(old_price AS REAL) AND "
            }
            let countries = try smallTables().storefronts
            let (rows, next) = try pagedRows(table: history.table, columns: Self.priceColumns, filters: filters,
                                             bindings: bindings, after: after, limit: limit,
                                             packedPositions: history.packedPositions) {
                priceChange($0, countries: countries)
            } position: { ($0.exportDate, $0.sequence) }
            return PriceChangePage(changes: rows, nextCursor: next)
        }
    }
}
