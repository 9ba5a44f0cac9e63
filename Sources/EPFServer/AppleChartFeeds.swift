import EPFFormat
import EPFQuery
import HTTPTransport
import JSONText

/// Apple's top-chart feeds as a drop-in, from the popularity feed: the marketing tools' `apps.json` and the legacy
/// iTunes RSS `json`. Every value is a string, as in Apple's feeds; a field the EPF cannot supply is left out, never
/// invented (see docs/http-api.md, "Apple's chart feeds").
extension EPFRoutes {
    /// The legacy feeds' names and the chart each serves.
    static let legacyFeeds: [String: (chart: ChartKind, title: String)] = [
        "topfreeapplications": (.free, "Top Free Apps"), "toppaidapplications": (.paid, "Top Paid Apps"),
        "topfreeipadapplications": (.freeIPad, "Top Free iPad Apps"),
        "toppaidipadapplications": (.paidIPad, "Top Paid iPad Apps"),
    ]

    /// The marketing tools' chart names and the chart each serves (iPhone charts: genre 36).
    static let marketingFeeds: [String: (chart: ChartKind, title: String)] = [
        "top-free": (.free, "Top Free Apps"), "top-paid": (.paid, "Top Paid Apps"),
    ]

    /// `GET /api/v2/{cc}/apps/{top-free|top-paid}/{limit}/apps.json`: `{"feed": {"title", "id", "author", "links",
    /// "copyright", "country", "icon", "updated", "results": [{"artistName", "id", "name", "releaseDate", "kind",
    /// "artworkUrl100", "genres", "url"}]}}`. Apple serves 10, 25, 50 or 100 entries; epf any limit up to 200.
    func marketingChart(_ country: String, _ name: String, _ limitText: String,
                        _ request: HTTPRequest) throws -> HTTPResponse {
        guard let feed = Self.marketingFeeds[name] else {
            throw RouteError(status: 404, message: "no chart '\(name.prefix(40))'; use top-free or top-paid")
        }
        let limit = try Self.feedLimit(limitText)
        let chart = try chartAnswer { try $0.charts.chart(country: country, kind: feed.chart, limit: limit) }
        let results: [JSONValue] = chart.entries.map { entry in
            var fields: [(String, JSONValue)] = []
            func add(_ key: String, _ value: String?) { if let value { fields.append((key, .string(value))) } }
            add("artistName", entry.field("artistName")?.stringValue)
            add("id", String(entry.id))
            add("name", entry.field("trackName")?.stringValue)
            add("releaseDate", entry.field("releaseDate")?.stringValue.map { String($0.prefix(10)) })
            add("kind", "apps")
            add("artworkUrl100", entry.field("artworkUrl100")?.stringValue)
            if let genres = Self.genres(entry) {
                fields.append(("genres", .array(genres.map { genre in
                    .object([("genreId", .string(genre.id)), ("name", .string(genre.name))])
                })))
            }
            add("url", entry.field("trackViewUrl")?.stringValue)
            return .object(fields)
        }
        var head: [(String, JSONValue)] = [
            ("title", .string(feed.title)), ("id", .string(request.path)),
            ("author", .object([("name", .string("Apple")), ("url", .string("https://www.apple.com/"))])),
            ("links", .array([.object([("self", .string(request.path))])])),
        ]
        if let date = chart.exportDate {
            head.append(("copyright", .string("Copyright © \(EPFValues.isoDate(milliseconds: date).prefix(4)) "
                                              + "Apple Inc. All rights reserved.")))
        }
        head += [("country", .string(chart.country)), ("icon", .string("https://www.apple.com/favicon.ico"))]
        if let date = chart.exportDate {
            // "Mon, 05 Jan 2026 00:00:00 +0000": the date of the ranks, in Apple's RFC 2822 form.
            head.append(("updated", .string(HTTPDate.format(date / 1000).dropLast(4) + " +0000")))
        }
        head.append(("results", .array(results)))
        return json(.object([("feed", .object(head))]))
    }

    /// `GET /{cc}/rss/{feed}/limit={n}[/genre={g}]/json`, and the same feed on Apple's other paths (`LegacyFeedPath`):
    /// the legacy iTunes RSS feed in JSON, `{"feed": {"author", "entry": [...], "updated", "rights", "title", "icon",
    /// "link", "id"}}`, each value `{"label": ...}` with its `attributes`, as Apple wrote it; as Apple's XML-to-JSON
    /// conversion did, `entry` is the object itself when the feed holds one entry and absent when it holds none.
    func legacyChart(_ form: LegacyFeedForm, _ captures: [String], _ request: HTTPRequest) throws -> HTTPResponse {
        let path = try LegacyFeedPath(form, captures: captures, request: request)
        guard let feed = Self.legacyFeeds[path.feed] else {
            throw RouteError(status: 404, message: "no feed '\(path.feed.prefix(40))'; use topfreeapplications, "
                             + "toppaidapplications, topfreeipadapplications or toppaidipadapplications")
        }
        let chart = try chartAnswer { engine in
            let country = try path.country ?? path.storefrontID.map { try Self.country(ofStorefront: $0, engine) }
                ?? LegacyFeedPath.defaultCountry
            return try engine.charts.chart(country: country, kind: feed.chart, genre: path.genre, limit: path.limit)
        }
        let entries = chart.entries.map(Self.legacyEntry)
        var head: [(String, JSONValue)] = [
            ("author", .object([("name", Self.label("iTunes Store")),
                                ("uri", Self.label("http://www.apple.com/itunes/"))])),
        ]
        // Apple's feed was XML turned into JSON: one <entry> became an object, none no member at all.
        switch entries.count {
        case 0: break
        case 1: head.append(("entry", entries[0]))
        default: head.append(("entry", .array(entries)))
        }
        if let date = chart.exportDate {
            head.append(("updated", Self.label(EPFValues.isoTimestamp(milliseconds: date))))
        }
        head += [
            ("rights", Self.label("Copyright 2008 Apple Inc.")),
            ("title", Self.label("iTunes Store: \(feed.title)")),
            ("icon", Self.label("http://itunes.apple.com/favicon.ico")),
            ("link", .array([.object([("attributes", .object([("rel", .string("self")),
                                                               ("href", .string(request.path))]))])])),
            ("id", Self.label(request.path)),
        ]
        var body = JSONValue.object([("feed", .object(head))]).serialized()
        body.append(UInt8(ascii: "\n"))
        return HTTPResponse(status: 200, body: body, contentType: Self.appleContentType,
                            lastModified: defaultLastModified, cache: .public, headers: Self.appleHeaders)
    }

    /// The country code of the storefront with EPF id `id`, as the data's storefront table has it.
    private static func country(ofStorefront id: Int64, _ engine: QueryEngine) throws -> String {
        guard let storefront = try engine.catalogue.storefronts().first(where: { $0.storefrontId == id }) else {
            throw RouteError(status: 400, message: "no storefront \(id) in the data; see /v1/storefronts")
        }
        return storefront.country ?? storefront.countryCode
    }

    /// One entry of the legacy feed; what the EPF lacks (a bundle id, 53 and 75 pixel artwork it cannot size) is
    /// left out.
    static func legacyEntry(_ entry: ChartEntry) -> JSONValue {
        var fields: [(String, JSONValue)] = []
        let name = entry.field("trackName")?.stringValue
        let artist = entry.field("artistName")?.stringValue
        let url = entry.field("trackViewUrl")?.stringValue
        if let name { fields.append(("im:name", label(name))) }
        let images: [JSONValue] = [53, 75, 100].compactMap { size in
            entry.artwork(size: size).map { .object([("label", .string($0)),
                                                     ("attributes", .object([("height", .string(String(size)))]))]) }
        }
        if !images.isEmpty { fields.append(("im:image", .array(images))) }
        if let summary = entry.field("description")?.stringValue { fields.append(("summary", label(summary))) }
        if let formatted = entry.field("formattedPrice")?.stringValue {
            var attributes: [(String, JSONValue)] = []
            if case .decimal(let amount)? = entry.field("price") {
                attributes.append(("amount", .string(fiveDecimals(amount))))
            }
            if let currency = entry.field("currency")?.stringValue {
                attributes.append(("currency", .string(currency)))
            }
            fields.append(("im:price", .object([("label", .string(formatted)), ("attributes", .object(attributes))])))
        }
        if entry.app != nil {
            fields.append(("im:contentType", .object([("attributes", .object([
                ("term", .string("Application")), ("label", .string("Application")),
            ]))])))
        }
        if let rights = entry.field("copyright")?.stringValue { fields.append(("rights", label(rights))) }
        if let name { fields.append(("title", label(artist.map { "\(name) - \($0)" } ?? name))) }
        if let url {
            fields.append(("link", .object([("attributes", .object([
                ("rel", .string("alternate")), ("type", .string("text/html")), ("href", .string(url)),
            ]))])))
        }
        var id: [(String, JSONValue)] = []
        if let url { id.append(("label", .string(url))) }
        id.append(("attributes", .object([("im:id", .string(String(entry.id)))])))
        fields.append(("id", .object(id)))
        if let artist {
            var value: [(String, JSONValue)] = [("label", .string(artist))]
            if let href = entry.field("artistViewUrl")?.stringValue {
                value.append(("attributes", .object([("href", .string(href))])))
            }
            fields.append(("im:artist", .object(value)))
        }
        if let genre = genres(entry)?.first {
            fields.append(("category", .object([("attributes", .object([
                ("im:id", .string(genre.id)), ("term", .string(genre.name)), ("label", .string(genre.name)),
            ]))])))
        }
        if let date = entry.field("releaseDate")?.stringValue {
            var value: [(String, JSONValue)] = [("label", .string(date))]
            if let long = longDate(date) { value.append(("attributes", .object([("label", .string(long))]))) }
            fields.append(("im:releaseDate", .object(value)))
        }
        return .object(fields)
    }

    /// The app's genres, primary first, as id and name; nil when the catalogue has none.
    static func genres(_ entry: ChartEntry) -> [(id: String, name: String)]? {
        guard let ids = entry.field("genreIds")?.arrayValue, let names = entry.field("genres")?.arrayValue,
              !ids.isEmpty, ids.count == names.count else { return nil }
        return zip(ids, names).compactMap { id, name in
            guard let id = id.stringValue, let name = name.stringValue else { return nil }
            return (id, name)
        }
    }

    /// `{"label": text}`, Apple's wrapping of every value of the legacy feed.
    static func label(_ text: String) -> JSONValue { .object([("label", .string(text))]) }

    /// A decimal price with five decimals, as the legacy feed's `amount` ("0.99" -> "0.99000").
    static func fiveDecimals(_ text: String) -> String {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let fraction = parts.count > 1 ? String(parts[1].prefix(5)) : ""
        return String(parts[0]) + "." + fraction + String(repeating: "0", count: 5 - fraction.count)
    }

    /// "2026-01-05T00:00:00Z" as "January 5, 2026"; nil for any other text.
    static func longDate(_ iso: String) -> String? {
        let parts = iso.prefix(10).split(separator: "-")
        guard parts.count == 3, let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
              (1...12).contains(month) else { return nil }
        let months = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
                      "October", "November", "December"]
        return "\(months[month - 1]) \(day), \(year)"
    }

    /// A feed's limit from the path: 1 ... 200 (Apple's feeds serve 10, 25, 50 or 100; epf any number to 200).
    static func feedLimit(_ text: String) throws -> Int {
        guard text.utf8.count <= 4, let limit = Int(text), (1...ChartQueries.maximumLimit).contains(limit) else {
            throw RouteError(status: 400, message: "limit must be a whole number from 1 to "
                             + "\(ChartQueries.maximumLimit), got '\(text.prefix(40))'")
        }
        return limit
    }
}
