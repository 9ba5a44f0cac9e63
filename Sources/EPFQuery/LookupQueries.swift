import EPFSQLite
import JSONText

/// Lookups by Apple ID or store link; apps, collections, songs, videos and artists as Apple's Lookup objects;
/// the stored lookup documents; whether a storefront sells an item.
package final class LookupQueries: SessionReading {
    let session: ReadSession
    /// Where lookups find what left the store (`removedIds`); set by `QueryEngine`.
    var changes: ChangeQueries?
    /// The app lookup statement, prepared on first use and dropped when the schema changes.
    var applicationLookup: ApplicationStatement?
    /// An app's stored document and its price in one storefront (`storedDocument(_:country:)`), prepared on first
    /// use and dropped when the schema changes.
    var documentAndPrice: SQLiteStatement?
    /// The screenshot columns of `application_detail` as a select list ("" when absent), read on first use.
    var detailScreenshots: String?
    /// The session's schema generation the three above were made for.
    private var schemaGeneration = 0
    /// Formatted prices by feed text and currency (see `formattedPrice`).
    var priceFormats: [PriceKey: FormattedPrice] = [:]
    /// `FormattedPrice.appMembers` by feed text and currency, for re-targeted stored documents.
    var priceMembers: [PriceKey: [UInt8]] = [:]

    init(session: ReadSession) { self.session = session }

    /// Drops the statements kept across calls when the schema changed since they were made.
    @inline(__always)
    func dropStaleStatements() {
        guard schemaGeneration != session.schemaGeneration else { return }
        schemaGeneration = session.schemaGeneration
        applicationLookup = nil
        documentAndPrice = nil
        detailScreenshots = nil
    }
}

/// Lookups by Apple ID or store link, and link resolution.
extension LookupQueries {
    /// Looks up Apple IDs and store links in every entity table.
    ///
    /// Each argument is an ID or a link (see `StoreLink.parse`). A link's kind is tried alone first; a bare ID
    /// returns every kind that holds it (real Apple IDs are unique, so normally one). The country is `country`,
    /// else the link's country, else "us" for the price fields; with `allPrices` the item also lists its
    /// price in every storefront (`prices`) when no country was chosen. Arguments that are not IDs or
    /// match nothing go to `invalidIds`; those the changes table says left the store go to `removedIds` too.
    /// With a country (given or the link's), each item says whether that storefront sells it
    /// (`availableInStorefront`, and `price: null` when not).
    /// With `storedDocuments`, default app items (no country, no language, not every price) may be the stored
    /// lookup document itself, a `JSONValue.serialized` value (what the HTTP API sends; it has no fields to
    /// read).
    /// Throws `QueryError.badArgument` for an unknown country or malformed language code.
    package func lookup(_ arguments: [String], country: String?, language: String?,
                       allPrices: Bool = false, storedDocuments: Bool = false) throws -> LookupResult {
        let country = try normalizedCountry(country)
        let language = try normalizedLanguage(language)
        return try reading {
            var items: [LookupItem] = []
            var invalid: [String] = []
            var removed: [RemovedItem] = []
            for argument in arguments {
                guard let link = StoreLink.parse(argument) else {
                    invalid.append(argument)
                    continue
                }
                let chosen = country ?? link.country
                let found = try find(link, country: chosen, language: language, allPrices: allPrices && chosen == nil,
                                     storedDocuments: storedDocuments)
                if found.isEmpty {
                    invalid.append(argument)
                } else {
                    items += try found.map {
                        var item = try markingAvailability($0, country: chosen)
                        item.storefront = chosen
                        return item
                    }
                }
                if found.isEmpty, let removal = try changes?.latestRemoval(of: link, argument: argument) {
                    removed.append(removal)
                }
            }
            return LookupResult(items: items, invalidIds: invalid, removedIds: removed)
        }
    }

    /// One entry of one kind as an Apple Lookup result object, nil when that table lacks the ID.
    ///
    /// `.album` and `.ebook` both read `collection`; the object's `kind` says which it is. With a country, the
    /// object says whether that storefront sells the item (`availableInStorefront`, see `markingAvailability`).
    /// Throws `QueryError.badArgument` for an unknown country or malformed language code.
    package func entity(kind: EntityKind, id: Int64, country: String?, language: String?) throws -> JSONValue? {
        let country = try normalizedCountry(country)
        let language = try normalizedLanguage(language)
        return try reading {
            try item(kind: kind, id: id, country: country, language: language, allPrices: false)
                .map { try markingAvailability($0, country: country).value }
        }
    }

    /// The same object as `entity(kind:id:country:language:)`, serialized as JSON: what `GET /v1/apps/{id}`
    /// sends. A default app lookup (no country, no language) is one read of its stored lookup document when
    /// the documents are those of the current tables; everything else is built from the tables.
    package func entityJSON(kind: EntityKind, id: Int64, country: String?, language: String?) throws -> [UInt8]? {
        let normalized = try normalizedCountry(country)
        return try reading {
            if kind == .software, language == nil, documentsCurrent {
                guard let normalized else { return try storedDocument(id) }
                switch try storedDocument(id, country: normalized) {
                case .document(let body, let priced):
                    let item = LookupItem(id: id, kind: .software, value: .serialized(body),
                                          country: priced ? normalized : nil)
                    return try markingAvailability(item, country: normalized).value.serialized()
                case .missing: return nil
                case .unusable: break
                }
            }
            return try entity(kind: kind, id: id, country: country, language: language)?.serialized()
        }
    }

    /// Resolves a store link or ID to `{"id": 364709193, "kind": "software", "country": "us"}`.
    ///
    /// The kind is the one found in the database. Returns nil when the text is not a link or ID, or the ID
    /// is in no table.
    package func resolve(_ link: String) throws -> JSONValue? {
        guard let parsed = StoreLink.parse(link) else { return nil }
        return try reading {
            guard let kind = try kinds(of: parsed).first else { return nil }
            return .object([
                ("id", .int(parsed.id)), ("kind", .string(kind.rawValue)),
                ("country", parsed.country.map { .string($0) } ?? .null),
            ])
        }
    }

    func find(_ link: StoreLink, country: String?, language: String?, allPrices: Bool,
              storedDocuments: Bool) throws -> [LookupItem] {
        var found: [LookupItem] = []
        if link.kind == nil || link.kind == .software, language == nil, !allPrices,
           storedDocuments, documentsCurrent,
           let app = try application(link.id, country: country, language: nil, allPrices: false,
                                     storedDocuments: true) {
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
                                   allPrices: allPrices, storedDocuments: storedDocuments) {
                found.append(item)
            }
        }
        return found
    }

    /// The kinds whose tables hold the ID: the link's kind alone when it matches, else every kind found
    /// (leaving out `except`, already looked at by the caller).
    func kinds(of link: StoreLink, except: EntityKind? = nil) throws -> [EntityKind] {
        if let kind = link.kind, kind != except, let actual = try exists(kind.catalogueTable, id: link.id) {
            return [actual]
        }
        var result: [EntityKind] = []
        for table in CatalogueTable.allCases where !(table == .application && except == .software) {
            if let kind = try exists(table, id: link.id) { result.append(kind) }
        }
        return result
    }

    /// The kind of the row with that ID in `table`, nil when absent.
    func exists(_ table: CatalogueTable, id: Int64) throws -> EntityKind? {
        guard tables.contains(table.name) else { return nil }
        if table == .collection {
            return try firstRow("SELECT media_type_id FROM collection WHERE collection_id = ?1", id: id) {
                collectionKind(mediaType: $0.statement.int64(at: 0))
            }
        }
        return try firstRow("SELECT 1 FROM \(table.name) WHERE \(table.idColumn) = ?1", id: id) { _ in
            table.defaultKind
        }
    }

    func item(kind: EntityKind, id: Int64, country: String?, language: String?, allPrices: Bool,
              storedDocuments: Bool = false) throws -> LookupItem? {
        switch kind {
        case .software:
            return try application(id, country: country, language: language, allPrices: allPrices,
                                   storedDocuments: storedDocuments)
        case .album, .ebook: return try collection(id, country: country, allPrices: allPrices)
        case .song: return try song(id, country: country, allPrices: allPrices)
        case .video: return try video(id, country: country, allPrices: allPrices)
        case .artist: return try artist(id)
        }
    }
}
