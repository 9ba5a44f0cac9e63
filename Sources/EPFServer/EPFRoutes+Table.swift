import EPFQuery
import HTTPTransport

/// Every route of the API, in one table: adding a route is adding an entry here (and its handler).
extension EPFRoutes {
    static let routes = RouteTable([
        Route("/healthz", name: "healthz", cacheable: false) { routes, _ in try routes.health() },
        Route("/metrics", name: "metrics", cacheable: false) { routes, _ in try routes.metricsText() },
        Route("/lookup", name: "itunes_lookup", family: .apple) { routes, request in
            routes.itunesLookup(request.http)
        },
        Route("/search", name: "itunes_search", family: .apple, bounded: true) { routes, request in
            routes.itunesSearch(request.http)
        },
        Route("/v1/lookup", name: "lookup") { routes, request in try routes.lookup(request.http) },
        Route("/v1/resolve", name: "resolve") { routes, request in try routes.resolve(request.http) },
        Route("/v1/search", name: "search", bounded: true) { routes, request in try routes.search(request.http) },
        Route("/v1/storefronts", name: "storefronts") { routes, _ in try routes.storefronts() },
        Route("/v1/genres", name: "genres") { routes, _ in try routes.genres() },
        Route("/v1/status", name: "status", cacheable: false, bounded: true) { routes, _ in try routes.status() },
        Route("/v1/changes", name: "changes", bounded: true) { routes, request in try routes.changes(request.http) },
        Route("/v1/apps/{id}/ranks", name: "app_ranks") { routes, request in
            try routes.ranks(request.captures[0], request.http)
        },
        Route("/v1/charts/{cc}/{chart}", name: "charts") { routes, request in
            try routes.charts(request.captures[0], request.captures[1], request.http)
        },
        // Apple's chart feeds (AppleChartFeeds.swift).
        Route("/api/v2/{cc}/apps/{chart}/{limit}/apps.json", name: "marketing_chart") { routes, request in
            try routes.marketingChart(request.captures[0], request.captures[1], request.captures[2], request.http)
        },
    ] + entityRoutes + legacyFeedRoutes)

    /// Apple's legacy chart feed on each of its paths (`LegacyFeedForm`), with up to four segments between the
    /// feed's name and the format (`limit=`, `genre=`, `sf=`, or empty).
    private static let legacyFeedRoutes: [Route] = {
        var routes: [Route] = []
        for form in [LegacyFeedForm.country, .noCountry, .webObjects] {
            for options in 0...4 {
                let pattern = form.prefix + String(repeating: "/{option}", count: options) + "/{format}"
                routes.append(Route(pattern, name: "rss_chart") { routes, request in
                    try routes.legacyChart(form, request.captures, request.http)
                })
            }
        }
        return routes
    }()

    /// `/v1/{apps|collections|songs|videos|artists}/{id}` and, but for artists, `.../{id}/prices`.
    private static let entityRoutes: [Route] = {
        let kinds: [(segment: String, kind: EntityKind, prices: String?)] = [
            ("apps", .software, "app_prices"), ("collections", .album, "collection_prices"),
            ("songs", .song, "song_prices"), ("videos", .video, "video_prices"), ("artists", .artist, nil),
        ]
        var routes: [Route] = []
        for (segment, kind, prices) in kinds {
            routes.append(Route("/v1/\(segment)/{id}", name: segment) { routes, request in
                try routes.entity(kind, request.captures[0], request.http)
            })
            if let prices {
                routes.append(Route("/v1/\(segment)/{id}/prices", name: prices) { routes, request in
                    try routes.prices(kind, request.captures[0], request.http)
                })
            }
        }
        return routes
    }()
}
