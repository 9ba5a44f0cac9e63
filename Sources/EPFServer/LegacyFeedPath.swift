import EPFQuery
import HTTPTransport

/// The paths Apple served its legacy chart feed on, each answered by `EPFRoutes.legacyChart`.
enum LegacyFeedForm: Sendable {
    /// `/{cc}/rss/{feed}/...`: itunes.apple.com's form, the country in the path.
    case country
    /// `/rss/{feed}/...`: the same without a country: the storefront of `?cc=`, else Apple's default, us.
    case noCountry
    /// `/WebObjects/MZStoreServices.woa/ws/RSS/{feed}/...`: the form clients such as itunes-app-scraper-dmi send to
    /// ax.itunes.apple.com, the storefront by its id (`?s=143441` or `sf=143441` in the path) or `?cc=`; a segment
    /// that is a bare number is the genre there (`.../RSS/topfreeapplications/6014/limit=5/json`).
    case webObjects

    /// The pattern of the path up to the feed's name, whose captures come before the feed's.
    var prefix: String {
        switch self {
        case .country: "/{cc}/rss/{feed}"
        case .noCountry: "/rss/{feed}"
        case .webObjects: "/WebObjects/MZStoreServices.woa/ws/RSS/{feed}"
        }
    }
}

/// A legacy chart-feed request as its path and query say it: which feed, which storefront, how deep, which genre.
///
/// The segments between the feed's name and the format are `limit=N`, `genre=ID` and `sf=ID` in any order, each at
/// most once; an empty segment (`//`) says nothing. Without `limit=` the feed holds `defaultLimit` entries, as
/// Apple's did; without a genre it is the chart of all apps. Only `json` is served.
struct LegacyFeedPath: Sendable, Equatable {
    /// The feed's name as the path gives it, e.g. `topfreeapplications` (`EPFRoutes.legacyFeeds` says which exist).
    var feed: String
    /// The storefront's country code, from the path or `?cc=`; nil when the storefront is given by its id or not at
    /// all (then it is `storefrontID`'s, or `defaultCountry`).
    var country: String?
    /// The storefront's EPF id, from `sf=` in the path or `?s=`, when no country is given.
    var storefrontID: Int64?
    /// How many entries, at most.
    var limit = LegacyFeedPath.defaultLimit
    /// The chart's genre: `ChartQueries.allApps` (36) unless the path names one.
    var genre: Int64

    /// Entries in a feed whose path has no `limit=`: 10, as Apple's legacy feed answered.
    static let defaultLimit = 10
    /// The storefront of a feed whose request names none: Apple's default, the United States.
    static let defaultCountry = "us"

    /// Reads a request matched by a route of `form` whose captures are the country (`.country` only), the feed's
    /// name, the segments in between and the format last; throws a `RouteError` saying what is wrong, and where.
    init(_ form: LegacyFeedForm, captures: [String], request: HTTPRequest) throws {
        var rest = captures[...]
        if form == .country, let country = rest.popFirst() { self.country = country }
        feed = rest.popFirst() ?? ""
        genre = ChartQueries.allApps
        let format = rest.popLast() ?? ""
        guard format == "json" else {
            if format == "xml" {
                throw RouteError(status: 404, message: "epf serves Apple's legacy feed as JSON only: end the path "
                                 + "with /json in place of /xml")
            }
            throw RouteError(status: 404, message: "expected json at the end of the feed's path, got "
                             + "'\(format.prefix(40))'")
        }
        var seen = Set<String>()
        for segment in rest where !segment.isEmpty {
            let (key, value) = Self.option(segment, form: form)
            guard seen.insert(key).inserted else {
                throw RouteError(status: 404, message: "\(key)= is given twice in the feed's path")
            }
            switch key {
            case "limit": limit = try EPFRoutes.feedLimit(value)
            case "genre":
                guard let id = Int64(value), id >= 0 else {
                    throw RouteError(status: 404,
                                     message: "expected genre=ID in the path, got '\(segment.prefix(40))'")
                }
                genre = id
            case "sf" where form != .country:
                storefrontID = try Self.storefront(value, name: "sf")
            default:
                throw RouteError(status: 404, message: "'\(segment.prefix(40))' in the feed's path is not "
                                 + "limit=N or genre=ID")
            }
        }
        if form != .country, storefrontID == nil {
            if let id = request.parameter("s") {
                storefrontID = try Self.storefront(id, name: "s")
            } else if let country = request.parameter("cc") {
                self.country = country
            }
        }
    }

    /// A segment's key and value: `limit=5` is ("limit", "5"); on the WebObjects path a bare number is a genre.
    private static func option(_ segment: String, form: LegacyFeedForm) -> (key: String, value: String) {
        if let equals = segment.firstIndex(of: "=") {
            return (String(segment[..<equals]), String(segment[segment.index(after: equals)...]))
        }
        if form == .webObjects, segment.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) { return ("genre", segment) }
        return (segment, "")
    }

    /// A storefront id: digits, optionally followed by Apple's `-1,29` style suffix (`143441-1,29`), which is
    /// ignored.
    private static func storefront(_ text: String, name: String) throws -> Int64 {
        let digits = text.prefix { $0 != "-" && $0 != "," }
        guard digits.utf8.count <= 9, let id = Int64(digits), id > 0 else {
            throw RouteError.badParameter(name, "must be a storefront id such as 143441 (us), got "
                                          + "'\(text.prefix(40))'")
        }
        return id
    }
}
