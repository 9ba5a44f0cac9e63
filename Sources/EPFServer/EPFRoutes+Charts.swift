import EPFQuery
import HTTPTransport

/// `GET /v1/charts/{cc}/{chart}?genre=&date=&limit=`: a storefront's chart as the last popularity feed imported ranks
/// it, or as the rank history recorded it on `date`, with each entry's move since the recorded day before
/// (`ChartQueries.chart`).
extension EPFRoutes {
    /// Entries per chart when `limit` is not given.
    static let defaultChartLimit = 100

    func charts(_ country: String, _ chartName: String, _ request: HTTPRequest) throws -> HTTPResponse {
        guard let kind = ChartKind(rawValue: chartName.lowercased()) else {
            throw RouteError(status: 404, message: "no chart '\(chartName.prefix(40))'; use free, paid, free-ipad "
                             + "or paid-ipad")
        }
        let genre = try Self.number(request, "genre", in: 0...Int(Int32.max)) ?? Int(ChartQueries.allApps)
        let limit = try Self.number(request, "limit", in: 1...ChartQueries.maximumLimit) ?? Self.defaultChartLimit
        let date = try Self.optional(request, "date")
        let chart = try chartAnswer {
            try $0.charts.chart(country: country, kind: kind, genre: Int64(genre), limit: limit, date: date)
        }
        return json(chart.json)
    }

    /// Runs a chart query; a chart the database cannot answer is a 404 saying why.
    func chartAnswer(_ body: (QueryEngine) throws -> Chart) throws -> Chart {
        do {
            return try withEngine(body)
        } catch let error as ChartUnavailable {
            throw RouteError(status: 404, message: error.description)
        }
    }

    /// An optional whole-number parameter within `range`.
    static func number(_ request: HTTPRequest, _ name: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = request.parameter(name) else { return nil }
        guard text.utf8.count <= 10, let number = Int(text), range.contains(number) else {
            throw RouteError.badParameter(name, "must be a whole number from \(range.lowerBound) to "
                                          + "\(range.upperBound), got '\(text.prefix(40))'")
        }
        return number
    }
}
