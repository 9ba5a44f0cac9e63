import EPFQuery
import HTTPTransport

/// `GET /v1/apps/{id}/ranks?country=&chart=&genre=[&history=1&since=]`: an app's ranks in the charts
/// (`RankQueries`): today's from the chart tables, or with `history=1` each recorded day's with a summary per chart.
extension EPFRoutes {
    func ranks(_ idText: String, _ request: HTTPRequest) throws -> HTTPResponse {
        let id = try Self.positiveID(idText)
        let history = try Self.optional(request, "history")
        guard history == nil || history == "1" || history == "0" else {
            throw RouteError.badParameter("history", "must be 1 or 0, got '\(history?.prefix(40) ?? "")'")
        }
        let country = try Self.optional(request, "country")
        let chart = try Self.optional(request, "chart")
        let genre = try Self.number(request, "genre", in: 0...Int(Int32.max)).map(Int64.init)
        let since = try Self.optional(request, "since")
        guard history == "1" || since == nil else {
            throw RouteError(status: 400, message: "'since' goes with history=1")
        }
        let answer: AppRanks
        do {
            answer = try withEngine { engine in
                history == "1"
                    ? try engine.ranks.ranks(id: id, country: country, chart: chart, genre: genre, since: since)
                    : try engine.ranks.current(id: id, country: country, chart: chart, genre: genre)
            }
        } catch let error as ChartUnavailable {
            throw RouteError(status: 404, message: error.description)
        }
        guard answer.title != nil || !answer.series.isEmpty else {
            throw RouteError(status: 404, message: "no app with id \(id) in the catalogue or the charts")
        }
        return json(answer.json(days: history == "1"))
    }
}
