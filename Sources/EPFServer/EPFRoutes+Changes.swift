import EPFQuery
import HTTPTransport

/// `GET /v1/changes?since=YYYY-MM-DD[&kind=app][&limit=N][&cursor=C]`: the ids the exports since a date removed,
/// added or updated, one page at a time (see `ChangeQueries.page`); with `kind=price[&country=us][&drops=1]` the
/// recorded price changes (`ChangeQueries.pricePage`).
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
        for name in ["country", "drops"] where request.parameter(name) != nil {
            throw RouteError(status: 400, message: "'\(name)' goes with kind=price")
        }
        let page = try withEngine { try $0.changes.page(since: since, kind: kind, limit: limit, cursor: cursor) }
        return json(page.json)
    }
}
