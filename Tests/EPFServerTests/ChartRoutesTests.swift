import EPFGenerator
import EPFImport
import EPFQuery
@testable import EPFServer
import EPFSQLite
import EPFStore
import EPFTestSupport
import Foundation
import HTTPTransport
import Testing

/// A generated v5 export (its four chart tables) imported once per test process, removed when the process exits.
struct ChartCatalogue: Sendable {
    let database: String

    static let shared: Result<ChartCatalogue, any Error> = Result { try ChartCatalogue() }

    private init() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("epf-charts-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        chartCatalogueDirectory = directory
        atexit { if let directory = chartCatalogueDirectory { try? FileManager.default.removeItem(atPath: directory) } }
        var options = GeneratorOptions()
        options.apps = 300
        options.priceStorefronts = 4
        options.layout = .v5
        options.tables = Set(["application", "genre", "genre_application", "storefront", "application_price",
                              "artist", "artist_application"] + ChartKind.allCases.map(\.v5Table))
        let feed = try FeedGenerator.write(options, to: URL(fileURLWithPath: directory).appendingPathComponent("feed"))
        database = directory + "/epf.sqlite"
        let importer = try Importer(databasePath: database, options: ImportOptions())
        let report = try importer.run(paths: feed.feedPaths.values.map(\.path).sorted())
        guard report.succeeded else { throw ClientError(description: "the import of the v5 charts failed") }
    }

    /// A storefront other than the US that the free chart ranks: its EPF id and alpha-2 code.
    func otherStorefront() throws -> (id: Int64, country: String)? {
        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        let rows = try connection.query("""
            SELECT s.storefront_id, s.country_code FROM storefront s WHERE s.storefront_id <> 143441 AND EXISTS
            (SELECT 1 FROM free_application_popularity_per_genre p WHERE p.storefront_id = s.storefront_id)
            ORDER BY s.storefront_id LIMIT 1
            """)
        guard let row = rows.first, case .integer(let id) = row[0], case .text(let code) = row[1],
              let country = CountryCodes.alpha2(fromAlpha3: code) else { return nil }
        return (id, country)
    }

    /// Fresh routes over the shared database.
    static func routes() throws -> RouteAnswers {
        let configuration = EPFServerConfiguration(databasePath: try shared.get().database)
        return RouteAnswers(routes: try EPFRoutes(configuration: configuration))
    }

    /// The ids of a chart, best first, read straight from its table.
    func ids(_ table: String, storefront: Int64 = 143441, genre: Int = 36, limit: Int) throws -> [Int64] {
        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        return try connection.query("""
            SELECT application_id FROM \(table) WHERE storefront_id = \(storefront) AND genre_id = \(genre)
            ORDER BY application_rank LIMIT \(limit)
            """).compactMap { row in
            if case .integer(let id) = row.first { return id }
            return nil
        }
    }
}

nonisolated(unsafe) private var chartCatalogueDirectory: String?

/// Routes called without a socket.
struct RouteAnswers {
    let routes: EPFRoutes

    func get(_ target: String) throws -> RouteAnswer {
        let request = try #require(HTTPRequest(method: .get, target: target))
        return RouteAnswer(response: routes.respond(to: request))
    }
}

/// Whether every leaf of a JSON value is a string (Apple's chart feeds have no numbers, booleans or nulls).
func onlyStrings(_ value: Any) -> Bool {
    switch value {
    case is String: return true
    case let array as [Any]: return array.allSatisfy(onlyStrings)
    case let object as [String: Any]: return object.values.allSatisfy(onlyStrings)
    default: return false
    }
}

@Suite("Charts and Apple's chart feeds, called without a socket")
struct ChartRoutesTests {
    @Test func v5ChartsInRankOrderWithTheAppsFields() throws {
        let catalogue = try ChartCatalogue.shared.get()
        let server = try ChartCatalogue.routes()
        for kind in ChartKind.allCases {
            let answer = try server.get("/v1/charts/us/\(kind.rawValue)?limit=7")
            #expect(answer.status == 200, "\(answer.text.prefix(300))")
            let object = try answer.json()
            #expect(object["source"] as? String == kind.v5Table)
            #expect(object["genreId"] as? Int == 36)
            #expect(object["exportDate"] as? String == "2026-01-05T00:00:00Z")
            let results = try #require(object["results"] as? [[String: Any]])
            #expect(results.map { $0["trackId"] as? Int64 } == (try catalogue.ids(kind.v5Table, limit: 7)))
            #expect(results.map { $0["rank"] as? Int } == Array(1...results.count))
            #expect(results.allSatisfy { $0["trackName"] is String && $0["formattedPrice"] is String })
            let prices = results.compactMap { $0["formattedPrice"] as? String }
            #expect(kind.isFree ? prices.allSatisfy { $0 == "Free" } : !prices.contains("Free"))
        }
        let games = try server.get("/v1/charts/us/paid?genre=6014&limit=3").json()
        let ids = (games["results"] as? [[String: Any]])?.map { $0["trackId"] as? Int64 }
        #expect(ids == (try catalogue.ids("paid_application_popularity_per_genre", genre: 6014, limit: 3)))
        #expect(games["genreName"] as? String == "Games")
    }

    /// An app's ranks without rank history: today's, the places the chart tables give it.
    @Test func anAppsRanksToday() throws {
        let catalogue = try ChartCatalogue.shared.get()
        let server = try ChartCatalogue.routes()
        let top = try #require(try catalogue.ids("paid_application_popularity_per_genre", limit: 1).first)
        let answer = try server.get("/v1/apps/\(top)/ranks?country=us&chart=paid")
        #expect(answer.status == 200, "\(answer.text.prefix(300))")
        let object = try answer.json()
        #expect(object["history"] as? Bool == false)
        let charts = try #require(object["charts"] as? [[String: Any]])
        let overall = charts.first { $0["genreId"] as? Int == 36 }
        #expect(overall?["rank"] as? Int == 1, "\(charts)")
        #expect(overall?["firstSeen"] as? String == "2026-01-05T00:00:00Z", "\(charts)")
        #expect(charts.allSatisfy { $0["chart"] as? String == "paid" && $0["days"] == nil })
        // Every chart, storefront and genre: the us free overall chart's top app is in it too.
        let free = try #require(try catalogue.ids("free_application_popularity_per_genre", limit: 1).first)
        let all = try #require(try server.get("/v1/apps/\(free)/ranks").json()["charts"] as? [[String: Any]])
        #expect(all.contains { $0["chart"] as? String == "free" && $0["country"] as? String == "us"
                    && $0["genreId"] as? Int == 36 && $0["rank"] as? Int == 1 }, "\(all)")
    }

    @Test(arguments: [
        ("/v1/apps/1/ranks", 404), ("/v1/apps/x/ranks", 400), ("/v1/apps/1/ranks?chart=top", 400),
        ("/v1/apps/1/ranks?since=2026-01-01", 400), ("/v1/apps/1/ranks?history=2", 400),
        ("/v1/apps/1/ranks?history=1&since=yesterday", 400), ("/v1/apps/1/ranks?genre=x", 400),
        ("/v1/charts/us/top?limit=3", 404), ("/v1/charts/us/free?limit=0", 400), ("/v1/charts/us/free?limit=201", 400),
        ("/v1/charts/us/free?date=2026-01-05", 404), ("/v1/charts/us/free?date=05-01-2026", 400),
        ("/v1/charts/zz/free", 400), ("/v1/charts/us/free?genre=x", 400),
        ("/api/v2/us/apps/top-grossing/10/apps.json", 404), ("/api/v2/us/apps/top-free/0/apps.json", 400),
        ("/us/rss/topgrossingapplications/limit=10/json", 404), ("/us/rss/topfreeapplications/10/json", 404),
        ("/us/rss/topfreeapplications/limit=10/genre=x/json", 404),
        ("/us/rss/topfreeapplications/limit=5/xml", 404), ("/rss/topfreeapplications/limit=5/atom", 404),
        ("/us/rss/topfreeapplications/limit=5/limit=6/json", 404), ("/us/rss/topfreeapplications/sf=143441/json", 404),
        ("/WebObjects/MZStoreServices.woa/ws/RSS/topfreeapplications/limit=5/json?s=1", 400),
        ("/WebObjects/MZStoreServices.woa/ws/RSS/topfreeapplications/limit=5/json?s=us", 400),
        ("/WebObjects/MZStoreServices.woa/ws/RSS/topfreeapplications/limit=201/json", 400),
        ("/WebObjects/MZStoreServices.woa/ws/RSS/topgrossingapplications/json", 404),
        ("/rss/topfreeapplications/json?cc=zz", 400),
    ])
    func badChartRequests(target: String, status: Int) throws {
        let answer = try ChartCatalogue.routes().get(target)
        #expect(answer.status == status, "\(answer.text.prefix(300))")
    }

    /// `rss.applemarketingtools.com`'s shape: every value a string, `kind` "apps", the iPhone chart of genre 36.
    @Test func marketingToolsFeed() throws {
        let catalogue = try ChartCatalogue.shared.get()
        let answer = try ChartCatalogue.routes().get("/api/v2/us/apps/top-paid/10/apps.json")
        #expect(answer.status == 200, "\(answer.text.prefix(300))")
        let feed = try #require(try answer.json()["feed"] as? [String: Any])
        #expect(onlyStrings(feed))
        #expect(feed["title"] as? String == "Top Paid Apps")
        #expect(feed["country"] as? String == "us")
        #expect(feed["id"] as? String == "/api/v2/us/apps/top-paid/10/apps.json")
        #expect(feed["updated"] as? String == "Mon, 05 Jan 2026 00:00:00 +0000")
        let results = try #require(feed["results"] as? [[String: Any]])
        let ids = try catalogue.ids("paid_application_popularity_per_genre", limit: 10)
        #expect(results.map { $0["id"] as? String } == ids.map { String($0) })
        for result in results {
            #expect(result["kind"] as? String == "apps")
            #expect(Set(result.keys).isSubset(of: ["artistName", "id", "name", "releaseDate", "kind", "artworkUrl100",
                                                   "genres", "url"]))
            #expect((result["releaseDate"] as? String)?.count == 10)
            #expect(result["name"] is String && result["url"] is String && result["artistName"] is String)
        }
    }

    /// The legacy iTunes RSS JSON: `{"label": ...}` around every value, the app id in `id.attributes.im:id`.
    @Test func legacyRSSFeed() throws {
        let catalogue = try ChartCatalogue.shared.get()
        let server = try ChartCatalogue.routes()
        let answer = try server.get("/us/rss/topfreeipadapplications/limit=5/genre=6014/json")
        #expect(answer.status == 200, "\(answer.text.prefix(300))")
        #expect(answer.response.contentType == "text/javascript; charset=utf-8")
        let feed = try #require(try answer.json()["feed"] as? [String: Any])
        #expect(onlyStrings(feed))
        #expect((feed["title"] as? [String: Any])?["label"] as? String == "iTunes Store: Top Free iPad Apps")
        let entries = try #require(feed["entry"] as? [[String: Any]])
        let ids = try catalogue.ids("free_ipad_application_popularity_per_genre", genre: 6014, limit: 5)
        #expect(entries.map { (($0["id"] as? [String: Any])?["attributes"] as? [String: Any])?["im:id"] as? String }
                == ids.map { String($0) })
        for entry in entries {
            for key in ["im:name", "summary", "rights", "title"] {
                #expect((entry[key] as? [String: Any])?["label"] is String, "\(key)")
            }
            let price = try #require(entry["im:price"] as? [String: Any])
            #expect(price["label"] as? String == "Free")
            #expect((price["attributes"] as? [String: Any])?["amount"] as? String == "0.00000")
            let category = (entry["category"] as? [String: Any])?["attributes"] as? [String: Any]
            #expect(category?["im:id"] is String && category?["label"] is String)
            #expect((entry["im:releaseDate"] as? [String: Any])?["label"] is String)
        }
        // Without a genre: the overall chart.
        let overall = try server.get("/us/rss/toppaidapplications/limit=3/json").json()
        let top = ((overall["feed"] as? [String: Any])?["entry"] as? [[String: Any]])?.count
        #expect(top == 3)
        // As Apple's XML-to-JSON feed: one entry is the object itself, none leaves `entry` out.
        let one = try server.get("/us/rss/topfreeipadapplications/limit=1/genre=6014/json").json()
        let single = try #require((one["feed"] as? [String: Any])?["entry"] as? [String: Any], "\(one)")
        #expect(((single["id"] as? [String: Any])?["attributes"] as? [String: Any])?["im:id"] as? String
                == ids.first.map { String($0) })
        let none = try server.get("/us/rss/topfreeipadapplications/limit=5/genre=99999/json")
        #expect(none.status == 200, "\(none.text.prefix(300))")
        let empty = try #require(try none.json()["feed"] as? [String: Any])
        #expect(empty["entry"] == nil && empty["title"] != nil, "\(empty)")
    }

    /// Apple's legacy feed on its other paths (ax.itunes.apple.com's WebObjects path with the storefront's id,
    /// without a country, without a limit, its segments in another order) answers exactly what the itunes.apple.com
    /// form answers, but for the request's own path in `id` and `link`.
    @Test func theLegacyFeedOnApplesOtherPathsIsTheSameFeed() throws {
        let catalogue = try ChartCatalogue.shared.get()
        let server = try ChartCatalogue.routes()
        let other = try #require(try catalogue.otherStorefront(), "the charts rank a storefront besides us")
        let webObjects = "/WebObjects/MZStoreServices.woa/ws/RSS"
        let pairs: [(asked: String, same: String)] = [
            ("\(webObjects)/topfreeapplications//limit=5/json?s=143441", "/us/rss/topfreeapplications/limit=5/json"),
            ("\(webObjects)/toppaidipadapplications/6014/limit=3/json?s=143441",
             "/us/rss/toppaidipadapplications/limit=3/genre=6014/json"),
            ("\(webObjects)/topfreeapplications/sf=\(other.id)/genre=6014/limit=4/json",
             "/\(other.country)/rss/topfreeapplications/limit=4/genre=6014/json"),
            ("\(webObjects)/topfreeapplications/limit=4/json?s=\(other.id)-1,29",
             "/\(other.country)/rss/topfreeapplications/limit=4/json"),
            ("\(webObjects)/toppaidapplications/limit=2/json?cc=\(other.country)",
             "/\(other.country)/rss/toppaidapplications/limit=2/json"),
            ("\(webObjects)/topfreeapplications/json", "/us/rss/topfreeapplications/limit=10/json"),
            ("/us/rss/topfreeapplications/json", "/us/rss/topfreeapplications/limit=10/json"),
            ("/rss/topfreeapplications/json", "/us/rss/topfreeapplications/limit=10/json"),
            ("/rss/toppaidapplications/limit=2/json?cc=\(other.country)",
             "/\(other.country)/rss/toppaidapplications/limit=2/json"),
            ("/us/rss/topfreeapplications/genre=6014/limit=3/json",
             "/us/rss/topfreeapplications/limit=3/genre=6014/json"),
        ]
        for (asked, same) in pairs {
            let answer = try server.get(asked)
            let expected = try server.get(same)
            #expect(answer.status == 200 && expected.status == 200, "\(asked): \(answer.text.prefix(300))")
            #expect(((try expected.json()["feed"] as? [String: Any])?["entry"]) != nil, "\(same) has no entries")
            let path = String(asked.prefix { $0 != "?" })
            let canonical = String(same.prefix { $0 != "?" })
            #expect(answer.text.replacingOccurrences(of: path, with: canonical) == expected.text, "\(asked)")
            #expect(answer.text.contains("\"id\":{\"label\":\"\(path)\"}"), "\(asked)")
        }
        // The storefront's id is read: the other storefront's chart is its own, not the US one.
        let feed = try server.get("\(webObjects)/topfreeapplications/limit=5/json?s=\(other.id)").json()
        let entries = try #require((feed["feed"] as? [String: Any])?["entry"] as? [[String: Any]])
        let ids = entries.map { (($0["id"] as? [String: Any])?["attributes"] as? [String: Any])?["im:id"] as? String }
        let expected = try catalogue.ids("free_application_popularity_per_genre", storefront: other.id, limit: 5)
        #expect(ids == expected.map { String($0) })
        #expect(expected != (try catalogue.ids("free_application_popularity_per_genre", limit: 5)))
        // Apple also served XML there; epf says it serves JSON only.
        let xml = try server.get("\(webObjects)/topfreeapplications/limit=5/xml?s=143441")
        #expect(xml.status == 404 && xml.text.contains("JSON only"), "\(xml.text)")
    }

    /// `epf serve --help` lists every route the server answers: each route's name is paired with what its help line
    /// says, so a route added without a line in the help fails here. The 404 hint names the chart routes too.
    @Test func serveHelpListsEveryRoute() throws {
        let inHelp: [String: String] = [
            "healthz": "/healthz", "metrics": "/metrics", "itunes_lookup": "/lookup", "itunes_search": "/search",
            "lookup": "/v1/lookup?id=", "resolve": "/v1/resolve", "search": "/v1/search?term=",
            "storefronts": "/v1/storefronts", "genres": "/v1/genres", "status": "/v1/status",
            "changes": "/v1/changes?since=", "app_ranks": "/v1/apps/{id}/ranks", "charts": "/v1/charts/{cc}/",
            "marketing_chart": "/api/v2/{cc}/apps/{top-free|top-paid}/{limit}/apps.json",
            "rss_chart": "/{cc}/rss/{feed}/[limit={n}/][genre={g}/]json",
            "apps": "/v1/apps/{id}", "collections": "/v1/collections/{id}", "songs": "/v1/songs/{id}",
            "videos": "/v1/videos/{id}", "artists": "/v1/artists/{id}",
            "app_prices": "/v1/{apps|collections|songs|videos}/{id}/prices", "collection_prices": "/v1/{apps|coll",
            "song_prices": "/v1/{apps|collections|songs|", "video_prices": "|videos}/{id}/prices",
        ]
        #expect(EPFRoutes.routes.routeNames == Set(inHelp.keys))
        let run = try BuiltEPF.run(["serve", "--help"], in: FileManager.default.temporaryDirectory.path)
        #expect(run.status == 0, "\(run.stderr)")
        for (name, text) in inHelp { #expect(run.stdout.contains(text), "\(name): no '\(text)' in the help") }
        for text in ["/rss/{feed}/...json", "/WebObjects/MZStoreServices.woa/ws/RSS/{feed}/", "?s={storefront id}"] {
            #expect(run.stdout.contains(text), "no '\(text)' in the help")
        }
        let missing = try ChartCatalogue.routes().get("/nowhere")
        #expect(missing.status == 404)
        for text in ["/v1/charts/{cc}/{chart}", "/v1/changes", "/ranks", "/apps.json", "/rss/"] {
            #expect(missing.text.contains(text), "\(missing.text)")
        }
    }

    /// v3's one chart of every app serves the free and the paid chart, split by the app's price there.
    @Test func v3ChartSplitByPrice() throws {
        let server = try AppleCatalogue.routes()
        let paid = try server.get("/v1/charts/us/paid?limit=200").json()
        #expect(paid["source"] as? String == "application_popularity_per_genre")
        #expect(paid["splitByPrice"] as? Bool == true)
        let paidResults = try #require(paid["results"] as? [[String: Any]])
        let free = try #require(try server.get("/v1/charts/us/free?limit=200").json()["results"] as? [[String: Any]])
        #expect(!paidResults.isEmpty && !free.isEmpty)
        #expect(!paidResults.contains { $0["formattedPrice"] as? String == "Free" })
        #expect(free.allSatisfy { $0["formattedPrice"] as? String == "Free" })
        #expect(paidResults.map { $0["rank"] as? Int } == Array(1...paidResults.count))
        // Together, in v3's order, they are the v3 chart's apps that have a US price.
        let v3 = try server.catalogue.ids("""
            SELECT p.application_id FROM application_popularity_per_genre p JOIN application_price r
            ON r.application_id = p.application_id AND r.storefront_id = p.storefront_id
            WHERE p.storefront_id = 143441 AND p.genre_id = 36 ORDER BY p.application_rank
            """)
        let merged = Set((paidResults + free).compactMap { $0["trackId"] as? Int64 })
        #expect(merged == Set(v3))
        let iPad = try server.get("/v1/charts/us/free-ipad")
        #expect(iPad.status == 404)
        #expect(iPad.text.contains("iPad"))
    }

    /// A real client of Apple's legacy chart feed, itunes-app-scraper-dmi (PyPI, installed by scripts/prerequisites
    /// into .build/test-venv), against `epf serve` over a socket: it reads the app ids of the chart, in order.
    @Test func aPyPIClientReadsTheLegacyFeed() throws {
        let python = AppleClientTests.python
        #expect(FileManager.default.isExecutableFile(atPath: python),
                "no \(python): run scripts/prerequisites --test (it installs the client into .build/test-venv)")
        let catalogue = try ChartCatalogue.shared.get()
        let serve = try ServeProcess(arguments: ["--db", catalogue.database, "--port", "0", "--threads", "1"])
        defer {
            kill(serve.process.processIdentifier, SIGTERM)
            _ = serve.waitForExit(seconds: 10)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [BuiltEPF.packageRoot.appendingPathComponent("Tests/clients/chart_feed_client.py").path,
                             "http://127.0.0.1:\(serve.port)"]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let (stdout, stderr) = BuiltEPF.readToEnd(process, output: output, errors: errors)
        #expect(process.terminationStatus == 0, "\(String(decoding: stderr, as: UTF8.self))")
        let free = try catalogue.ids("free_application_popularity_per_genre", limit: 5)
        let paid = try catalogue.ids("paid_ipad_application_popularity_per_genre", genre: 6014, limit: 3)
        #expect(String(decoding: stdout, as: UTF8.self).split(separator: "\n").map(String.init) == [
            "free us: " + free.map { String($0) }.joined(separator: " "),
            "paid ipad games us: " + paid.map { String($0) }.joined(separator: " "),
        ])
    }
}
