import EPFImport
@testable import EPFServer
import EPFSQLite
import EPFTestSupport
import Foundation
import EPFStore
import HTTPTransport
import Testing

@Suite("API routes, called without a socket")
struct RoutesTests {
    @Test func appByID() throws {
        let server = try RouteHarness()
        defer { server.remove() }
        let response = try server.get("/v1/apps/364709193")
        #expect(response.status == 200)
        #expect(response.response.contentType == "application/json; charset=utf-8")
        let object = try response.json()
        #expect(object["trackId"] as? Int == 364709193)
        #expect(object["trackName"] as? String == "iBooks")
        #expect(object["formattedPrice"] as? String == "Free")
        #expect(object["wrapperType"] as? String == "software")
    }

    @Test(arguments: [
        ("/v1/collections/500000001", "collectionId", 500000001),
        ("/v1/songs/600000001", "trackId", 600000001),
        ("/v1/videos/800000001", "trackId", 800000001),
        ("/v1/artists/284417353", "artistId", 284417353),
    ])
    func entities(path: String, key: String, id: Int) throws {
        let server = try RouteHarness()
        defer { server.remove() }
        let response = try server.get(path)
        #expect(response.status == 200)
        #expect(try response.json()[key] as? Int == id)
    }

    @Test(arguments: ["/v1/apps/1", "/v1/songs/364709193", "/v1/artists/999", "/v1/apps/999/prices"])
    func missingEntityIs404(path: String) throws {
        let server = try RouteHarness()
        defer { server.remove() }
        let response = try server.get(path)
        #expect(response.status == 404)
        let error = try #require(try response.json()["error"] as? [String: Any])
        #expect(error["status"] as? Int == 404)
        #expect((error["message"] as? String)?.isEmpty == false)
    }

    @Test(arguments: [
        ("/v1/apps/abc", "'id'"), ("/v1/apps/-5", "'id'"), ("/v1/apps/0", "'id'"),
        ("/v1/apps/99999999999999999999", "'id'"), ("/v1/apps/364709193?country=zz", "'country'"),
        ("/v1/lookup", "'id' or 'url'"), ("/v1/lookup?id=", "'id'"), ("/v1/lookup?id=1&country=xx", "'country'"),
        ("/v1/lookup?id=1&lang=%21%21", "'lang'"), ("/v1/search", "'term'"), ("/v1/search?term=a&limit=0", "'limit'"),
        ("/v1/search?term=a&limit=x", "'limit'"), ("/v1/search?term=a&entity=spaceship", "'entity'"),
        ("/v1/resolve", "'url'"), ("/v1/resolve?url=nothing", "'url'"),
    ])
    func badParameterIs400NamingIt(path: String, name: String) throws {
        let server = try RouteHarness()
        defer { server.remove() }
        let response = try server.get(path)
        #expect(response.status == 400, "\(path)")
        let message = try #require((try response.json()["error"] as? [String: Any])?["message"] as? String)
        #expect(message.contains(name), "\(path): \(message)")
        #expect(response.response.cache == .noStore)
    }

    @Test func lookupShapeAndInvalidIds() throws {
        let server = try RouteHarness()
        defer { server.remove() }
        let response = try server.get("/v1/lookup?id=364709193,562148264,42&country=gb")
        #expect(response.status == 200)
        let object = try response.json()
        #expect(object["resultCount"] as? Int == 2)
        let results = try #require(object["results"] as? [[String: Any]])
        #expect(results.map { $0["trackId"] as? Int } == [364709193, 562148264])
        #expect(results[1]["currency"] as? String == "GBP")
        #expect(object["invalidIds"] as? [String] == ["42"])
    }

    @Test func lookupByStoreLink() throws {
        let server = try RouteHarness()
        defer { server.remove() }
        let link = "https%3A%2F%2Fapps.apple.com%2Fus%2Fapp%2Fibooks%2Fid364709193%3Fmt%3D8"
        let response = try server.get("/v1/lookup?url=\(link)")
        #expect(response.status == 200)
        let results = try #require(try response.json()["results"] as? [[String: Any]])
        #expect(results.first?["trackId"] as? Int == 364709193)
    }

    @Test func lookupLimitIs200Ids() throws {
        let server = try RouteHarness()
        defer { server.remove() }
        let ids200 = (1...200).map(String.init).joined(separator: ",")
        #expect(try server.get("/v1/lookup?id=\(ids200)").status == 200)
        let ids201 = (1...201).map(String.init).joined(separator: ",")
        let response = try server.get("/v1/lookup?id=\(ids201)")
        #expect(response.status == 400)
        #expect(response.text.contains("200"))
    }

    @Test func resolve() throws {
        let server = try RouteHarness()
        defer { server.remove() }
        let response = try server.get("/v1/resolve?url=https://apps.apple.com/us/app/ibooks/id364709193")
        #expect(response.status == 200)
        #expect(response.text == "{\"id\":364709193,\"kind\":\"software\",\"country\":\"us\"}\n")
        #expect(try server.get("/v1/resolve?url=https://apps.apple.com/us/app/x/id1234").status == 404)
    }

    @Test func searchWithPlusAndPercent() throws {
        let server = try RouteHarness()
        defer { server.remove() }
        let response = try server.get("/v1/search?term=caf%C3%A9+ol&entity=software&country=us&limit=5")
        #expect(response.status == 200, "\(response.text)")
        let results = try #require(try response.json()["results"] as? [[String: Any]])
        #expect(results.first?["trackId"] as? Int == 700000001)
    }

    @Test func pricesStorefrontsGenres() throws {
        let server = try RouteHarness()
        defer { server.remove() }
        let prices = try server.get("/v1/apps/562148264/prices").json()
        let rows = try #require(prices["prices"] as? [[String: Any]])
        #expect(rows.count == 6)
        #expect(rows.contains { $0["formattedPrice"] as? String == "¥120" })
        let storefronts = try server.get("/v1/storefronts").json()
        #expect(storefronts["resultCount"] as? Int == 6)
        let genres = try server.get("/v1/genres").json()
        #expect((genres["results"] as? [[String: Any]])?.first?["name"] as? String == "App Store")
    }

    @Test func statusAndHealth() throws {
        let server = try RouteHarness()
        defer { server.remove() }
        let status = try server.get("/v1/status")
        #expect(status.status == 200)
        let object = try status.json()
        #expect(object["exportDate"] as? String == "2016-01-06T10:00:01Z")
        let tables = try #require(object["tables"] as? [[String: Any]])
        #expect(tables.contains { $0["name"] as? String == "application" && $0["rows"] as? Int == 7 })
        let health = try server.get("/healthz")
        #expect(health.status == 200)
        #expect(try health.json()["status"] as? String == "ok")
        #expect(health.response.cache == .noStore)
    }

    @Test func unknownRouteAndMethod() throws {
        let server = try RouteHarness()
        defer { server.remove() }
        #expect(try server.get("/nope").status == 404)
        #expect(try server.get("/v1/apps").status == 404)
        #expect(try server.get("/v1/apps/1/2/3").status == 404)
        let response = try server.get("/v1/apps/364709193", method: .other("DELETE"))
        #expect(response.status == 405)
        #expect(response.response.headers.contains { $0.name == "Allow" && $0.value == "GET, HEAD" })
        #expect(try response.json()["error"] != nil)
    }

    @Test func statusHasTheKeysAndTypesOfEpfStatusJSON() throws {
        let server = try RouteHarness()
        defer { server.remove() }
        let served = try JSONSerialization.jsonObject(with: Data(server.get("/v1/status").response.body))
        let connection = try SQLiteConnection(path: server.fixture.path, mode: .readOnly)
        let cli = try StoreStatus.read(connection, databasePath: server.fixture.path).json().serialized()
        var expected = try #require(try JSONSerialization.jsonObject(with: Data(cli)) as? [String: Any])
        var got = try #require(served as? [String: Any])
        #expect(got.removeValue(forKey: "server") != nil)
        #expect(got["exportDate"] is String && got["exportDateMs"] is Int)
        // The fixture has no import bookkeeping: the server falls back on the data's newest export_date.
        #expect(Set(got.keys) == Set(expected.keys))
        for key in ["sizeBytes", "exportDate", "exportDateMs", "newestExportDate"] {
            expected[key] = nil
            got[key] = nil
        }
        #expect(NSDictionary(dictionary: got) == NSDictionary(dictionary: expected))
    }

    @Test(arguments: [
        ("/healthz", "healthz", []), ("/metrics", "metrics", []), ("/v1/lookup", "lookup", []),
        ("/v1/resolve", "resolve", []), ("/v1/search", "search", []), ("/v1/storefronts", "storefronts", []),
        ("/v1/genres", "genres", []), ("/v1/status", "status", []), ("/v1/apps/12", "apps", ["12"]),
        ("/v1/collections/x", "collections", ["x"]), ("/v1/apps/5/prices", "app_prices", ["5"]),
        ("/v1/songs/5/prices", "song_prices", ["5"]), ("/lookup", "itunes_lookup", []),
        ("/search", "itunes_search", []),
    ])
    func pathsParseIntoRoutes(path: String, name: String, captures: [String]) {
        let match = EPFRoutes.routes.match(path)
        #expect(match?.route.name == name)
        #expect(match?.captures == captures)
    }

    @Test(arguments: ["/", "/v1", "/v1/", "/v1/nope", "/v2/lookup", "/v1/artists/5/prices", "/v1/apps/1/2/3",
                      "/healthz/", "*"])
    func unknownPathsHaveNoRoute(path: String) {
        #expect(EPFRoutes.routes.match(path) == nil)
    }

    @Test func routeNamesAndCacheability() {
        #expect(EPFRoutes.routes.match("/v1/collections/1")?.route.name == "collections")
        #expect(EPFRoutes.routes.match("/v1/apps/1/prices")?.route.name == "app_prices")
        #expect(EPFRoutes.routes.match("/v1/collections/1/prices")?.route.name == "collection_prices")
        #expect(EPFRoutes.routes.match("/v1/apps/1")?.route.isCacheable == true)
        for path in ["/v1/status", "/healthz", "/metrics"] {
            #expect(EPFRoutes.routes.match(path)?.route.isCacheable == false)
        }
        #expect(EPFRoutes.routes.match("/lookup")?.route.family == .apple)
        #expect(EPFRoutes.routes.match("/v1/lookup")?.route.family == .epf)
    }

    /// What the transport refuses is answered in the shape of the API the path belongs to, `Allow` with a 501.
    @Test func transportFailuresTakeTheShapeOfTheirPath() throws {
        let server = try RouteHarness()
        defer { server.remove() }
        let apple = RouteAnswer(response: server.routes.respond(to: HTTPFailure(
            status: 431, message: "request headers larger than 16384 bytes", route: "invalid", path: "/lookup")))
        #expect(apple.status == 431)
        #expect(try apple.json()["errorMessage"] as? String == "request headers larger than 16384 bytes")
        let epf = RouteAnswer(response: server.routes.respond(to: HTTPFailure(
            status: 501, message: "Transfer-Encoding is not supported", route: "invalid", path: "/v1/lookup")))
        #expect((try epf.json()["error"] as? [String: Any])?["status"] as? Int == 501)
        #expect(epf.response.headers.contains { $0.name == "Allow" && $0.value == "GET, HEAD" })
        let unknown = RouteAnswer(response: server.routes.respond(to: HTTPFailure(
            status: 503, message: "too many open connections", route: "overload", headers: [("Retry-After", "1")])))
        #expect(try unknown.json()["error"] != nil)
        #expect(unknown.response.headers.contains { $0.name == "Retry-After" })
    }

    /// A route that may scan stops at the time limit with a 503; a lookup is not bounded.
    @Test func scanningRoutesStopAtTheTimeLimit() throws {
        let server = try RouteHarness(queryTimeLimitMilliseconds: 0)
        defer { server.remove() }
        let search = try server.get("/v1/search?term=book")
        #expect(search.status == 503)
        #expect(search.text.contains("took longer than 0 ms"))
        #expect(search.response.headers.contains { $0.name == "Retry-After" })
        let apple = try server.get("/search?term=book")
        #expect(apple.status == 503)
        #expect(try apple.json()["errorMessage"] != nil)
        #expect(try server.get("/v1/status").status == 503)
        #expect(try server.get("/v1/apps/364709193").status == 200)
    }

    /// Error bodies are the application's: the JSON writer escapes what a message may hold.
    @Test func errorBodyEscapes() throws {
        let server = try RouteHarness()
        defer { server.remove() }
        let response = server.routes.errorResponse(400, "a\"b\\c\n\u{01}é\u{2028}", route: "other")
        #expect(String(decoding: response.body, as: UTF8.self)
                 == "{\"error\":{\"status\":400,\"message\":\"a\\\"b\\\\c\\n\\u0001é\\u2028\"}}\n")
    }
}

/// The API's routes over their own fixture database, called directly with requests.
final class RouteHarness {
    let fixture: CatalogueDatabase
    let routes: EPFRoutes

    init(extraSQL: String = "", queryTimeLimitMilliseconds: Int? = nil) throws {
        fixture = try CatalogueDatabase(extraSQL: extraSQL, walMode: true)
        var configuration = EPFServerConfiguration(databasePath: fixture.path, status: StoreStatusReader())
        if let queryTimeLimitMilliseconds { configuration.queryTimeLimitMilliseconds = queryTimeLimitMilliseconds }
        routes = try EPFRoutes(configuration: configuration)
    }

    func remove() {
        fixture.remove()
    }

    /// The routes' answer to one request for `target`.
    func get(_ target: String, method: HTTPMethod = .get) throws -> RouteAnswer {
        let request = try #require(HTTPRequest(method: method, target: target))
        return RouteAnswer(response: routes.respond(to: request))
    }
}

/// A responder's answer, with the helpers the socket tests' `Response` has.
struct RouteAnswer {
    let response: HTTPResponse

    var status: Int { response.status }
    var text: String { String(decoding: response.body, as: UTF8.self) }

    func json() throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any] else {
            throw ClientError(description: "not a JSON object: \(text.prefix(200))")
        }
        return object
    }
}
