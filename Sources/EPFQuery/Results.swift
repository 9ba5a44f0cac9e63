import EPFSQLite
import JSONText

/// Why a query could not be answered. Each case's `description` says what went wrong and what to do.
package enum QueryError: Error, CustomStringConvertible, Sendable {
    /// No file at the database path.
    case databaseMissing(path: String)
    /// The file exists but holds no EPF tables (empty file, or never imported).
    case databaseEmpty(path: String)
    /// An argument or option value is not acceptable; `name` is the option (`country`, `limit`, `id`, ...).
    case badArgument(name: String, message: String)
    /// `sql` was given something other than one read-only statement; nothing was changed.
    case refused(sql: String, reason: String)
    /// SQLite failed (corrupt file, syntax error in user SQL, ...).
    case sqlite(SQLiteError)

    package var description: String {
        switch self {
        case .databaseMissing(let path):
            return "no database at '\(path)'"
        case .databaseEmpty(let path):
            return "database '\(path)' holds no EPF tables"
        case .badArgument(let name, let message):
            return "'\(name)': \(message)"
        case .refused(let sql, let reason):
            return "refused (\(reason)); the database is opened read-only and nothing was changed: \(sql.prefix(200))"
        case .sqlite(let error):
            return error.description
        }
    }
}

/// One answer of `lookup` or `search`: an entry of the catalogue and its Apple Lookup-shaped JSON.
package struct LookupItem {
    /// The Apple ID.
    package let id: Int64
    /// The kind of entry found (which table it came from).
    package let kind: EntityKind
    /// The entry as one object of Apple's Lookup API `results`, plus `prices` when every storefront was asked for.
    package let value: JSONValue
    /// The storefront (ISO alpha-2) the price fields are for, nil when none applied.
    package let country: String?
    /// The storefront the lookup asked about (`country`, else the store link's), nil when none was: set even when
    /// that storefront does not sell the item, so a link's country says "not sold there" as `--country` does.
    package var storefront: String? = nil
}

/// The answer of `lookup` or `search`: found entries and the arguments that matched nothing.
package struct LookupResult {
    /// Found entries, in argument order (lookup) or rank order (search).
    package let items: [LookupItem]
    /// Arguments that were not a valid ID or link, or whose ID is in no table, as given.
    package let invalidIds: [String]
    /// Of the ids not found, those that left the store (lookup only; see `ChangeQueries.removal(of:argument:)`).
    package var removedIds: [RemovedItem] = []

    /// A search's answer, `{"resultCount": N, "results": [...]}` like Apple's Search API (no `invalidIds`: a search
    /// has no ids to be invalid).
    package var searchJSON: JSONValue {
        .object([("resultCount", .int(Int64(items.count))), ("results", .array(items.map(\.value)))])
    }

    /// `{"resultCount": N, "results": [...], "invalidIds": [...]}` like Apple's Lookup API, plus
    /// `"removedIds": [...]` when any id not found was removed from the store.
    package var json: JSONValue {
        var fields: [(String, JSONValue)] = [
            ("resultCount", .int(Int64(items.count))),
            ("results", .array(items.map(\.value))),
            ("invalidIds", .array(invalidIds.map { .string($0) })),
        ]
        if !removedIds.isEmpty { fields.append(("removedIds", .array(removedIds.map(\.json)))) }
        return .object(fields)
    }
}

/// The price of one item in one storefront, in that storefront's currency.
package struct PriceRow: Sendable {
    /// EPF storefront id (143441 is the United States).
    package let storefrontId: Int64
    /// ISO 3166 alpha-2 lowercase (`us`), nil when the storefront is unknown.
    package let country: String?
    /// The storefront's name from the feed, when known.
    package let storefrontName: String?
    /// ISO 4217 code from the price row.
    package let currency: String
    /// The price as a plain decimal, e.g. "0.99" for the feed's `0.990` (`DecimalNumber.text`).
    package let retailPrice: String
    /// The amount rounded to the currency's minor digits as JSON number text ("0.99", "120").
    package let price: String
    /// "Free", "$0.99", "0,99 €", "¥120".
    package let formattedPrice: String

    /// `{"storefrontId", "country", "storefrontName", "currency", "price", "formattedPrice"}`.
    package var json: JSONValue {
        .object([
            ("storefrontId", .int(storefrontId)),
            ("country", country.map { .string($0) } ?? .null),
            ("storefrontName", storefrontName.map { .string($0) } ?? .null),
            ("currency", .string(currency)),
            ("price", .decimal(price)),
            ("formattedPrice", .string(formattedPrice)),
        ])
    }
}

/// Every storefront price of one item.
package struct PriceList {
    /// The Apple ID.
    package let id: Int64
    /// The kind of item the prices belong to.
    package let kind: EntityKind
    /// The item's title when its table is present.
    package let title: String?
    /// One row per storefront, sorted by country code.
    package let rows: [PriceRow]

    /// `{"id", "kind", "title", "prices": [...]}`.
    package var json: JSONValue {
        .object([
            ("id", .int(id)), ("kind", .string(kind.word)), ("title", title.map { .string($0) } ?? .null),
            ("prices", .array(rows.map(\.json))),
        ])
    }
}

/// One storefront of the `storefront` table.
package struct StorefrontRow: Sendable {
    /// EPF storefront id.
    package let storefrontId: Int64
    /// ISO 3166 alpha-2 lowercase, nil when the feed's code is not a known alpha-3 code.
    package let country: String?
    /// The feed's ISO 3166 alpha-3 code ("USA").
    package let countryCode: String
    /// The storefront's name.
    package let name: String

    /// `{"storefrontId", "country", "countryCode", "name"}`.
    package var json: JSONValue {
        .object([
            ("storefrontId", .int(storefrontId)), ("country", country.map { .string($0) } ?? .null),
            ("countryCode", .string(countryCode)), ("name", .string(name)),
        ])
    }
}

/// One genre, placed in the tree.
package struct GenreRow: Sendable {
    /// EPF genre id.
    package let id: Int64
    /// The parent genre, nil for a root.
    package let parentId: Int64?
    /// The genre's name.
    package let name: String
    /// 0 for roots, 1 for their children, ...
    package let depth: Int

    /// `{"genreId", "parentId", "name", "depth"}`.
    package var json: JSONValue {
        .object([
            ("genreId", .int(id)), ("parentId", parentId.map { .int($0) } ?? .null),
            ("name", .string(name)), ("depth", .int(Int64(depth))),
        ])
    }
}

/// An app of a genre with its rank in the popularity feed.
package struct GenreApp: Sendable {
    /// The app's Apple ID.
    package let id: Int64
    /// The app's title, nil when the application table lacks it.
    package let title: String?
    /// The rank in `application_popularity_per_genre` for the chosen storefront, nil when unranked.
    package let rank: Int64?
    /// Whether this is the app's primary genre.
    package let isPrimary: Bool

    /// `{"trackId", "trackName", "rank", "isPrimary"}`.
    package var json: JSONValue {
        .object([
            ("trackId", .int(id)), ("trackName", title.map { .string($0) } ?? .null),
            ("rank", rank.map { .int($0) } ?? .null), ("isPrimary", .bool(isPrimary)),
        ])
    }
}

/// The apps of one genre.
package struct GenreApps {
    /// The genre.
    package let genre: GenreRow
    /// The storefront whose ranks are shown (alpha-2), nil when no ranks apply.
    package let country: String?
    /// Number of apps in the genre (may exceed `apps.count`).
    package let total: Int64
    /// Ranked apps first (by rank), then the others by ID, at most the limit asked for.
    package let apps: [GenreApp]

    /// `{"genre": {...}, "country", "total", "apps": [...]}`.
    package var json: JSONValue {
        .object([
            ("genre", genre.json), ("country", country.map { .string($0) } ?? .null),
            ("total", .int(total)), ("apps", .array(apps.map(\.json))),
        ])
    }
}

/// The rows of a read-only SQL query.
package struct SQLResult {
    /// Result column names.
    package let columns: [String]
    /// Rows, each with one value per column.
    package let rows: [[SQLValue]]
    /// True when more rows existed than `maxRows` allowed.
    package let truncated: Bool

    /// An array of objects keyed by column name (integers as numbers, reals as numbers, blobs as hex strings).
    package var json: JSONValue {
        .array(rows.map { SQLResult.object(columns: columns, row: $0) })
    }

    /// One row as a JSON object.
    package static func object(columns: [String], row: [SQLValue]) -> JSONValue {
        .object(zip(columns, row).map { ($0, jsonValue($1)) })
    }

    /// One SQL value as JSON: NULL -> null, integer and real -> number, text -> string, blob -> hex string.
    package static func jsonValue(_ value: SQLValue) -> JSONValue {
        switch value {
        case .null: return .null
        case .integer(let number): return .int(number)
        case .real(let number): return .double(number)
        case .text(let text): return .string(text)
        case .blob(let bytes): return .string(hex(bytes))
        }
    }

    /// Lowercase hexadecimal of bytes.
    package static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
