import EPFQuery
import JSONText

/// A request path parsed into the API route it names.
enum Route: Equatable, Sendable {
    case health
    case metrics
    case lookup
    case resolve
    case search
    case storefronts
    case genres
    case status
    /// `/v1/changes`: ids removed, added or updated by the exports since a date.
    case changes
    /// `/v1/apps/{id}`, `/v1/collections/{id}`, ...: the id as sent, checked by the handler.
    case entity(EntityKind, id: String)
    /// `/v1/apps/{id}/prices`, `/v1/collections/{id}/prices`, `/v1/songs/...`, `/v1/videos/...`: the prices in
    /// every storefront, or with `history=1` the recorded price changes.
    case prices(EntityKind, id: String)
    /// `/lookup` and `/search`: Apple's own paths and parameters (see `AppleRoutes.swift`).
    case itunesLookup
    case itunesSearch

    /// The route of a decoded path that starts with `/`, nil when none matches.
    init?(path: String) {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        guard segments.count >= 2, segments[0].isEmpty else { return nil }
        switch (segments.count, segments[1]) {
        case (2, "healthz"): self = .health
        case (2, "metrics"): self = .metrics
        case (2, "lookup"): self = .itunesLookup
        case (2, "search"): self = .itunesSearch
        case (3, "v1"):
            switch segments[2] {
            case "lookup": self = .lookup
            case "resolve": self = .resolve
            case "search": self = .search
            case "storefronts": self = .storefronts
            case "genres": self = .genres
            case "status": self = .status
            case "changes": self = .changes
            default: return nil
            }
        case (4, "v1"), (5, "v1"):
            guard let kind = Self.entityKinds[String(segments[2])] else { return nil }
            let id = String(segments[3])
            if segments.count == 5 {
                guard kind != .artist, segments[4] == "prices" else { return nil }
                self = .prices(kind, id: id)
            } else {
                self = .entity(kind, id: id)
            }
        default:
            return nil
        }
    }

    /// The low-cardinality name used in metrics and access logs.
    var name: String {
        switch self {
        case .health: return "healthz"
        case .metrics: return "metrics"
        case .lookup: return "lookup"
        case .resolve: return "resolve"
        case .search: return "search"
        case .storefronts: return "storefronts"
        case .genres: return "genres"
        case .status: return "status"
        case .changes: return "changes"
        case .entity(let kind, _): return Self.entitySegment(kind)
        case .prices(.software, _): return "app_prices"
        case .prices(let kind, _): return String(Self.entitySegment(kind).dropLast()) + "_prices"
        case .itunesLookup: return "itunes_lookup"
        case .itunesSearch: return "itunes_search"
        }
    }

    /// Whether the answer depends only on the target and the data, so the response cache may keep it.
    var isCacheable: Bool {
        switch self {
        case .health, .metrics, .status: return false
        case .lookup, .resolve, .search, .storefronts, .genres, .entity, .prices, .changes: return true
        case .itunesLookup, .itunesSearch: return true
        }
    }

    /// The path segment after `/v1/` of each entity route, by the kind it serves.
    private static func entitySegment(_ kind: EntityKind) -> String {
        switch kind {
        case .software: return "apps"
        case .album, .ebook: return "collections"
        case .song: return "songs"
        case .video: return "videos"
        case .artist: return "artists"
        }
    }

    /// The kind each entity route serves, by its path segment.
    private static let entityKinds: [String: EntityKind] = [
        "apps": .software, "collections": .album, "songs": .song, "videos": .video, "artists": .artist,
    ]
}

/// Why a route answered with an error instead of a body.
struct RouteError: Error {
    let status: Int
    let message: String
    var headers: [(name: String, value: String)] = []
    /// The parameter a 400 is about, when one is.
    var parameter: String? = nil
    /// Members added to the error object after the message (see `HTTPResponse.error`).
    var details: [(String, JSONValue)] = []

    static func badParameter(_ name: String, _ message: String) -> RouteError {
        RouteError(status: 400, message: "parameter '\(name)': \(message)", parameter: name)
    }
}

