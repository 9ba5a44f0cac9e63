import EPFSQLite
import JSONText

/// Lookup objects built from the tables: apps, collections, songs, videos, artists, and their prices.
extension LookupQueries {
    /// An app as a lookup object. With `storedDocuments` a default object (no language, not every price) may be
    /// the lookup document the importer stored, re-targeted to the country (see `LookupDocuments`).
    func application(_ id: Int64, country: String?, language: String?, allPrices: Bool,
                     storedDocuments: Bool = false) throws -> LookupItem? {
        if language == nil, !allPrices, storedDocuments, documentsCurrent {
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
        let priceCountry = country ?? QueryEngine.defaultCountry
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
        var languageUsed: String?
        // The requested language's texts, falling back to English; without a language only the English row's
        // release notes and screenshots are shown (titles and descriptions are the application table's).
        let detail = try localizedDetail(id, language: language)
        if language != nil, let detail {
            title = detail.title ?? title
            description = detail.description ?? description
            languageUsed = detail.code
        }
        fields.add("trackName", title)
        fields.add("trackCensoredName", title)
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
        // Apple's three sizes, made from the large artwork when its URL names a size; else the feed's URLs.
        func artwork(_ size: Int, _ fallback: String?) -> String? {
            guard let large, case let sized = Self.artworkURL(large, size: size), sized != large || size == 512 else {
                return fallback
            }
            return sized
        }
        fields.add("artworkUrl60", artwork(60, small ?? large))
        fields.add("artworkUrl100", artwork(100, small ?? large))
        fields.add("artworkUrl512", artwork(512, large ?? small))
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
        try addDetailFields(&fields, id: id, detail: detail)
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
        if allPrices { fields.add("prices", .array(try priceRows(of: .application, id: id).map(\.json))) }
        return LookupItem(id: id, kind: .software, value: fields.json, country: usedCountry)
    }

    /// The statement that reads an app and everything its Lookup object shows in one step, or nil without
    /// an `application` table. Built once for the tables and columns present (see `ApplicationStatement`).
    func applicationStatement() throws -> ApplicationStatement? {
        dropStaleStatements()
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

    func columnNames(_ table: String) throws -> Set<String> {
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

    /// The JSON number, display text and upper-case currency of a price, nil when the text is no decimal.
    ///
    /// Prices repeat (a few tiers in a few currencies), so results are kept: formatting costs microseconds.
    func formattedPrice(_ text: String, currency code: String) -> FormattedPrice? {
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

    func collection(_ id: Int64, country: String?, allPrices: Bool) throws -> LookupItem? {
        guard tables.contains("collection") else { return nil }
        return try firstRow("SELECT * FROM collection WHERE collection_id = ?1", id: id) { row -> LookupItem? in
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
                fields.add("trackCensoredName", row.text("name"))
                fields.add("artistId", artistId.map { .int($0) })
                fields.add("artistName", row.text("artist_display_name"))
                fields.add("trackViewUrl", row.text("view_url").map { Self.viewURL($0, country: country) })
                fields.add("artworkUrl100", row.text("artwork_url"))
                priceCountry = try addPrice(&fields, of: .collection, id: id, country: country, name: "price")
            } else {
                fields.add("wrapperType", "collection")
                fields.add("collectionType", row.int("is_compilation") == 1 ? "Compilation" : "Album")
                fields.add("collectionId", .int(id))
                fields.add("artistId", artistId.map { .int($0) })
                fields.add("collectionName", row.text("name"))
                fields.add("collectionCensoredName", row.text("name"))
                fields.add("collectionExplicitness", Self.explicitness(row.int("parental_advisory_id")))
                fields.add("artistName", row.text("artist_display_name"))
                fields.add("collectionViewUrl", row.text("view_url").map { Self.viewURL($0, country: country) })
                fields.add("artworkUrl100", row.text("artwork_url"))
                priceCountry = try addPrice(&fields, of: .collection, id: id, country: country,
                                            name: "collectionPrice")
                if tables.contains("collection_song") {
                    let count = try firstRow("SELECT count(*) FROM collection_song WHERE collection_id = ?1",
                                             id: id) { $0.statement.int64(at: 0) }
                    if let count { fields.add("trackCount", .int(count)) }
                }
            }
            fields.add("copyright", row.text("copyright"))
            fields.add("releaseDate", (row.text("itunes_release_date") ?? row.text("original_release_date"))
                .map(Self.appleDate))
            fields.add("label", row.text("label_studio"))
            if allPrices { fields.add("prices", .array(try priceRows(of: .collection, id: id).map(\.json))) }
            return LookupItem(id: id, kind: kind, value: fields.json, country: priceCountry)
        }
    }

    func song(_ id: Int64, country: String?, allPrices: Bool) throws -> LookupItem? {
        guard tables.contains("song") else { return nil }
        return try firstRow("SELECT * FROM song WHERE song_id = ?1", id: id) { row -> LookupItem? in
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
            Self.addTrackNames(&fields, row, country: country)
            fields.add("previewUrl", row.text("preview_url"))
            let priceCountry = try addPrice(&fields, of: .song, id: id, country: country, name: "trackPrice")
            Self.addReleaseAndLength(&fields, row)
            fields.add("copyright", row.text("copyright"))
            if allPrices { fields.add("prices", .array(try priceRows(of: .song, id: id).map(\.json))) }
            return LookupItem(id: id, kind: .song, value: fields.json, country: priceCountry)
        }
    }

    func video(_ id: Int64, country: String?, allPrices: Bool) throws -> LookupItem? {
        guard tables.contains("video") else { return nil }
        return try firstRow("SELECT * FROM video WHERE video_id = ?1", id: id) { row -> LookupItem? in
            var fields = Fields()
            fields.add("wrapperType", "track")
            fields.add("kind", try videoKind(mediaType: row.int("media_type_id")))
            fields.add("trackId", .int(id))
            Self.addTrackNames(&fields, row, country: country)
            fields.add("artworkUrl100", row.text("artwork_url"))
            let priceCountry = try addPrice(&fields, of: .video, id: id, country: country, name: "trackPrice")
            Self.addReleaseAndLength(&fields, row)
            fields.add("shortDescription", row.text("short_description"))
            fields.add("longDescription", row.text("long_description"))
            fields.add("copyright", row.text("copyright"))
            if allPrices { fields.add("prices", .array(try priceRows(of: .video, id: id).map(\.json))) }
            return LookupItem(id: id, kind: .video, value: fields.json, country: priceCountry)
        }
    }

    func artist(_ id: Int64) throws -> LookupItem? {
        guard tables.contains("artist") else { return nil }
        return try firstRow("SELECT * FROM artist WHERE artist_id = ?1", id: id) { row -> LookupItem? in
            var fields = Fields()
            fields.add("wrapperType", "artist")
            fields.add("artistType", try artistTypeName(row.int("artist_type_id")) ?? "Artist")
            fields.add("artistName", row.text("name"))
            fields.add("artistLinkUrl", row.text("view_url"))
            fields.add("artistId", .int(id))
            return LookupItem(id: id, kind: .artist, value: fields.json, country: nil)
        }
    }

    // MARK: Entity helpers

    func firstID(_ sql: String, table: String, id: Int64) throws -> Int64? {
        guard tables.contains(table) else { return nil }
        return try firstRow(sql, id: id) { $0.statement.int64(at: 0) }
    }

    /// Adds `<name>`, `formattedPrice` and `currency` for the storefront of `country` (default "us") from the
    /// price table of `table`. Returns the country used, nil when no price applied.
    func addPrice(_ fields: inout Fields, of table: CatalogueTable, id: Int64, country: String?,
                  name: String) throws -> String? {
        guard let priceTable = table.priceTable, tables.contains(priceTable) else { return nil }
        let country = country ?? QueryEngine.defaultCountry
        guard let storefront = try smallTables().storefrontByCountry[country] else { return nil }
        let sql = """
            SELECT retail_price, currency_code FROM \(priceTable) WHERE \(table.idColumn)
                = ?1 AND storefront_id = ?2
            """
        let found = try firstRow(sql, [.integer(id), .integer(storefront)]) { row -> FormattedPrice? in
            guard let text = row.statement.decimalText(at: 0) else { return nil }
            return formattedPrice(text, currency: row.statement.text(at: 1) ?? "")
        }
        guard let price = found else { return nil }
        fields.add(name, .decimal(price.number))
        fields.add("formattedPrice", price.formatted)
        fields.add("currency", price.currency)
        return country
    }

    /// The item's price in every storefront of the price table of `table`, sorted by country code.
    func priceRows(of table: CatalogueTable, id: Int64) throws -> [PriceRow] {
        guard let priceTable = table.priceTable, tables.contains(priceTable) else { return [] }
        let storefronts = try smallTables().storefronts
        let sql = """
            SELECT storefront_id, retail_price, currency_code FROM \(priceTable)
            WHERE \(table.idColumn) = ?1
            """
        var rows: [PriceRow] = []
        try forEachRow(sql, [.integer(id)]) { row in
            guard let storefrontId = row.statement.int64(at: 0), let text = row.statement.decimalText(at: 1) else {
                return true
            }
            let currency = (row.statement.text(at: 2) ?? "").uppercased()
            let format = CurrencyFormat.forCode(currency)
            let storefront = storefronts[storefrontId]
            rows.append(PriceRow(storefrontId: storefrontId, country: storefront?.country,
                                 storefrontName: storefront?.name, currency: currency, retailPrice: text,
                                 price: format.jsonNumber(text) ?? text,
                                 formattedPrice: format.format(text) ?? text))
            return true
        }
        return rows.sorted { ($0.country ?? "~", $0.storefrontId) < ($1.country ?? "~", $1.storefrontId) }
    }

    /// The naming fields a song and a video share: track name (also as the censored name: the feed has no
    /// other), explicitness, artist and collection names, and the view URL in the storefront of `country`.
    static func addTrackNames(_ fields: inout Fields, _ row: CachedStatement, country: String?) {
        fields.add("trackName", row.text("name"))
        fields.add("trackCensoredName", row.text("name"))
        fields.add("trackExplicitness", explicitness(row.int("parental_advisory_id")))
        fields.add("artistName", row.text("artist_display_name"))
        fields.add("collectionName", row.text("collection_display_name"))
        fields.add("trackViewUrl", row.text("view_url").map { viewURL($0, country: country) })
    }

    /// A song's or video's release date (the store's, else the original) and length.
    static func addReleaseAndLength(_ fields: inout Fields, _ row: CachedStatement) {
        fields.add("releaseDate", (row.text("itunes_release_date") ?? row.text("original_release_date"))
            .map(appleDate))
        fields.add("trackTimeMillis", row.int("track_length").map { .int($0) })
    }

    /// Apple's explicitness of an EPF `parental_advisory_id`: 1 explicit, 2 a clean version, else none.
    static func explicitness(_ advisory: Int64?) -> String {
        switch advisory {
        case 1: return "explicit"
        case 2: return "cleaned"
        default: return "notExplicit"
        }
    }

    func collectionKind(mediaType: Int64?) -> EntityKind {
        guard let mediaType, let name = try? smallTables().mediaTypes[mediaType] else { return .album }
        return name.lowercased().contains("book") ? .ebook : .album
    }

    func videoKind(mediaType: Int64?) throws -> String {
        guard let mediaType, let name = try smallTables().mediaTypes[mediaType]?.lowercased() else {
            return "feature-movie"
        }
        if name.contains("music") { return "music-video" }
        if name.contains("tv") || name.contains("episode") { return "tv-episode" }
        return "feature-movie"
    }

    func artistTypeName(_ id: Int64?) throws -> String? {
        guard let id, tables.contains("artist_type") else { return nil }
        return try firstRow("SELECT name FROM artist_type WHERE artist_type_id = ?1", id: id) {
            $0.statement.text(at: 0)
        }
    }
}
