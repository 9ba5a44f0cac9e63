import EPFServer
import EPFTestSupport
import Foundation
import HTTPTransport

/// Apple's `/lookup` and `/search` parameter handling, through the real routes over the small test catalogue.
///
/// The first input byte picks the path; the rest is the query string. Every answer must be 200 or 400 (never a
/// 5xx: bad parameters are the client's fault), with a JSON body: `resultCount` and `results` for 200, an
/// `errorMessage` for 400, wrapped as `/**/name(...);` when a valid JSONP callback was given.
enum AppleParametersHarness {
    /// The routes, over a catalogue database made once per process (in a temporary directory). Used by one
    /// thread at a time, as a server worker uses its own: libFuzzer runs one input at a time.
    nonisolated(unsafe) static let fixture: (database: CatalogueDatabase, routes: EPFRoutes)? = {
        do {
            let database = try CatalogueDatabase()
            // The fuzzer ends by exit(): remove the database then, not only when a test harness is torn down.
            atexit { AppleParametersHarness.fixture?.database.remove() }
            var configuration = EPFServerConfiguration(databasePath: database.path)
            configuration.responseCacheEntries = 0
            return (database, try EPFRoutes(configuration: configuration))
        } catch {
            return nil
        }
    }()

    static func run(_ data: UnsafeRawBufferPointer) throws(FuzzFailure) {
        guard let knob = data.first else { return }
        guard let routes = fixture?.routes else {
            throw FuzzFailure(description: "cannot make the catalogue database")
        }
        let path = ["/lookup", "/search", "/v1/lookup", "/v1/search"][Int(knob & 3)]
        let query = String(decoding: data.dropFirst(), as: UTF8.self)
        guard let request = HTTPRequest(method: .get, target: path + "?" + query) else { return }
        let response = routes.respond(to: request)
        let expected = response.status == 200 || response.status == 400
            || (path.hasPrefix("/v1") && response.status == 404)
        try check(expected,
                  "\(path)?\(query.debugDescription): status \(response.status) "
                      + String(decoding: response.body.prefix(300), as: UTF8.self))
        guard !path.hasPrefix("/v1") else { return }
        var body = response.body
        if body.starts(with: Array("/**/".utf8)), let open = body.firstIndex(of: UInt8(ascii: "(")) {
            try check(body.suffix(3).elementsEqual(");\n".utf8), "JSONP body does not end in ');'")
            body = Array(body[(open + 1)..<(body.count - 3)])
        }
        let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]
        try check(object != nil, "\(path)?\(query.debugDescription): body is not a JSON object: "
                      + String(decoding: body.prefix(300), as: UTF8.self))
        if response.status == 200 {
            try check(object?["resultCount"] is Int && object?["results"] is [Any], "200 without Apple's shape")
        } else {
            try check(object?["errorMessage"] is String, "\(response.status) without an errorMessage")
        }
    }
}
