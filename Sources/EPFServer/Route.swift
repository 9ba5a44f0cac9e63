import HTTPTransport
import JSONText

/// The API whose shapes (error bodies, malformed-parameter answers) a route follows.
enum RouteFamily: Sendable {
    /// epf's own `/v1/...` API: errors are `{"error": {"status", "message", ...}}`.
    case epf
    /// Apple's iTunes Search API (`/lookup`, `/search`): errors are `{"errorMessage", "queryParameters"}`.
    case apple
}

/// One route of the API: its path pattern, its name in metrics and logs, what it may do and its handler.
///
/// Adding a route is adding one entry to `EPFRoutes.routes`.
struct Route: Sendable {
    /// One segment of a path pattern.
    enum Segment: Equatable, Sendable {
        /// The segment must be exactly this text.
        case literal(String)
        /// Any segment, even empty (the handler says what is wrong with it), handed over in `RouteRequest.captures`.
        case capture
    }

    /// The segments after the leading `/`, e.g. `v1`, `apps`, capture, `prices`.
    let segments: [Segment]
    /// The low-cardinality name used in metrics and access logs.
    let name: String
    /// The API whose shapes its answers follow.
    let family: RouteFamily
    /// Whether the answer depends only on the target and the data, so the response cache may keep it.
    let isCacheable: Bool
    /// Whether its SQLite work may scan a lot (search, changes, counts): it runs under the time limit of
    /// `EPFServerConfiguration.queryTimeLimitMilliseconds`, so the event loop is never held for long.
    let isBounded: Bool
    /// Answers the request; a thrown `RouteError` becomes an error response in the family's shape.
    let handler: @Sendable (EPFRoutes, RouteRequest) throws -> HTTPResponse

    /// A route for a pattern such as `/v1/apps/{id}/prices` (`{...}` is a capture).
    init(_ pattern: String, name: String, family: RouteFamily = .epf, cacheable: Bool = true, bounded: Bool = false,
         _ handler: @escaping @Sendable (EPFRoutes, RouteRequest) throws -> HTTPResponse) {
        segments = pattern.split(separator: "/").map { piece in
            piece.hasPrefix("{") && piece.hasSuffix("}") ? .capture : .literal(String(piece))
        }
        self.name = name
        self.family = family
        isCacheable = cacheable
        isBounded = bounded
        self.handler = handler
    }

    /// The captured segments when `path` (split at `/`, the leading empty piece dropped) matches, else nil.
    func match(_ pieces: ArraySlice<Substring>) -> [String]? {
        guard pieces.count == segments.count else { return nil }
        var captures: [String] = []
        for (segment, piece) in zip(segments, pieces) {
            switch segment {
            case .literal(let text):
                guard piece == text else { return nil }
            case .capture:
                captures.append(String(piece))
            }
        }
        return captures
    }
}

/// The routes of an API, matched in the order given: the first whose pattern matches a path answers it.
struct RouteTable: Sendable {
    /// The routes by their number of segments, each list in the order given.
    private let bySegmentCount: [Int: [Route]]

    init(_ routes: [Route]) {
        bySegmentCount = Dictionary(grouping: routes, by: \.segments.count)
    }

    /// The names of its routes (as metrics and logs give them).
    var routeNames: Set<String> { Set(bySegmentCount.values.joined().map(\.name)) }

    /// The route of a decoded path that starts with `/` and its captures, nil when none matches.
    func match(_ path: String) -> (route: Route, captures: [String])? {
        let pieces = path.split(separator: "/", omittingEmptySubsequences: false)
        guard pieces.count >= 2, pieces[0].isEmpty, let candidates = bySegmentCount[pieces.count - 1] else {
            return nil
        }
        for route in candidates {
            if let captures = route.match(pieces.dropFirst()) { return (route, captures) }
        }
        return nil
    }
}

/// A request as a handler sees it: the HTTP request and the path segments its route captured.
struct RouteRequest: Sendable {
    let http: HTTPRequest
    let captures: [String]

    /// The last value of query parameter `name`, or nil.
    func parameter(_ name: String) -> String? { http.parameter(name) }
}

/// Why a route answered with an error instead of a body.
struct RouteError: Error {
    let status: Int
    let message: String
    var headers: [(name: String, value: String)] = []
    /// The parameter a 400 is about, when one is.
    var parameter: String? = nil
    /// Members added to the error object after the message (see `EPFRoutes.errorResponse`).
    var details: [(String, JSONValue)] = []

    static func badParameter(_ name: String, _ message: String) -> RouteError {
        RouteError(status: 400, message: "parameter '\(name)': \(message)", parameter: name)
    }
}
