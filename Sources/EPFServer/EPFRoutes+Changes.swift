import EPFQuery
import HTTPTransport

/// `GET /v1/changes?since=YYYY-MM-DD[&kind=app][&limit=N][&cursor=C]`: the ids the exports since a date removed,
/// added or updated, one page at a time (see `ChangeQueries.page`); with `kind=price[&country=us][&drops=1]` the
/// recorded price changes (`ChangeQueries.pricePage`); with `kind=rank&country=us[&chart=free][&genre=36][&top=N]
/// [&moved=N]` one chart's changes from day to day (`ChartQueries.rankPage`).
extension EPFRoutes {
    /// Changes per page when `limit` is not given.
    static let defaultChangesPage = 1000

    func changes(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let since = request.parameter("since") else {
            throw RouteError(status: 400, message: "missing parameter 'since' (a date, YYYY-MM-DD)")
        }
        let kind = try Self.optional(request, "kind")
        var limit = Self.defaultChangesPage
        if let text = request.parameter("limit") {
            guard text.utf8.count <= 6, let number = Int(text), (1...ChangeQueries.maximumChangesPage).contains(number)
            else {
                throw RouteError.badParameter("limit", "must be a whole number from 1 to "
                                              + "\(ChangeQueries.maximumChangesPage), got '\(text.prefix(40))'")
            }
            limit = number
        }
        let cursor = try Self.optional(request, "cursor")
        for name in ["chart", "genre", "top", "moved"] where kind != "rank" && request.parameter(name) != nil {
            throw RouteError(status: 400, message: "'\(name)' goes with kind=rank")
        }
        if kind == "price" {
            let country = try Self.optional(request, "country")
            let drops = try Self.optional(request, "drops")
            guard drops == nil || drops == "1" || drops == "0" else {
                throw RouteError.badParameter("drops", "must be 1 or 0, got '\(drops?.prefix(40) ?? "")'")
            }
            let page = try withEngine {
                try $0.changes.pricePage(since: since, country: country, drops: drops == "1", limit: limit,
                                         cursor: cursor)
            }
            return json(page.json)
        }
        if kind == "rank" {
            guard request.parameter("drops") == nil else {
                throw RouteError(status: 400, message: "'drops' goes with kind=price")
            }
            guard let country = try Self.optional(request, "country") else {
                throw RouteError(status: 400, message: "kind=rank needs 'country' (the chart's storefront, e.g. us)")
            }
            let chartName = try Self.optional(request, "chart") ?? ChartKind.free.rawValue
            guard let chart = ChartKind(rawValue: chartName.lowercased()) else {
                throw RouteError.badParameter("chart", "must be free, paid, free-ipad or paid-ipad, got "
                                              + "'\(chartName.prefix(40))'")
            }
            let genre = try Self.number(request, "genre", in: 0...Int(Int32.max)) ?? Int(ChartQueries.allApps)
            let top = try Self.number(request, "top", in: 1...ChartQueries.maximumLimit)
            let moved = try Self.number(request, "moved", in: 1...ChartQueries.maximumLimit)
                ?? ChartQueries.defaultMoved
            let page = try withEngine { engine in
                do {
                    return try engine.charts.rankPage(since: since, country: country, kind: chart,
                                                      genre: Int64(genre), top: top, moved: moved, limit: limit,
                                                      cursor: cursor)
                } catch let error as ChartUnavailable {
                    throw RouteError(status: 404, message: error.description)
                }
            }
            return json(page.json)
        }
        for name in ["country", "drops"] where request.parameter(name) != nil {
            throw RouteError(status: 400, message: "'\(name)' goes with kind=price")
        }
        let page = try withEngine { try $0.changes.page(since: since, kind: kind, limit: limit, cursor: cursor) }
        return json(page.json)
    }
}
