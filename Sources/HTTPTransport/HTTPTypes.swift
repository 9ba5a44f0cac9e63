/// The HTTP version of a request line.
package enum HTTPVersion: Sendable, Equatable {
    /// `HTTP/1.0`: the connection closes after the response unless the client asks for keep-alive.
    case http10
    /// `HTTP/1.1`: keep-alive unless the client sends `Connection: close`.
    case http11
}

/// The method of a request. Only GET and HEAD are served; anything else gets 405.
package enum HTTPMethod: Sendable, Equatable, CustomStringConvertible {
    case get
    case head
    /// Any other syntactically valid method token, e.g. `POST`.
    case other(String)

    package var description: String {
        switch self {
        case .get: return "GET"
        case .head: return "HEAD"
        case .other(let name): return name
        }
    }
}

/// One parsed request head. Bodies are never accepted, so this is the whole request.
package struct HTTPRequest: Sendable {
    /// The request method.
    package var method: HTTPMethod
    /// The request target exactly as sent (for access logs).
    package var target: String
    /// The percent-decoded path, e.g. `/v1/apps/364709193`.
    package var path: String
    /// Query parameters in order, percent-decoded with `+` as space.
    package var query: [(name: String, value: String)]
    /// The protocol version.
    package var version: HTTPVersion
    /// Whether the connection stays open after the response (from the version and `Connection`).
    package var keepAlive: Bool
    /// The raw `If-None-Match` value, when sent.
    package var ifNoneMatch: String?
    /// The raw `If-Modified-Since` value, when sent.
    package var ifModifiedSince: String?
    /// The name of the first query parameter whose percent-encoding or UTF-8 is malformed (its bytes as sent when
    /// the name itself is), nil when every one decodes. `query` then holds only the parameters before it. Such a
    /// request is well-formed HTTP; the responder answers 400 in its own shape.
    package var malformedQueryParameter: String?

    /// Creates a request; used by the parser and by tests of responders.
    package init(method: HTTPMethod, target: String, path: String, query: [(name: String, value: String)],
                version: HTTPVersion = .http11, keepAlive: Bool = true,
                ifNoneMatch: String? = nil, ifModifiedSince: String? = nil) {
        self.method = method
        self.target = target
        self.path = path
        self.query = query
        self.version = version
        self.keepAlive = keepAlive
        self.ifNoneMatch = ifNoneMatch
        self.ifModifiedSince = ifModifiedSince
    }

    /// Creates a request for a target as a client sends it (`/v1/apps/1?country=gb`), decoded as the parser
    /// decodes it: for responders called without a socket (tests, tools). Nil when the target is malformed.
    package init?(method: HTTPMethod = .get, target: String) {
        var bytes = Array(target.utf8)
        let decoded = bytes.withUnsafeMutableBufferPointer { HTTPParser.decodeTarget(UnsafeBufferPointer($0)) }
        guard case .success(let parts) = decoded else { return nil }
        self.init(method: method, target: target, path: parts.path, query: parts.query)
        malformedQueryParameter = parts.malformed
    }

    /// The last value of query parameter `name`, or nil.
    package func parameter(_ name: String) -> String? {
        query.last(where: { $0.name == name })?.value
    }
}

/// How clients and proxies may cache a response.
package enum CachePolicy: Sendable, Equatable {
    /// `Cache-Control: public, max-age=N` with the server's configured N.
    case `public`
    /// `Cache-Control: no-store`, for errors, health and metrics.
    case noStore
}

/// A response built by a responder; the transport adds the framing headers.
///
/// The transport adds `Date`, `Content-Length`, `ETag` (a hash of the body unless set), `Last-Modified`,
/// `Cache-Control`, `Access-Control-Allow-Origin: *` and `Connection`, turns GET/HEAD 200s into 304s
/// for matching `If-None-Match` / `If-Modified-Since`, and drops the body for HEAD.
package struct HTTPResponse: Sendable {
    /// The status code, e.g. 200 or 404.
    package var status: Int
    /// The body bytes (UTF-8 JSON for every API route).
    package var body: [UInt8]
    /// The full `Content-Type` value.
    package var contentType: String
    /// Seconds since 1970 for `Last-Modified`; nil uses the server's start time.
    package var lastModified: Int64?
    /// Cache policy.
    package var cache: CachePolicy
    /// Extra header lines, e.g. `("Allow", "GET, HEAD")`.
    package var headers: [(name: String, value: String)]
    /// A low-cardinality route name for metrics and logs, e.g. `"apps"`.
    package var route: String

    /// The JSON content type.
    package static let jsonType = "application/json; charset=utf-8"

    /// Creates a response.
    package init(status: Int, body: [UInt8], contentType: String = HTTPResponse.jsonType,
                lastModified: Int64? = nil, cache: CachePolicy = .public,
                headers: [(name: String, value: String)] = [], route: String = "other") {
        self.status = status
        self.body = body
        self.contentType = contentType
        self.lastModified = lastModified
        self.cache = cache
        self.headers = headers
        self.route = route
    }
}

/// A request the transport answers without routing it: bytes that are not a request it serves, too many
/// connections, a request not received in time. The responder renders the body (`HTTPResponder.respond(to:)`):
/// error shapes belong to the application, which may answer in another API's shape on its paths.
package struct HTTPFailure: Sendable {
    /// The status to answer with, e.g. 400, 414 or 503.
    package var status: Int
    /// What was wrong, for the body.
    package var message: String
    /// The low-cardinality name for metrics and logs: `invalid`, `overload` or `timeout`.
    package var route: String
    /// The path of the request line as sent (not decoded, without the query), when the bytes got that far: lets
    /// the application answer in the shape of the API the client was calling.
    package var path: String?
    /// Header lines the transport asks for, e.g. `Retry-After` on an overload.
    package var headers: [(name: String, value: String)]

    /// Creates a failure.
    package init(status: Int, message: String, route: String, path: String? = nil,
                headers: [(name: String, value: String)] = []) {
        self.status = status
        self.message = message
        self.route = route
        self.path = path
        self.headers = headers
    }
}

/// Reason phrases for the status codes this server sends.
enum HTTPStatus {
    static func reason(_ status: Int) -> String {
        switch status {
        case 200: return "OK"
        case 304: return "Not Modified"
        case 400: return "Bad Request"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 408: return "Request Timeout"
        case 413: return "Content Too Large"
        case 414: return "URI Too Long"
        case 431: return "Request Header Fields Too Large"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 503: return "Service Unavailable"
        case 505: return "HTTP Version Not Supported"
        default: return "Status \(status)"
        }
    }
}
