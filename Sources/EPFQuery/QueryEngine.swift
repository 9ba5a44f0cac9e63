#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import EPFStore

/// Answers questions about an imported EPF database: lookups by ID or link, search, prices, genres, SQL.
///
/// Holds one read-only SQLite connection (opened `SQLITE_OPEN_READONLY` with an authorizer that denies
/// everything but reading) and a cache of prepared statements. Not `Sendable`: create one engine per
/// thread. Each public call runs in one read transaction, so it sees one consistent snapshot; small
/// tables (genres, storefronts, device and media types) are cached and reloaded when another
/// connection commits (`PRAGMA data_version`).
public final class QueryEngine {
    /// The database path the engine reads.
    public let databasePath: String
    let connection: SQLiteConnection
    private var statements: [String: Row] = [:]
    private var tables: Set<String> = []
    private var dataVersion: Int64?
    private var cache = SmallTables()
    private var exportDateCache: Int64??
    /// The app lookup statement, prepared on first use and dropped when the schema changes.
    private var applicationLookup: ApplicationStatement?
    private var transaction: TransactionStatements?
    /// True while `reading` runs its body: nested calls join the open transaction.
    private var inTransaction = false
    /// Whether to read lookup documents at all, and whether the stored ones are those of the current tables
    /// (checked whenever the data version changes).
    private let useLookupDocuments: Bool
    private var documentsCurrent = false
    /// Set while a `lookup(storedDocuments: true)` runs: default app items may then be stored documents.
    private var storedDocumentsAllowed = false
    private var rankFunctionRegistered = false
    /// Formatted prices by feed text and currency (see `formattedPrice`).
    private var priceFormats: [PriceKey: FormattedPrice] = [:]

    /// Opens the database read-only. With `useLookupDocuments` (the default) default app lookups are answered
    /// from the lookup documents the importer stores (see `LookupDocuments`) whenever they are those of the
    /// current tables.
    ///
    /// Throws `QueryError.databaseMissing` when no file is at the path, `QueryError.databaseEmpty` when it
    /// holds none of the EPF tables, and `QueryError.sqlite` when SQLite cannot read it.
    public init(databasePath: String, useLookupDocuments: Bool = true) throws {
        self.databasePath = databasePath
        self.useLookupDocuments = useLookupDocuments
        var info = stat()
        guard stat(databasePath, &info) == 0 else { throw QueryError.databaseMissing(path: databasePath) }
        guard info.st_size > 0 else { throw QueryError.databaseEmpty(path: databasePath) }
        // SQLite's memory statistics take a global mutex on every allocation (about 5% of a lookup); nothing
        // reads them. Takes effect only when this is the process's first connection.
        SQLiteConnection.disableMemoryStatistics()
        do {
            // Pages are read from one map of the whole file (SQLite's own map stops at 2 GiB in Debian's build).
            connection = try SQLiteConnection(path: databasePath, mode: .readOnly, vfs: MappedVFS.registeredName())
        } catch let error as SQLiteError {
            throw QueryError.sqlite(error)
        }
        do {
            // Set before the authorizer, which denies "PRAGMA x = y": memory-mapped reads avoid a pread per
            // page, and a larger cache keeps the upper levels of the big indexes.
            try connection.execute("PRAGMA mmap_size = 1099511627776; PRAGMA cache_size = -32768")
        } catch let error as SQLiteError {
            throw QueryError.sqlite(error)
        }
        connection.denyEverythingButReading()
        try loadTables()
        // EPF catalogue tables, or anything `epf import` loaded (EPF Flat and match tables too, which the
        // importer's bookkeeping tables vouch for).
        let imported = tables.contains("epf_tables")
            && tables.contains(where: { !$0.hasPrefix("epf_") && !$0.hasPrefix("sqlite_") })
        guard imported || !tables.isDisjoint(with: QueryEngine.contentTables) else {
            throw QueryError.databaseEmpty(path: databasePath)
        }
    }

    static let contentTables: Set<String> = [
        "application", "collection", "song", "video", "artist", "genre", "storefront", "application_price",
    ]

    /// Whether the database holds a table (as of the last change seen).
    public func hasTable(_ name: String) -> Bool { tables.contains(name) }

    // MARK: Lookup

    /// Looks up Apple IDs and store links in every entity table.
    ///
    /// Each argument is an ID or a link (see `StoreLink.parse`). A link's kind is tried alone first; a bare ID
    /// returns every kind that holds it (real Apple IDs are unique, so normally one). The country is `country`,
    /// else the link's country, else "us" for the price fields; with `allPrices` the item also lists its
    /// price in every storefront (`prices`) when no country was chosen. Arguments that are not IDs or
    /// match nothing go to `invalidIds`. With `storedDocuments`, default app items (no country, no language, not
    /// every price) may be the stored lookup document itself, a `JSONValue.serialized` value (what the HTTP API
    /// sends; it has no fields to read).
    /// Throws `QueryError.badArgument` for an unknown country or malformed language code.
    public func lookup(_ arguments: [String], country: String?, language: String?,
                       allPrices: Bool = false, storedDocuments: Bool = false) throws -> LookupResult {
        let country = try normalizedCountry(country)
        let language = try normalizedLanguage(language)
        storedDocumentsAllowed = storedDocuments
        defer { storedDocumentsAllowed = false }
        return try reading {
            var items: [LookupItem] = []
            var invalid: [String] = []
            for argument in arguments {
                guard let link = StoreLink.parse(argument) else {
                    invalid.append(argument)
                    continue
                }
                let chosen = country ?? link.country
                let found = try find(link, country: chosen, language: language, allPrices: allPrices && chosen == nil)
                if found.isEmpty { invalid.append(argument) } else { items += found }
            }
            return LookupResult(items: items, invalidIds: invalid)
        }
    }

    /// One entry of one kind as an Apple Lookup result object, nil when that table lacks the ID.
    ///
    /// `.album` and `.ebook` both read `collection`; the object's `kind` says which it is.
    /// Throws `QueryError.badArgument` for an unknown country or malformed language code.
    public func entity(kind: EntityKind, id: Int64, country: String?, language: String?) throws -> JSONValue? {
        let country = try normalizedCountry(country)
        let language = try normalizedLanguage(language)
        return try reading {
            try item(kind: kind, id: id, country: country, language: language, allPrices: false)?.value
        }
    }

    /// The same object as `entity(kind:id:country:language:)`, serialized as JSON: what `GET /v1/apps/{id}`
    /// sends. A default app lookup (no country, no language) is one read of its stored lookup document when
    /// the documents are those of the current tables; everything else is built from the tables.
    public func entityJSON(kind: EntityKind, id: Int64, country: String?, language: String?) throws -> [UInt8]? {
        let normalized = try normalizedCountry(country)
        return try reading {
            if kind == .software, language == nil, documentsCurrent {
                guard let normalized else { return try storedDocument(id) }
                switch try storedDocument(id, country: normalized) {
                case .document(let body, _): return body
                case .missing: return nil
                case .unusable: break
                }
            }
            return try entity(kind: kind, id: id, country: country, language: language)?.serialized()
        }
    }

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
    private func storedDocument(_ id: Int64, country: String) throws -> CountryDocument {
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
        let priced = try addPrice(&priceFields, table: "application_price", id: id, country: country,
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

    private static let priceKey = Array(#","price":"#.utf8)
    private static let formattedPriceKey = Array(#","formattedPrice":""#.utf8)
    private static let currencyKey = Array(#","currency":""#.utf8)
    private static let viewURLKey = Array(#","trackViewUrl":""#.utf8)

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
    private func storedDocument(_ id: Int64) throws -> [UInt8]? {
        let row = try prepared("SELECT body FROM \(LookupDocuments.table) WHERE application_id = ?1")
        defer { row.statement.reset() }
        try row.statement.bind(id, at: 1)
        guard try row.statement.step(), case .blob(let body) = row.statement.value(at: 0) else { return nil }
        return body
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

    /// Resolves a store link or ID to `{"id": 364709193, "kind": "software", "country": "us"}`.
    ///
    /// The kind is the one found in the database. Returns nil when the text is not a link or ID, or the ID
    /// is in no table.
    public func resolve(_ link: String) throws -> JSONValue? {
        guard let parsed = StoreLink.parse(link) else { return nil }
        return try reading {
            guard let kind = try kinds(of: parsed).first else { return nil }
            return .object([
                ("id", .int(parsed.id)), ("kind", .string(kind.rawValue)),
                ("country", parsed.country.map { .string($0) } ?? .null),
            ])
        }
    }

    private func find(_ link: StoreLink, country: String?, language: String?,
                      allPrices: Bool) throws -> [LookupItem] {
        var found: [LookupItem] = []
        if link.kind == nil || link.kind == .software, language == nil, !allPrices,
           storedDocumentsAllowed, documentsCurrent,
           let app = try application(link.id, country: country, language: nil, allPrices: false) {
            // An app lookup answered by its stored document: no need to ask the application table first.
            found.append(app)
            if link.kind == .software { return found }
            for kind in try kinds(of: link, except: .software) {
                if let item = try item(kind: kind, id: link.id, country: country, language: language,
                                       allPrices: allPrices) {
                    found.append(item)
                }
            }
            return found
        }
        for kind in try kinds(of: link) {
            if let item = try item(kind: kind, id: link.id, country: country, language: language,
                                   allPrices: allPrices) {
                found.append(item)
            }
        }
        return found
    }

    /// The kinds whose tables hold the ID: the link's kind alone when it matches, else every kind found
    /// (leaving out `except`, already looked at by the caller).
    private func kinds(of link: StoreLink, except: EntityKind? = nil) throws -> [EntityKind] {
        if let kind = link.kind, kind != except, let actual = try exists(kind.table, id: link.id) {
            return [actual]
        }
        var result: [EntityKind] = []
        for table in ["application", "collection", "song", "video", "artist"]
        where !(table == "application" && except == .software) {
            if let kind = try exists(table, id: link.id) { result.append(kind) }
        }
        return result
    }

    /// The kind of the row with that ID in `table`, nil when absent.
    private func exists(_ table: String, id: Int64) throws -> EntityKind? {
        guard tables.contains(table) else { return nil }
        let key = Self.idColumn(table)
        if table == "collection" {
            let row = try prepared("SELECT media_type_id FROM collection WHERE collection_id = ?1")
            defer { row.statement.reset() }
            try row.statement.bind(id, at: 1)
            guard try row.statement.step() else { return nil }
            return collectionKind(mediaType: row.statement.int64(at: 0))
        }
        let row = try prepared("SELECT 1 FROM \(table) WHERE \(key) = ?1")
        defer { row.statement.reset() }
        try row.statement.bind(id, at: 1)
        guard try row.statement.step() else { return nil }
        switch table {
        case "application": return .software
        case "song": return .song
        case "video": return .video
        default: return .artist
        }
    }

    static func idColumn(_ table: String) -> String {
        table == "application" ? "application_id" : table + "_id"
    }

    private func item(kind: EntityKind, id: Int64, country: String?, language: String?,
                      allPrices: Bool) throws -> LookupItem? {
        switch kind {
        case .software: return try application(id, country: country, language: language, allPrices: allPrices)
        case .album, .ebook: return try collection(id, country: country, allPrices: allPrices)
        case .song: return try song(id, country: country, allPrices: allPrices)
        case .video: return try video(id, country: country, allPrices: allPrices)
        case .artist: return try artist(id)
        }
    }

    // MARK: Entities

    private func application(_ id: Int64, country: String?, language: String?,
                             allPrices: Bool) throws -> LookupItem? {
        if language == nil, !allPrices, storedDocumentsAllowed, documentsCurrent {
            // The stored document is this very object, serialized (see `LookupDocuments`), re-targeted to the
            // country when one is given. Without a country, whether it shows a price is not known without
            // parsing it, so the item names no price country.
            guard let country else {
                return try storedDocument(id).map {
                    LookupItem(id: id, kind: .software, value: .serialized($0), country: nil)
                }
            }
            switch try storedDocument(id, country: country) {
            case .document(let body, let priced):
                return LookupItem(id: id, kind: .software, value: .serialized(body), country: priced ? country : nil)
            case .missing: return nil
            case .unusable: break
            }
        }
        guard let app = try applicationStatement() else { return nil }
        let statement = app.statement
        defer { statement.reset() }
        let priceCountry = country ?? "us"
        try statement.bind(id, at: 1)
        if app.hasPrices {
            if let storefront = try smallTables().storefrontByCountry[priceCountry] {
                try statement.bind(storefront, at: 2)
            } else {
                try statement.bindNull(at: 2)
            }
        }
        guard try statement.step() else { return nil }
        typealias Column = ApplicationStatement.Column
        func text(_ column: Column) -> String? { statement.text(at: column.rawValue) }
        var fields = Fields()
        fields.add("wrapperType", "software")
        fields.add("kind", "software")
        fields.add("trackId", .int(id))
        var title = text(.title)
        var description = text(.description)
        var releaseNotes: String?
        var languageUsed: String?
        if let language, let detail = try applicationDetail(id, language: language) {
            title = detail.title ?? title
            description = detail.description ?? description
            releaseNotes = detail.releaseNotes
            languageUsed = detail.code
        }
        fields.add("trackName", title)
        if app.hasDeveloper, let artistId = statement.int64(at: Column.artistId.rawValue) {
            fields.add("artistId", .int(artistId))
            fields.add("artistViewUrl", text(.artistViewUrl))
        }
        fields.add("artistName", text(.artistName))
        fields.add("sellerName", text(.sellerName))
        fields.add("sellerUrl", text(.companyUrl))
        fields.add("trackViewUrl", text(.viewUrl).map { Self.viewURL($0, country: country) })
        let small = text(.artworkSmall)
        let large = text(.artworkLarge)
        fields.add("artworkUrl60", small ?? large)
        fields.add("artworkUrl100", small ?? large)
        fields.add("artworkUrl512", large ?? small)
        var usedCountry: String?
        if let retail = text(.retailPrice), let price = formattedPrice(retail, currency: text(.currency) ?? "") {
            fields.add("price", .decimal(price.number))
            fields.add("formattedPrice", price.formatted)
            fields.add("currency", price.currency)
            usedCountry = priceCountry
        }
        let genres = statement.text(at: Column.genres.rawValue).map(Self.primaryFirst) ?? []
        if let primary = genres.first {
            let names = try smallTables().genres
            fields.add("primaryGenreName", names[primary]?.name ?? String(primary))
            fields.add("primaryGenreId", .int(primary))
            fields.add("genres", .array(genres.map { .string(names[$0]?.name ?? String($0)) }))
            fields.add("genreIds", .array(genres.map { .string(String($0)) }))
        }
        fields.add("releaseDate", text(.releaseDate).map(Self.appleDate))
        fields.add("version", text(.version))
        switch statement.value(at: Column.downloadSize.rawValue) {
        case .integer(let number): fields.add("fileSizeBytes", String(number))
        case .text(let digits): fields.add("fileSizeBytes", Int64(digits).map { String($0) })
        default: break
        }
        if let age = text(.recommendedAge) {
            fields.add("contentAdvisoryRating", age)
            fields.add("trackContentRating", age)
        }
        fields.add("description", description)
        fields.add("releaseNotes", releaseNotes)
        fields.add("languageCode", languageUsed)
        fields.add("copyright", text(.copyright))
        fields.add("supportUrl", text(.supportUrl))
        if app.hasDevices {
            let names = try smallTables().deviceTypes
            let devices = statement.text(at: Column.devices.rawValue).map(Self.integers) ?? []
            fields.add("supportedDevices", .array(devices.map { .string(names[$0] ?? String($0)) }))
        }
        if app.hasLanguages {
            var codes: [String] = []
            if let joined = statement.text(at: Column.languages.rawValue) {
                // EPF fields never hold 0x01 (the feed's field separator), so it separates the codes.
                codes = joined.split(separator: "\u{1}", omittingEmptySubsequences: false).map { $0.uppercased() }
                codes.sort()
            }
            fields.add("languageCodesISO2A", .array(codes.map { .string($0) }))
        }
        if allPrices { fields.add("prices", .array(try priceRows("application_price", id: id).map(\.json))) }
        return LookupItem(id: id, kind: .software, value: fields.json, country: usedCountry)
    }

    /// The statement that reads an app and everything its Lookup object shows in one step, or nil without
    /// an `application` table. Built once for the tables and columns present (see `ApplicationStatement`).
    private func applicationStatement() throws -> ApplicationStatement? {
        if let applicationLookup { return applicationLookup }
        guard tables.contains("application") else { return nil }
        let columns = try columnNames("application")
        do {
            let app = try ApplicationStatement(connection: connection, columns: columns, tables: tables)
            applicationLookup = app
            return app
        } catch let error as SQLiteError {
            throw QueryError.sqlite(error)
        }
    }

    private func columnNames(_ table: String) throws -> Set<String> {
        do {
            let rows = try connection.query("SELECT name FROM pragma_table_info(?1)", [.text(table)])
            return Set(rows.compactMap { row -> String? in
                if case .text(let name) = row.first { return name.lowercased() }
                return nil
            })
        } catch let error as SQLiteError {
            throw QueryError.sqlite(error)
        }
    }

    /// Comma-separated integers (as `group_concat` writes them) in order; anything else is skipped.
    /// Genre ids from a list like "6016,6014p" ('p' marks a primary genre): primary genres first, each part in
    /// ascending order.
    static func primaryFirst(_ text: String) -> [Int64] {
        var primary: [Int64] = []
        var others: [Int64] = []
        for part in text.split(separator: ",") {
            if part.hasSuffix("p") {
                if let id = Int64(part.dropLast()) { primary.append(id) }
            } else if let id = Int64(part) {
                others.append(id)
            }
        }
        return primary.sorted() + others.sorted()
    }

    static func integers(_ text: String) -> [Int64] {
        var result: [Int64] = []
        var value: Int64 = 0
        var negative = false
        var digits = 0
        func flush() {
            if digits > 0 { result.append(negative ? -value : value) }
            value = 0
            negative = false
            digits = 0
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                value = value &* 10 &+ Int64(byte - UInt8(ascii: "0"))
                digits += 1
            case UInt8(ascii: "-"): negative = true
            default: flush()
            }
        }
        flush()
        return result
    }

    /// The JSON number, display text and upper-case currency of a price, nil when the text is no decimal.
    ///
    /// Prices repeat (a few tiers in a few currencies), so results are kept: formatting costs microseconds.
    private func formattedPrice(_ text: String, currency code: String) -> FormattedPrice? {
        let key = PriceKey(text: text, currency: code)
        if let cached = priceFormats[key] { return cached }
        let currency = code.uppercased()
        let format = CurrencyFormat.forCode(currency)
        guard let number = format.jsonNumber(text), let formatted = format.format(text) else { return nil }
        let price = FormattedPrice(number: number, formatted: formatted, currency: currency)
        if priceFormats.count >= 4096 { priceFormats.removeAll(keepingCapacity: true) }
        priceFormats[key] = price
        return price
    }

    private func collection(_ id: Int64, country: String?, allPrices: Bool) throws -> LookupItem? {
        guard tables.contains("collection") else { return nil }
        let row = try prepared("SELECT * FROM collection WHERE collection_id = ?1")
        defer { row.statement.reset() }
        try row.statement.bind(id, at: 1)
        guard try row.statement.step() else { return nil }
        let kind = collectionKind(mediaType: row.int("media_type_id"))
        var fields = Fields()
        let artistId = try firstID("SELECT artist_id FROM artist_collection WHERE collection_id = ?1 LIMIT 1",
                                   table: "artist_collection", id: id)
        var priceCountry: String?
        if kind == .ebook {
            fields.add("wrapperType", "ebook")
            fields.add("kind", "ebook")
            fields.add("trackId", .int(id))
            fields.add("trackName", row.text("name"))
            fields.add("artistId", artistId.map { .int($0) })
            fields.add("artistName", row.text("artist_display_name"))
            fields.add("trackViewUrl", row.text("view_url").map { Self.viewURL($0, country: country) })
            fields.add("artworkUrl100", row.text("artwork_url"))
            priceCountry = try addPrice(&fields, table: "collection_price", id: id, country: country, name: "price")
        } else {
            fields.add("wrapperType", "collection")
            fields.add("collectionType", row.int("is_compilation") == 1 ? "Compilation" : "Album")
            fields.add("collectionId", .int(id))
            fields.add("artistId", artistId.map { .int($0) })
            fields.add("collectionName", row.text("name"))
            fields.add("artistName", row.text("artist_display_name"))
            fields.add("collectionViewUrl", row.text("view_url").map { Self.viewURL($0, country: country) })
            fields.add("artworkUrl100", row.text("artwork_url"))
            priceCountry = try addPrice(&fields, table: "collection_price", id: id, country: country,
                                        name: "collectionPrice")
            if tables.contains("collection_song") {
                let count = try prepared("SELECT count(*) FROM collection_song WHERE collection_id = ?1")
                defer { count.statement.reset() }
                try count.statement.bind(id, at: 1)
                if try count.statement.step(), let number = count.statement.int64(at: 0) {
                    fields.add("trackCount", .int(number))
                }
            }
        }
        fields.add("copyright", row.text("copyright"))
        fields.add("releaseDate", (row.text("itunes_release_date") ?? row.text("original_release_date"))
            .map(Self.appleDate))
        fields.add("label", row.text("label_studio"))
        if allPrices { fields.add("prices", .array(try priceRows("collection_price", id: id).map(\.json))) }
        return LookupItem(id: id, kind: kind, value: fields.json, country: priceCountry)
    }

    private func song(_ id: Int64, country: String?, allPrices: Bool) throws -> LookupItem? {
        guard tables.contains("song") else { return nil }
        let row = try prepared("SELECT * FROM song WHERE song_id = ?1")
        defer { row.statement.reset() }
        try row.statement.bind(id, at: 1)
        guard try row.statement.step() else { return nil }
        var fields = Fields()
        fields.add("wrapperType", "track")
        fields.add("kind", "song")
        fields.add("trackId", .int(id))
        let artistId = try firstID("SELECT artist_id FROM artist_song WHERE song_id = ?1 LIMIT 1",
                                   table: "artist_song", id: id)
        fields.add("artistId", artistId.map { .int($0) })
        let collectionId = try firstID("SELECT collection_id FROM collection_song WHERE song_id = ?1 LIMIT 1",
                                       table: "collection_song", id: id)
        fields.add("collectionId", collectionId.map { .int($0) })
        fields.add("trackName", row.text("name"))
        fields.add("artistName", row.text("artist_display_name"))
        fields.add("collectionName", row.text("collection_display_name"))
        fields.add("trackViewUrl", row.text("view_url").map { Self.viewURL($0, country: country) })
        fields.add("previewUrl", row.text("preview_url"))
        let priceCountry = try addPrice(&fields, table: "song_price", id: id, country: country, name: "trackPrice")
        fields.add("releaseDate", (row.text("itunes_release_date") ?? row.text("original_release_date"))
            .map(Self.appleDate))
        fields.add("trackTimeMillis", row.int("track_length").map { .int($0) })
        fields.add("copyright", row.text("copyright"))
        if allPrices { fields.add("prices", .array(try priceRows("song_price", id: id).map(\.json))) }
        return LookupItem(id: id, kind: .song, value: fields.json, country: priceCountry)
    }

    private func video(_ id: Int64, country: String?, allPrices: Bool) throws -> LookupItem? {
        guard tables.contains("video") else { return nil }
        let row = try prepared("SELECT * FROM video WHERE video_id = ?1")
        defer { row.statement.reset() }
        try row.statement.bind(id, at: 1)
        guard try row.statement.step() else { return nil }
        var fields = Fields()
        fields.add("wrapperType", "track")
        fields.add("kind", try videoKind(mediaType: row.int("media_type_id")))
        fields.add("trackId", .int(id))
        fields.add("trackName", row.text("name"))
        fields.add("artistName", row.text("artist_display_name"))
        fields.add("collectionName", row.text("collection_display_name"))
        fields.add("trackViewUrl", row.text("view_url").map { Self.viewURL($0, country: country) })
        fields.add("artworkUrl100", row.text("artwork_url"))
        let priceCountry = try addPrice(&fields, table: "video_price", id: id, country: country, name: "trackPrice")
        fields.add("releaseDate", (row.text("itunes_release_date") ?? row.text("original_release_date"))
            .map(Self.appleDate))
        fields.add("trackTimeMillis", row.int("track_length").map { .int($0) })
        fields.add("shortDescription", row.text("short_description"))
        fields.add("longDescription", row.text("long_description"))
        fields.add("copyright", row.text("copyright"))
        if allPrices { fields.add("prices", .array(try priceRows("video_price", id: id).map(\.json))) }
        return LookupItem(id: id, kind: .video, value: fields.json, country: priceCountry)
    }

    private func artist(_ id: Int64) throws -> LookupItem? {
        guard tables.contains("artist") else { return nil }
        let row = try prepared("SELECT * FROM artist WHERE artist_id = ?1")
        defer { row.statement.reset() }
        try row.statement.bind(id, at: 1)
        guard try row.statement.step() else { return nil }
        var fields = Fields()
        fields.add("wrapperType", "artist")
        fields.add("artistType", try artistTypeName(row.int("artist_type_id")) ?? "Artist")
        fields.add("artistName", row.text("name"))
        fields.add("artistLinkUrl", row.text("view_url"))
        fields.add("artistId", .int(id))
        return LookupItem(id: id, kind: .artist, value: fields.json, country: nil)
    }

    // MARK: Entity helpers

    private struct Detail {
        var code: String
        var title: String?
        var description: String?
        var releaseNotes: String?
    }

    private func applicationDetail(_ id: Int64, language: String) throws -> Detail? {
        guard tables.contains("application_detail") else { return nil }
        let row = try prepared("""
            SELECT language_code, title, description, release_notes FROM application_detail
            WHERE application_id = ?1 AND lower(substr(language_code, 1, length(?2))) = ?2
              AND (length(language_code) = length(?2) OR substr(language_code, length(?2) + 1, 1) IN ('-', '_'))
            ORDER BY length(language_code), language_code LIMIT 1
            """)
        defer { row.statement.reset() }
        try row.statement.bind(id, at: 1)
        try row.statement.bind(language, at: 2)
        guard try row.statement.step() else { return nil }
        return Detail(code: row.statement.text(at: 0) ?? language, title: row.statement.text(at: 1),
                      description: row.statement.text(at: 2), releaseNotes: row.statement.text(at: 3))
    }

    private func firstID(_ sql: String, table: String, id: Int64) throws -> Int64? {
        guard tables.contains(table) else { return nil }
        let row = try prepared(sql)
        defer { row.statement.reset() }
        try row.statement.bind(id, at: 1)
        return try row.statement.step() ? row.statement.int64(at: 0) : nil
    }

    /// Adds `<name>`, `formattedPrice` and `currency` for the storefront of `country` (default "us").
    /// Returns the country used, nil when no price applied.
    private func addPrice(_ fields: inout Fields, table: String, id: Int64, country: String?,
                          name: String) throws -> String? {
        guard tables.contains(table) else { return nil }
        let country = country ?? "us"
        guard let storefront = try smallTables().storefrontByCountry[country] else { return nil }
        let row = try prepared("""
            SELECT retail_price, currency_code FROM \(table) WHERE \(Self.idColumn(String(table.dropLast(6))))
                = ?1 AND storefront_id = ?2
            """)
        defer { row.statement.reset() }
        try row.statement.bind(id, at: 1)
        try row.statement.bind(storefront, at: 2)
        guard try row.statement.step(), let text = row.statement.text(at: 0),
              let price = formattedPrice(text, currency: row.statement.text(at: 1) ?? "") else { return nil }
        fields.add(name, .decimal(price.number))
        fields.add("formattedPrice", price.formatted)
        fields.add("currency", price.currency)
        return country
    }

    private func priceRows(_ table: String, id: Int64) throws -> [PriceRow] {
        guard tables.contains(table) else { return [] }
        let storefronts = try smallTables().storefronts
        let row = try prepared("""
            SELECT storefront_id, retail_price, currency_code FROM \(table)
            WHERE \(Self.idColumn(String(table.dropLast(6)))) = ?1
            """)
        defer { row.statement.reset() }
        try row.statement.bind(id, at: 1)
        var rows: [PriceRow] = []
        while try row.statement.step() {
            guard let storefrontId = row.statement.int64(at: 0), let text = row.statement.text(at: 1) else {
                continue
            }
            let currency = (row.statement.text(at: 2) ?? "").uppercased()
            let format = CurrencyFormat.forCode(currency)
            let storefront = storefronts[storefrontId]
            rows.append(PriceRow(storefrontId: storefrontId, country: storefront?.country,
                                 storefrontName: storefront?.name, currency: currency, retailPrice: text,
                                 price: format.jsonNumber(text) ?? text,
                                 formattedPrice: format.format(text) ?? text))
        }
        return rows.sorted { ($0.country ?? "~", $0.storefrontId) < ($1.country ?? "~", $1.storefrontId) }
    }

    private func collectionKind(mediaType: Int64?) -> EntityKind {
        guard let mediaType, let name = try? smallTables().mediaTypes[mediaType] else { return .album }
        return name.lowercased().contains("book") ? .ebook : .album
    }

    private func videoKind(mediaType: Int64?) throws -> String {
        guard let mediaType, let name = try smallTables().mediaTypes[mediaType]?.lowercased() else {
            return "feature-movie"
        }
        if name.contains("music") { return "music-video" }
        if name.contains("tv") || name.contains("episode") { return "tv-episode" }
        return "feature-movie"
    }

    private func artistTypeName(_ id: Int64?) throws -> String? {
        guard let id, tables.contains("artist_type") else { return nil }
        let row = try prepared("SELECT name FROM artist_type WHERE artist_type_id = ?1")
        defer { row.statement.reset() }
        try row.statement.bind(id, at: 1)
        return try row.statement.step() ? row.statement.text(at: 0) : nil
    }

    /// A feed date ("2012-09-25", "2012", "2012-09-25T10:00:00Z") in Apple's form "2012-09-25T00:00:00Z".
    static func appleDate(_ text: String) -> String {
        let utf8 = text.utf8
        guard utf8.count == 4 || utf8.count == 7 || utf8.count == 10 else { return text }
        var bytes: (UInt64, UInt64) = (0, 0)
        let count = utf8.count
        withUnsafeMutableBytes(of: &bytes) { $0.copyBytes(from: utf8) }
        return withUnsafeBytes(of: bytes) { bytes in
            func digits(_ range: Range<Int>) -> Bool {
                range.upperBound <= count && bytes[range].allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
            }
            if count == 4, digits(0..<4) { return text + "-01-01T00:00:00Z" }
            if count == 7, digits(0..<4), bytes[4] == UInt8(ascii: "-"), digits(5..<7) {
                return text + "-01T00:00:00Z"
            }
            if count == 10, digits(0..<4), digits(5..<7), digits(8..<10) { return text + "T00:00:00Z" }
            return text
        }
    }

    /// A view URL with the storefront country put in (`http://itunes.apple.com/app/x/id1` + "us" ->
    /// `http://itunes.apple.com/us/app/x/id1`); unchanged when country is nil or the URL has no host part.
    static func viewURL(_ url: String, country: String?) -> String {
        guard let country, let scheme = url.range(of: "://") else { return url }
        let afterScheme = url[scheme.upperBound...]
        guard let slash = afterScheme.firstIndex(of: "/") else { return url }
        let path = afterScheme[afterScheme.index(after: slash)...]
        let firstSegment = path.prefix { $0 != "/" && $0 != "?" }
        if CountryCodes.isAlpha2(String(firstSegment)) {
            return String(url[..<path.startIndex]) + country + String(path.dropFirst(firstSegment.count))
        }
        return String(url[..<path.startIndex]) + country + "/" + String(path)
    }

    // MARK: Search

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
            let probe = try prepared("""
                SELECT rowid FROM epf_search WHERE epf_search MATCH ?1 \(filter) LIMIT ?2
                """)
            let wholeWords = String(match.dropLast())
            var wholeCount = 0
            do {
                defer { probe.statement.reset() }
                try probe.statement.bind(wholeWords, at: 1)
                try probe.statement.bind(Int64(Self.searchWindow), at: 2)
                if let entity { try probe.statement.bind(entity.rawValue, at: 3) }
                while try probe.statement.step() { wholeCount += 1 }
            }
            let expression = wholeCount >= Self.searchWindow ? wholeWords : match
            // Ranks only (no content read): `kind` and `id` are read below for the winners alone.
            let ranked = try prepared("""
                SELECT rowid, epf_rank(epf_search, 2, ?2, 0.0, 0.0, 10.0, 1.0) FROM epf_search
                WHERE epf_search MATCH ?1 \(filter) LIMIT ?4
                """)
            try ranked.statement.bind(expression, at: 1)
            let exact = SearchIndex.searchText(String(term.trimmingASCIIWhitespace())).lowercased()
            try ranked.statement.bind(exact, at: 2)
            if let entity { try ranked.statement.bind(entity.rawValue, at: 3) }
            try ranked.statement.bind(Int64(Self.searchWindow), at: 4)
            var scored: [(rank: Double, rowid: Int64)] = []
            do {
                defer { ranked.statement.reset() }
                while try ranked.statement.step() {
                    guard let rowid = ranked.statement.int64(at: 0),
                          case .real(let rank) = ranked.statement.value(at: 1) else { continue }
                    scored.append((rank, rowid))
                }
            }
            scored.sort { $0.rank != $1.rank ? $0.rank < $1.rank : $0.rowid < $1.rowid }
            let entry = try prepared("SELECT kind, id FROM epf_search WHERE rowid = ?1")
            var items: [LookupItem] = []
            for hit in scored.prefix(limit) {
                try entry.statement.bind(hit.rowid, at: 1)
                var found: (EntityKind, Int64)?
                do {
                    defer { entry.statement.reset() }
                    if try entry.statement.step(), let kindText = entry.statement.text(at: 0),
                       let kind = EntityKind(rawValue: kindText), let id = entry.statement.int64(at: 1) {
                        found = (kind, id)
                    }
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

    // MARK: Prices, storefronts, genres

    /// The price of an item in every storefront, nil when the ID is in no table and has no prices.
    ///
    /// Tries apps, then collections, songs and videos. Rows are sorted by country code.
    public func prices(id: Int64) throws -> PriceList? {
        try reading {
            let sources: [(String, String)] = [("application", "application_price"),
                                               ("collection", "collection_price"), ("song", "song_price"),
                                               ("video", "video_price")]
            var fallback: (EntityKind, String?)?
            for (table, priceTable) in sources {
                let kind = try exists(table, id: id)
                let rows = try priceRows(priceTable, id: id)
                if kind != nil || !rows.isEmpty {
                    let resolved = kind ?? (table == "application" ? .software : table == "collection" ? .album
                                            : table == "song" ? .song : .video)
                    let title = try self.title(table, id: id)
                    if !rows.isEmpty { return PriceList(id: id, kind: resolved, title: title, rows: rows) }
                    if fallback == nil { fallback = (resolved, title) }
                }
            }
            if let fallback { return PriceList(id: id, kind: fallback.0, title: fallback.1, rows: []) }
            if let kind = try exists("artist", id: id) {
                return PriceList(id: id, kind: kind, title: try title("artist", id: id), rows: [])
            }
            return nil
        }
    }

    private func title(_ table: String, id: Int64) throws -> String? {
        guard tables.contains(table) else { return nil }
        let column = table == "application" ? "title" : "name"
        let row = try prepared("SELECT \(column) FROM \(table) WHERE \(Self.idColumn(table)) = ?1")
        defer { row.statement.reset() }
        try row.statement.bind(id, at: 1)
        return try row.statement.step() ? row.statement.text(at: 0) : nil
    }

    /// Every storefront, sorted by country code. Empty when the storefront table is absent.
    public func storefronts() throws -> [StorefrontRow] {
        try reading {
            try smallTables().storefronts.values.sorted {
                ($0.country ?? "~" + $0.countryCode, $0.storefrontId) < ($1.country ?? "~" + $1.countryCode,
                                                                          $1.storefrontId)
            }
        }
    }

    /// The genre tree in depth-first order, children sorted by name. Empty when the genre table is absent.
    public func genres() throws -> [GenreRow] {
        try reading { try genreTree() }
    }

    /// The apps of a genre (from `genre_application`, plus any app ranked in it), ranked by
    /// `application_popularity_per_genre` in the storefront of `country` (default "us") when that table is
    /// present, then the unranked ones by ID; nil when the genre does not exist.
    ///
    /// Throws `QueryError.badArgument` for an unknown country or a limit outside 1...100000.
    public func genreApps(id: Int64, country: String?, limit: Int) throws -> GenreApps? {
        guard (1...100_000).contains(limit) else {
            throw QueryError.badArgument(name: "limit", message: "must be from 1 to 100000, got \(limit)")
        }
        let country = try normalizedCountry(country) ?? "us"
        return try reading {
            guard let genre = try genreTree().first(where: { $0.id == id }) else { return nil }
            let storefront = try smallTables().storefrontByCountry[country]
            let ranked = tables.contains("application_popularity_per_genre") && storefront != nil
            let member = tables.contains("genre_application")
            guard ranked || member else { return GenreApps(genre: genre, country: nil, total: 0, apps: []) }
            // Members: the genre's apps, plus apps ranked in it (the root genre 36 ranks apps overall).
            var sources: [String] = []
            if member {
                sources.append("SELECT application_id, is_primary FROM genre_application WHERE genre_id = ?1")
            }
            if ranked {
                sources.append("""
                    SELECT application_id, 0 FROM application_popularity_per_genre
                    WHERE storefront_id = ?2 AND genre_id = ?1
                    """)
            }
            let titled = tables.contains("application")
            let sql = """
                WITH members AS (
                    SELECT application_id, max(is_primary) AS is_primary
                    FROM (\(sources.joined(separator: " UNION ALL "))) GROUP BY application_id
                )
                SELECT m.application_id, \(titled ? "a.title" : "NULL"),
                       \(ranked ? "p.application_rank" : "NULL") AS rank, m.is_primary,
                       (SELECT count(*) FROM members) AS total
                FROM members m
                \(titled ? "LEFT JOIN application a ON a.application_id = m.application_id" : "")
                \(ranked ? """
                    LEFT JOIN application_popularity_per_genre p ON p.storefront_id = ?2
                        AND p.genre_id = ?1 AND p.application_id = m.application_id
                    """ : "")
                ORDER BY rank IS NULL, rank, m.application_id LIMIT ?3
                """
            let row = try prepared(sql)
            defer { row.statement.reset() }
            try row.statement.bind(id, at: 1)
            if ranked, let storefront { try row.statement.bind(storefront, at: 2) }
            try row.statement.bind(Int64(limit), at: 3)
            var apps: [GenreApp] = []
            var total: Int64 = 0
            while try row.statement.step() {
                guard let appId = row.statement.int64(at: 0) else { continue }
                apps.append(GenreApp(id: appId, title: row.statement.text(at: 1), rank: row.statement.int64(at: 2),
                                     isPrimary: row.statement.int64(at: 3) == 1))
                total = row.statement.int64(at: 4) ?? 0
            }
            return GenreApps(genre: genre, country: ranked ? country : nil, total: total, apps: apps)
        }
    }

    private func genreTree() throws -> [GenreRow] {
        let genres = try smallTables().genres
        var children: [Int64: [Int64]] = [:]
        var roots: [Int64] = []
        for (id, genre) in genres {
            if let parent = genre.parent, parent != id, genres[parent] != nil {
                children[parent, default: []].append(id)
            } else {
                roots.append(id)
            }
        }
        func byName(_ a: Int64, _ b: Int64) -> Bool {
            let left = genres[a]?.name ?? "", right = genres[b]?.name ?? ""
            return left == right ? a < b : left < right
        }
        var result: [GenreRow] = []
        var visited = Set<Int64>()
        func visit(_ id: Int64, depth: Int) {
            guard visited.insert(id).inserted, let genre = genres[id] else { return }
            result.append(GenreRow(id: id, parentId: genre.parent, name: genre.name, depth: depth))
            for child in (children[id] ?? []).sorted(by: byName) { visit(child, depth: depth + 1) }
        }
        for root in roots.sorted(by: byName) { visit(root, depth: 0) }
        // Genres caught in a parent cycle are not reachable from a root: list them at the top level.
        for id in genres.keys.sorted() where !visited.contains(id) { visit(id, depth: 0) }
        return result
    }

    /// The newest `export_date` (ms since 1970 UTC) over the catalogue tables, for HTTP `Last-Modified`.
    ///
    /// Reads the importer's summary (`epf_tables`) when present; otherwise scans the catalogue tables (not
    /// prices or details) once. Cached until another connection commits. Nil when no table has rows.
    public func dataExportDate() throws -> Int64? {
        try reading {
            if let cached = exportDateCache { return cached }
            var newest: Int64?
            if tables.contains("epf_tables"),
               case .integer(let number) = try connection.scalar("SELECT max(export_date) FROM epf_tables") {
                // The importer's per-table summary: no need to scan the tables themselves.
                exportDateCache = .some(number)
                return number
            }
            for table in ["application", "collection", "song", "video", "artist", "storefront", "genre"]
            where tables.contains(table) {
                guard let value = try connection.scalar("SELECT max(export_date) FROM \(table)"),
                      case .integer(let number) = value else { continue }
                newest = max(newest ?? number, number)
            }
            exportDateCache = .some(newest)
            return newest
        }
    }

    // MARK: SQL

    /// Runs one read-only SQL statement and returns up to `maxRows` rows.
    ///
    /// Throws `QueryError.refused` for anything that is not a single read-only statement (writes, ATTACH,
    /// `PRAGMA x = y`, VACUUM, several statements): the connection is read-only and the authorizer denies
    /// them, so nothing changes. Throws `QueryError.sqlite` for syntax errors and missing tables.
    public func sql(_ text: String, maxRows: Int? = nil) throws -> SQLResult {
        var rows: [[SQLValue]] = []
        var columns: [String] = []
        var truncated = false
        try streamSQL(text, columns: { columns = $0 }, row: { values in
            if let maxRows, rows.count >= maxRows {
                truncated = true
                return false
            }
            rows.append(values)
            return true
        })
        return SQLResult(columns: columns, rows: rows, truncated: truncated)
    }

    /// Runs one read-only SQL statement, handing over the column names, then each row until `row` returns false.
    ///
    /// Same refusals as `sql(_:maxRows:)`.
    public func streamSQL(_ text: String, columns: ([String]) throws -> Void,
                          row: ([SQLValue]) throws -> Bool) throws {
        let statement: SQLiteStatement
        do {
            let (first, rest) = try connection.splitFirstStatement(text)
            guard !first.isEmpty else {
                throw QueryError.badArgument(name: "sql", message: "no SQL statement given")
            }
            if !(try connection.splitFirstStatement(rest).first.isEmpty) {
                throw QueryError.refused(sql: text, reason: "only one statement may be run")
            }
            statement = try connection.prepare(first)
        } catch let error as SQLiteError {
            throw Self.sqlError(error, sql: text)
        }
        guard statement.isReadOnly else { throw QueryError.refused(sql: text, reason: "not a read-only statement") }
        let count = statement.columnCount
        try columns((0..<count).map { statement.columnName(at: $0) })
        do {
            defer { statement.reset() }
            while try statement.step() {
                guard try row((0..<count).map { statement.value(at: $0) }) else { break }
            }
        } catch let error as SQLiteError {
            throw Self.sqlError(error, sql: text)
        }
    }

    private static func sqlError(_ error: SQLiteError, sql: String) -> QueryError {
        if error.isReadOnlyViolation {
            let detail = error.message == "not authorized" ? "" : ": \(error.message)"
            return .refused(sql: sql, reason: "writes and schema changes are not allowed\(detail)")
        }
        return .sqlite(error)
    }

    // MARK: Plumbing

    /// A prepared statement with its result columns by name.
    final class Row {
        let statement: SQLiteStatement
        let columns: [String: Int32]

        init(_ statement: SQLiteStatement) {
            self.statement = statement
            var columns: [String: Int32] = [:]
            for index in 0..<statement.columnCount {
                let name = statement.columnName(at: index).lowercased()
                if columns[name] == nil { columns[name] = index }
            }
            self.columns = columns
        }

        func text(_ name: String) -> String? {
            guard let index = columns[name] else { return nil }
            return statement.text(at: index)
        }

        func int(_ name: String) -> Int64? {
            guard let index = columns[name] else { return nil }
            switch statement.value(at: index) {
            case .integer(let number): return number
            case .text(let text): return Int64(text)
            default: return nil
            }
        }
    }

    private func prepared(_ sql: String) throws -> Row {
        if let row = statements[sql] {
            row.statement.clearBindings()
            return row
        }
        do {
            let row = Row(try connection.prepare(sql))
            statements[sql] = row
            return row
        } catch let error as SQLiteError {
            throw QueryError.sqlite(error)
        }
    }

    /// Runs `body` in one read transaction: every engine call made inside sees the same snapshot of the
    /// database, without a transaction of its own. `body` gets SQLite's `PRAGMA data_version` for the snapshot:
    /// it changes whenever another connection (an import) has committed, so a cache of answers keyed by it is
    /// never stale. Throws `QueryError.sqlite` when the transaction cannot start, and whatever `body` throws.
    public func withSnapshot<T>(_ body: (_ dataVersion: Int64) throws -> T) throws -> T {
        try reading { try body(dataVersion ?? 0) }
    }

    /// Runs `body` inside one read transaction, refreshing cached schema and small tables when the file changed.
    /// Inside another `reading` call it just runs `body` in that transaction.
    private func reading<T>(_ body: () throws -> T) throws -> T {
        if inTransaction {
            do {
                return try body()
            } catch let error as SQLiteError {
                throw QueryError.sqlite(error)
            }
        }
        let transaction = try transactionStatements()
        do {
            try transaction.begin.step()
            transaction.begin.reset()
        } catch let error as SQLiteError {
            throw QueryError.sqlite(error)
        }
        inTransaction = true
        defer {
            inTransaction = false
            _ = try? transaction.commit.step()
            transaction.commit.reset()
        }
        let current: Int64?
        do {
            defer { transaction.version.reset() }
            current = try transaction.version.step() ? transaction.version.int64(at: 0) : nil
        } catch let error as SQLiteError {
            throw QueryError.sqlite(error)
        }
        if current != dataVersion {
            if dataVersion != nil { try loadTables() }
            dataVersion = current
            cache = SmallTables()
            exportDateCache = nil
            do {
                documentsCurrent = try useLookupDocuments && tables.contains(LookupDocuments.table)
                    && DerivedData.storedStamp(connection, name: LookupDocuments.name)
                        == DerivedData.currentStamp(connection)
            } catch let error as SQLiteError {
                throw QueryError.sqlite(error)
            }
        }
        do {
            return try body()
        } catch let error as SQLiteError {
            throw QueryError.sqlite(error)
        }
    }

    /// `BEGIN`, `COMMIT` and `PRAGMA data_version`, prepared once: every public call runs them.
    private func transactionStatements() throws -> TransactionStatements {
        if let transaction { return transaction }
        do {
            let prepared = TransactionStatements(begin: try connection.prepare("BEGIN"),
                                                 commit: try connection.prepare("COMMIT"),
                                                 version: try connection.prepare("PRAGMA data_version"))
            transaction = prepared
            return prepared
        } catch let error as SQLiteError {
            throw QueryError.sqlite(error)
        }
    }

    private func loadTables() throws {
        applicationLookup = nil
        do {
            let rows = try connection.query("SELECT name FROM sqlite_schema WHERE type IN ('table', 'view')")
            tables = Set(rows.compactMap { row in
                if case .text(let name) = row.first { return name }
                return nil
            })
        } catch let error as SQLiteError {
            if error.primaryCode == 26 { // SQLITE_NOTADB
                throw QueryError.databaseEmpty(path: databasePath)
            }
            throw QueryError.sqlite(error)
        }
    }

    // MARK: Small tables

    struct SmallTables {
        var loaded = false
        var genres: [Int64: (name: String, parent: Int64?)] = [:]
        var deviceTypes: [Int64: String] = [:]
        var mediaTypes: [Int64: String] = [:]
        var storefronts: [Int64: StorefrontRow] = [:]
        var storefrontByCountry: [String: Int64] = [:]
    }

    private func smallTables() throws -> SmallTables {
        if cache.loaded { return cache }
        var small = SmallTables()
        small.loaded = true
        if tables.contains("genre") {
            for row in try connection.query("SELECT genre_id, parent_id, name FROM genre") {
                guard case .integer(let id) = row[0] else { continue }
                var parent: Int64?
                if case .integer(let number) = row[1] { parent = number }
                small.genres[id] = (Self.text(row[2]) ?? String(id), parent)
            }
        }
        if tables.contains("device_type") {
            for row in try connection.query("SELECT device_type_id, name FROM device_type") {
                guard case .integer(let id) = row[0] else { continue }
                small.deviceTypes[id] = Self.text(row[1]) ?? String(id)
            }
        }
        if tables.contains("media_type") {
            for row in try connection.query("SELECT media_type_id, name FROM media_type") {
                guard case .integer(let id) = row[0] else { continue }
                small.mediaTypes[id] = Self.text(row[1]) ?? String(id)
            }
        }
        if tables.contains("storefront") {
            for row in try connection.query("SELECT storefront_id, country_code, name FROM storefront") {
                guard case .integer(let id) = row[0] else { continue }
                let code = (Self.text(row[1]) ?? "").uppercased()
                let country = CountryCodes.alpha2(fromAlpha3: code)
                small.storefronts[id] = StorefrontRow(storefrontId: id, country: country, countryCode: code,
                                                      name: Self.text(row[2]) ?? code)
                if let country, small.storefrontByCountry[country] == nil { small.storefrontByCountry[country] = id }
            }
        }
        cache = small
        return small
    }

    private static func text(_ value: SQLValue) -> String? {
        switch value {
        case .text(let text): return text
        case .integer(let number): return String(number)
        default: return nil
        }
    }

    /// "US" -> "us"; nil stays nil; throws `badArgument` for anything not an ISO 3166 alpha-2 (or alpha-3) code.
    private func normalizedCountry(_ country: String?) throws -> String? {
        guard let country else { return nil }
        if CountryCodes.isAlpha2(country) { return country.lowercased() }
        if country.utf8.count == 3, let alpha2 = CountryCodes.alpha2(fromAlpha3: country) { return alpha2 }
        throw QueryError.badArgument(name: "country",
                                     message: "'\(country)' is not an ISO 3166 country code (e.g. us, gb, jp)")
    }

    /// "en", "EN", "en-US", "pt_BR" -> lowercase; throws `badArgument` for anything else.
    private func normalizedLanguage(_ language: String?) throws -> String? {
        guard let language else { return nil }
        let lower = language.lowercased()
        let valid = (2...12).contains(lower.utf8.count)
            && lower.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D
                || $0 == 0x5F }
        guard valid else {
            throw QueryError.badArgument(name: "lang",
                                         message: "'\(language)' is not a language code (e.g. en, fr, pt-BR)")
        }
        return lower
    }
}

/// The statements around every public call (see `QueryEngine.reading`).
struct TransactionStatements {
    let begin: SQLiteStatement
    let commit: SQLiteStatement
    let version: SQLiteStatement
}

/// A price's feed text and currency code as found in a price row.
struct PriceKey: Hashable {
    var text: String
    var currency: String
}

/// A price ready for a Lookup object: `price`, `formattedPrice` and `currency`.
struct FormattedPrice {
    var number: String
    var formatted: String
    var currency: String
}

/// Builds a JSON object, leaving out nil values.
struct Fields {
    var pairs: [(String, JSONValue)] = []

    init() { pairs.reserveCapacity(32) }

    mutating func add(_ key: String, _ value: JSONValue?) {
        if let value { pairs.append((key, value)) }
    }

    mutating func add(_ key: String, _ text: String?) {
        if let text { pairs.append((key, .string(text))) }
    }

    var json: JSONValue { .object(pairs) }
}

/// The statement behind app lookups: the app's row, its price in one storefront (`?2`), its developer,
/// and its genres, devices and languages as `group_concat` lists, for app `?1`, in one step.
///
/// One statement instead of one per part saves a reset, bind and step per part and lets SQLite do the
/// joins; each part still reads through an index (`application_price_pk`, `genre_application_app`,
/// `application_device_type_pk`, `application_detail_pk`, `artist_application_app`). Columns missing from an
/// older `application` table read as NULL; tables that are absent leave their part out.
struct ApplicationStatement {
    /// Result columns, in order.
    enum Column: Int32, CaseIterable {
        case title, description, artistName, sellerName, companyUrl, viewUrl, artworkSmall, artworkLarge
        case releaseDate, version, downloadSize, recommendedAge, copyright, supportUrl
        case retailPrice, currency, artistId, artistViewUrl, genres, devices, languages
    }

    let statement: SQLiteStatement
    let hasPrices: Bool
    let hasDeveloper: Bool
    let hasDevices: Bool
    let hasLanguages: Bool

    /// Prepares the statement for an `application` table with these (lower-case) columns and these tables.
    /// Throws `SQLiteError` when a related table lacks a column the lookup reads.
    init(connection: SQLiteConnection, columns: Set<String>, tables: Set<String>) throws {
        func column(_ name: String) -> String { columns.contains(name) ? "a.\(name)" : "NULL" }
        hasPrices = tables.contains("application_price")
        hasDeveloper = tables.contains("artist_application")
        hasDevices = tables.contains("application_device_type")
        hasLanguages = tables.contains("application_detail")
        let developer = "(SELECT artist_id FROM artist_application WHERE application_id = ?1 LIMIT 1)"
        let parts: [String] = [
            column("title"), column("description"), column("artist_name"), column("seller_name"),
            column("company_url"), column("view_url"), column("artwork_url_small"), column("artwork_url_large"),
            column("itunes_release_date"), column("version"), column("download_size"), column("recommended_age"),
            column("copyright"), column("support_url"),
            hasPrices ? "p.retail_price" : "NULL", hasPrices ? "p.currency_code" : "NULL",
            hasDeveloper ? developer : "NULL",
            hasDeveloper && tables.contains("artist")
                ? "(SELECT view_url FROM artist WHERE artist_id = \(developer))" : "NULL",
            // "6014p,6016": primary genres marked; ordered in Swift, as an ORDER BY here would sort in a temp
            // B-tree on every lookup.
            tables.contains("genre_application") ? """
                (SELECT group_concat(CAST(genre_id AS INTEGER) || CASE WHEN is_primary = 1 THEN 'p' ELSE '' END,
                    ',') FROM genre_application WHERE application_id = ?1 AND genre_id IS NOT NULL)
                """ : "NULL",
            hasDevices ? """
                (SELECT group_concat(CAST(device_type_id AS INTEGER), ',') FROM application_device_type
                    WHERE application_id = ?1)
                """ : "NULL",
            hasLanguages ? """
                (SELECT group_concat(language_code, char(1)) FROM application_detail WHERE application_id = ?1)
                """ : "NULL",
        ]
        let sql = "SELECT " + parts.joined(separator: ",\n    ") + "\nFROM application a\n"
            + (hasPrices ? "LEFT JOIN application_price p ON p.application_id = ?1 AND p.storefront_id = ?2\n" : "")
            + "WHERE a.application_id = ?1"
        statement = try connection.prepare(sql)
    }
}
