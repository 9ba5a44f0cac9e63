import EPFQuery
import HTTPTransport
import JSONText

/// `GET /lookup` and `GET /search`: Apple's iTunes Search API paths, parameters, bodies and errors, so a client
/// of `https://itunes.apple.com` works unchanged against `http://host:port`.
extension EPFRoutes {
    /// `/lookup?id=...`: every item named by `id`, `upc`, `isrc`, `amgArtistId`, `amgAlbumId` or `amgVideoId`, each
    /// followed by its related items of `entity`; unknown keys are left out.
    func itunesLookup(_ request: HTTPRequest) -> HTTPResponse {
        appleAnswer(request) {
            var lookup = AppleLookupRequest()
            for (name, value) in request.query {
                if name == "isbn" || name == "ean" {
                    throw AppleError(status: 400, errorMessage: "\(name) lookups are not supported: the EPF "
                                     + "holds no \(name.uppercased())s; use id, upc, isrc, amgArtistId, amgAlbumId "
                                     + "or amgVideoId")
                }
                guard let key = AppleLookupRequest.Key(parameter: name) else { continue }
                let values = AppleParameters.list(value)
                guard !values.isEmpty, values.allSatisfy({ AppleParameters.isValid($0, for: key) }) else {
                    throw AppleError.invalid(name)
                }
                for value in values { lookup.keys.append((key, key == .isrc ? value.uppercased() : value)) }
                guard lookup.keys.count <= configuration.maxLookupIds else {
                    throw AppleError(status: 400, errorMessage: "Invalid value(s) for key(s): "
                                     + "[\(AppleError.appleKey(name))]: at most \(configuration.maxLookupIds) per call")
                }
            }
            guard !lookup.keys.isEmpty else { throw AppleError.invalid("id") }
            let media = try AppleParameters.media(request)
            lookup.entity = try AppleParameters.entity(request, media: media)
            lookup.limit = try AppleParameters.limit(request)
            if let sort = request.parameter("sort") {
                guard sort == "recent" else { throw AppleError.invalid("sort") }
                lookup.recent = true
            }
            lookup.country = try AppleParameters.country(request)
            lookup.language = try AppleParameters.language(request)
            return try withEngine { try $0.apple.lookup(lookup) }
        }
    }

    /// `/search?term=...`: ranked matches of the term in titles and artist or seller names.
    func itunesSearch(_ request: HTTPRequest) -> HTTPResponse {
        appleAnswer(request) {
            guard let term = request.parameter("term") else { throw AppleError.invalid("term") }
            guard term.utf8.count <= AppleParameters.maximumTermBytes else { throw AppleError.invalid("term") }
            var search = AppleSearchRequest(term: term)
            let media = try AppleParameters.media(request)
            search.kinds = media.flatMap { AppleVocabulary.kinds(media: $0.name) }
            search.entity = try AppleParameters.entity(request, media: media)
            if let attribute = request.parameter("attribute") {
                if let column = AppleVocabulary.searchColumn(attribute: attribute) {
                    search.column = column
                } else if AppleVocabulary.unsupportedAttributes.contains(attribute) {
                    throw AppleError(status: 400, errorMessage: "Invalid value(s) for key(s): [attributeType]: "
                                     + "\(attribute) is not supported here; the index holds titles (titleTerm, "
                                     + "songTerm, albumTerm, ...) and artist or seller names (artistTerm, "
                                     + "softwareDeveloper, ...)")
                } else {
                    throw AppleError.invalid("attribute")
                }
            }
            search.limit = try AppleParameters.limit(request)
            if let offset = request.parameter("offset") {
                guard offset.utf8.count <= 7, let number = Int(offset), number >= 0 else {
                    throw AppleError.invalid("offset")
                }
                search.offset = number
            }
            if let explicit = request.parameter("explicit") {
                switch explicit.lowercased() {
                case "yes": search.explicit = true
                case "no": search.explicit = false
                default: throw AppleError.invalid("explicit")
                }
            }
            search.country = try AppleParameters.country(request)
            search.language = try AppleParameters.language(request)
            return try withEngine { try $0.apple.search(search) }
        }
    }

    /// Apple's 400 for a query parameter whose percent-encoding or UTF-8 is malformed.
    func appleRefusal(_ request: HTTPRequest, malformed parameter: String) -> HTTPResponse {
        appleAnswer(request) { throw AppleError.invalid(parameter) }
    }

    /// Runs a handler and answers like Apple: `{"resultCount": N, "results": [...]}`, wrapped in the JSONP
    /// callback when one is given; every failure a JSON body with `errorMessage` and `queryParameters`.
    private func appleAnswer(_ request: HTTPRequest,
                             _ body: () throws -> [JSONValue]) -> HTTPResponse {
        do {
            let callback = try AppleParameters.callback(request)
            let results = try body()
            var bytes: [UInt8] = []
            // Stored documents are most of the body: room for them, the wrapper and the callback.
            let documents = results.reduce(0) { total, value in
                if case .serialized(let document) = value { return total + document.count }
                return total + 1024
            }
            bytes.reserveCapacity(documents + results.count + 64 + (callback?.utf8.count ?? 0))
            if let callback {
                // "/**/" keeps the first bytes from being read as anything but script (Rosetta Flash).
                bytes.append(contentsOf: "/**/\(callback)(".utf8)
            }
            // {"resultCount":N,"results":[...]}, stored documents copied once, straight into the body.
            bytes.append(contentsOf: Self.resultCountKey)
            Self.appendDigits(results.count, to: &bytes)
            bytes.append(contentsOf: Self.resultsKey)
            for (index, value) in results.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                if case .serialized(let document) = value {
                    bytes.append(contentsOf: document)
                } else {
                    value.write(to: &bytes)
                }
            }
            bytes.append(contentsOf: Self.resultsEnd)
            if callback != nil { bytes.append(contentsOf: Self.callbackEnd) }
            bytes.append(UInt8(ascii: "\n"))
            return HTTPResponse(status: 200, body: bytes, contentType: Self.appleContentType,
                                lastModified: defaultLastModified, cache: .public, headers: Self.appleHeaders)
        } catch let error as AppleError {
            return appleError(error.status, error.errorMessage)
        } catch let error as AppleLookupError {
            return appleError(400, error.description)
        } catch let error as RouteError {
            if error.status == 400, let parameter = error.parameter {
                return appleError(400, AppleError.invalid(parameter).errorMessage)
            }
            return appleError(error.status, error.message, headers: error.headers)
        } catch {
            return appleError(500, "internal error: \(error)")
        }
    }

    private static let resultCountKey = Array(#"{"resultCount":"#.utf8)
    private static let resultsKey = Array(#","results":["#.utf8)
    private static let resultsEnd = Array("]}".utf8)
    private static let callbackEnd = Array(");".utf8)

    /// The decimal digits of a count, without making a String.
    private static func appendDigits(_ number: Int, to bytes: inout [UInt8]) {
        let number = max(0, number)
        var divisor = 1
        while divisor <= number / 10 { divisor *= 10 }
        repeat {
            bytes.append(UInt8(ascii: "0") + UInt8(number / divisor % 10))
            divisor /= 10
        } while divisor > 0
    }

    /// Apple's error body: the message and Apple's description of the parameters it takes.
    func appleError(_ status: Int, _ message: String,
                            headers: [(name: String, value: String)] = []) -> HTTPResponse {
        var body = JSONValue.object([
            ("errorMessage", .string(message)),
            ("queryParameters", .object([
                ("output", .string("json")),
                ("callback", .string("A javascript function to handle your search results")),
                ("country", .string("ISO-2A country code")),
                ("limit", .string("The number of search results to return")),
                ("term", .string("A search string")),
                ("lang", .string("ISO-2A language code")),
            ])),
        ]).serialized()
        body.append(UInt8(ascii: "\n"))
        return HTTPResponse(status: status, body: body, contentType: Self.appleContentType,
                            lastModified: defaultLastModified, cache: .noStore,
                            headers: headers + Self.appleHeaders)
    }

    /// What Apple's service sends with every answer, JSON and JSONP alike: clients written against it accept it.
    static let appleContentType = "text/javascript; charset=utf-8"
    /// Sent with every answer on Apple's paths: the body is never to be sniffed as anything but its type.
    static let appleHeaders: [(name: String, value: String)] = [("X-Content-Type-Options", "nosniff")]
}
