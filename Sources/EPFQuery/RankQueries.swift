import EPFFormat
import EPFSQLite
import EPFSchema
import JSONText

/// An app's ranks in the charts: today's from the chart tables, or each day's from the rank history.
package final class RankQueries: SessionReading {
    let session: ReadSession

    /// The chart words `--chart` and `chart=` accept for an app's ranks, in the order answers list them, with the
    /// table of today's chart: v5's four tables, and v3's one chart of every app (`apps`, ranked as shipped).
    package static let charts: [(word: String, table: String)] =
        ChartKind.allCases.map { ($0.rawValue, $0.v5Table) } + [("apps", "application_popularity_per_genre")]
    /// Days of history an answer covers when no `since` is given: the last 90 recorded.
    package static let defaultDays = 90

    init(session: ReadSession) { self.session = session }

    /// The chart words, for usage messages.
    package static var chartWords: [String] { charts.map(\.word) }

    /// `id`'s ranks in every chart, storefront and genre it is in, optionally only in `country`'s storefront, one
    /// `chart` (a word of `charts`) and one `genre`. Today's ranks come from the chart tables (one day, the tables'
    /// export date): from the rank history when it recorded that day (its item index finds the app's charts at once),
    /// else from the tables' rows by app (`ChartAppLists`), else by reading the tables, whose key does not start
    /// with the app.
    ///
    /// Throws `QueryError.badArgument` naming `country` or `chart` for a value it does not know.
    package func current(id: Int64, country: String?, chart: String?, genre: Int64?) throws -> AppRanks {
        let wanted = try Self.charts(chart)
        return try reading { () throws -> AppRanks in
            let storefront = try country.map { try self.storefront(ofCountry: $0) }
            let history = RankHistoryRead(connection, tables: tables)
            var series: [AppRankSeries] = []
            for (word, table) in wanted where tables.contains(table) {
                try requireExportDate(in: table)
                let rows = try recordedToday(id: id, table: table, history: history, storefront: storefront,
                                             genre: genre)
                    ?? tableRows(id: id, table: table, storefront: storefront, genre: genre)
                for row in rows {
                    let place = try self.place(chart: word, storefront: row.storefront, genre: row.genre)
                    series.append(AppRankSeries(place: place, genreName: try smallTables().genres[row.genre]?.name,
                                                recordedDays: [row.day], ranks: [row.day: row.rank]))
                }
            }
            return AppRanks(id: id, title: try appTitle(of: id), fromHistory: false, since: nil,
                            series: Self.ordered(series))
        }
    }

    typealias TodayRow = (storefront: Int64, genre: Int64, rank: Int, day: Int64)

    /// The app's rows of `table` read from the rank history, when it recorded the table's day; else nil. Call
    /// inside `reading`.
    private func recordedToday(id: Int64, table: String, history: RankHistoryRead?, storefront: Int64?,
                               genre: Int64?) throws -> [TodayRow]? {
        guard let history, let chart = RankChart(table: table),
              let day = try firstRow("SELECT export_date FROM \(table) LIMIT 1", [], { $0.statement.int64(at: 0) }),
              try history.isRecorded(day, chart: chart) else { return nil }
        var best: [RankChartKey: Int] = [:]
        for point in try history.history(of: id, since: day, chart: chart, storefront: storefront, genre: genre)
        where point.day == day {
            best[point.key] = min(point.rank, best[point.key] ?? Int.max)
        }
        return best.map { ($0.key.storefrontID, $0.key.genreID, $0.value, day) }
    }

    /// The app's rows of `table`: from the table's rows by app when they are the table's (`ChartAppLists`), else
    /// read from the table (every row when no storefront narrows it). Call inside `reading`.
    private func tableRows(id: Int64, table: String, storefront: Int64?, genre: Int64?) throws -> [TodayRow] {
        if let lists = ChartAppLists(connection, tables: tables),
           let entries = try lists.entries(of: id, table: table) {
            return entries.compactMap { entry -> TodayRow? in
                guard storefront.map({ $0 == entry.storefrontID }) ?? true,
                      genre.map({ $0 == entry.genreID }) ?? true else { return nil }
                return (entry.storefrontID, entry.genreID, Int(entry.rank), entry.exportDate)
            }
        }
        var sql = "SELECT storefront_id, genre_id, application_rank, export_date FROM \(table) "
            + "WHERE application_id = ?1"
        var bindings: [SQLValue] = [.integer(id)]
        if let storefront {
            bindings.append(.integer(storefront))
            sql += " AND storefront_id = ?\(bindings.count)"
        }
        if let genre {
            bindings.append(.integer(genre))
            sql += " AND genre_id = ?\(bindings.count)"
        }
        var rows: [TodayRow] = []
        try forEachRow(sql, bindings) { (row: CachedStatement) throws -> Bool in
            let statement = row.statement
            guard let storefront = statement.int64(at: 0), let genre = statement.int64(at: 1),
                  let rank = statement.int64(at: 2), let day = statement.int64(at: 3) else { return true }
            rows.append((storefront, genre, Int(rank), day))
            return true
        }
        return rows
    }

    /// `id`'s ranks (see `current`) from exports dated `since` (`YYYY-MM-DD`, UTC) on, by default the last
    /// `defaultDays` recorded: each recorded day's when the database holds rank history (see `recorded`), else
    /// today's (none when today is before `since`). Throws `QueryError.badArgument` naming `since`, `country` or
    /// `chart` for a bad value.
    package func ranks(id: Int64, country: String?, chart: String?, genre: Int64?, since: String?) throws
        -> AppRanks {
        let first = try since.map { try ChangeQueries.changesSince($0, kind: nil) }
        let wanted = try Self.charts(chart)
        if let recorded = try reading({ () throws -> AppRanks? in
            guard let history = RankHistoryRead(connection, tables: tables) else { return nil }
            return try self.recorded(id: id, history: history, country: country, charts: wanted, genre: genre,
                                     since: first)
        }) {
            return recorded
        }
        let today = try current(id: id, country: country, chart: chart, genre: genre)
        guard let first else { return today }
        return AppRanks(id: id, title: today.title, fromHistory: false, since: first,
                        series: today.series.filter { ($0.recordedDays.last ?? 0) >= first })
    }

    /// Each recorded day's ranks of `id` in `charts` (narrowed to `country` and `genre`) from `since` on, else the
    /// last `defaultDays` recorded; nil when the history holds no day. One reading of the app's item index and of each
    /// chart table's days, whatever the number of days (`RankHistoryRead.history`). Call inside `reading`.
    func recorded(id: Int64, history: RankHistoryRead, country: String?, charts: [(word: String, table: String)],
                  genre: Int64?, since: Int64?) throws -> AppRanks? {
        let days = try history.recordedDays()
        guard !days.isEmpty else { return nil }
        let from = since ?? days.suffix(Self.defaultDays).first ?? 0
        let storefront = try country.map { try self.storefront(ofCountry: $0) }
        let wanted = charts.compactMap { RankChart(table: $0.table) }
        let points = try history.history(of: id, since: from, chart: wanted.count == 1 ? wanted[0] : nil,
                                         storefront: storefront, genre: genre)
        var ranks: [RankChartKey: [Int64: Int]] = [:]
        for point in points where wanted.contains(point.key.chart) {
            ranks[point.key, default: [:]][point.day] = min(point.rank, ranks[point.key]?[point.day] ?? Int.max)
        }
        var daysOf: [RankChart: [Int64]] = [:]
        var series: [AppRankSeries] = []
        for (key, byDay) in ranks {
            if daysOf[key.chart] == nil { daysOf[key.chart] = try history.recordedDays(chart: key.chart, since: from) }
            let word = Self.charts.first { $0.table == key.chart.table }?.word ?? key.chart.rawValue
            series.append(AppRankSeries(place: try place(chart: word, storefront: key.storefrontID, genre: key.genreID),
                                        genreName: try smallTables().genres[key.genreID]?.name,
                                        recordedDays: daysOf[key.chart] ?? [], ranks: byDay))
        }
        return AppRanks(id: id, title: try appTitle(of: id), fromHistory: true, since: from,
                        series: Self.ordered(series))
    }

    /// The tables of `chart` (a chart word), or of every chart when nil. Throws `QueryError.badArgument` naming
    /// `chart` for a word it does not know.
    static func charts(_ chart: String?) throws -> [(word: String, table: String)] {
        guard let chart else { return charts }
        guard let known = charts.first(where: { $0.word == chart.lowercased() }) else {
            throw QueryError.badArgument(name: "chart", message: "unknown chart '\(chart.prefix(40))'; use "
                                         + chartWords.joined(separator: ", "))
        }
        return [known]
    }

    /// Series in the order answers list them: by country, chart (as `charts` lists them), genre.
    static func ordered(_ series: [AppRankSeries]) -> [AppRankSeries] {
        let order = Dictionary(uniqueKeysWithValues: charts.enumerated().map { ($0.element.word, $0.offset) })
        return series.sorted { a, b in
            let left = (a.place.country ?? "~", order[a.place.chart] ?? 99, a.place.genreId, a.place.storefrontId)
            let right = (b.place.country ?? "~", order[b.place.chart] ?? 99, b.place.genreId,
                         b.place.storefrontId)
            return left < right
        }
    }

    /// The place of a chart with the storefront's country. Call inside `reading`.
    func place(chart: String, storefront: Int64, genre: Int64) throws -> RankedChartPlace {
        let country = try smallTables().storefronts[storefront]?.country
            ?? AppleStorefronts.entry(id: Int(storefront))?.linkCode
        return RankedChartPlace(chart: chart, storefrontId: storefront, country: country, genreId: genre)
    }


    /// The storefront of `country` (alpha-2 or alpha-3, any case): from the data's storefront table, else Apple's
    /// list. Throws `QueryError.badArgument` naming `country` when neither knows it. Call inside `reading`.
    func storefront(ofCountry country: String) throws -> Int64 {
        try chartStorefront(country).id
    }
}

extension SessionReading {
    /// An app's title in the catalogue, nil when the catalogue lacks it. Call inside `reading`.
    func appTitle(of id: Int64) throws -> String? {
        guard tables.contains("application") else { return nil }
        return try firstRow("SELECT title FROM application WHERE application_id = ?1", id: id) {
            $0.statement.text(at: 0)
        }
    }
}
