import EPFTestSupport

/// A seeded planner of the charts a sequence's exports carry (`application_popularity_per_genre`, v3's
/// `popularity<date>` feed, a FULL file in full and incremental folders alike): most exports carry their day's
/// charts, some none (a day without popularity); some also carry an earlier day's, late (a day never shipped, or one
/// older than the table's: out of order) or again (the same bytes, or the day shipped anew). Charts are small (a
/// few storefronts and genres, up to eight entries), move a little each day, and have duplicate ranks and gaps, rows
/// in any order now and then,
/// and the dirt any file gets (`ExportPlanner.dress`: keys written twice, junk ranks, rejected rows, wrong counts,
/// cuts).
///
/// Its own generator (from the sequence's seed), so that adding it left every sequence's other files as they were.
struct PopularityPlanner {
    private var planner: ExportPlanner
    private var nextApp: Int64 = 500_000_001
    /// The chart files written so far, by day number.
    private var written: [Int: PlannedFile] = [:]

    static let genres: [Int64] = [36, 6014, 6016]

    init(seed: UInt64) { planner = ExportPlanner(seed: seed ^ 0xC4A2_7500_0000_0000) }

    /// The midnight of day `number` of January 2026, in milliseconds, and its `YYYYMMDD`.
    static func day(_ number: Int) -> (text: String, exportDate: Int64) {
        ("202601" + (number < 10 ? "0\(number)" : "\(number)"), 1_767_225_600_000 + Int64(number - 1) * 86_400_000)
    }

    /// The day number of an export date.
    static func number(_ exportDate: Int64) -> Int { Int((exportDate - 1_767_225_600_000) / 86_400_000) + 1 }

    /// Adds the chart feeds to each export of a sequence, oldest day first within an export.
    mutating func addCharts(to exports: inout [PlannedExport]) {
        for index in exports.indices {
            let today = Self.number(exports[index].exportDate)
            var feeds: [PlannedFeed] = []
            if index > 0 && planner.chance(0.35) {
                // A day before today: mostly one shipped before (again: a keyframe day recorded anew re-bases the
                // days coded against it), else any (late: never shipped, maybe older than the table's day).
                let shipped = written.keys.filter { $0 < today }.sorted()
                let late = !shipped.isEmpty && planner.chance(0.7) ? shipped[planner.random.below(shipped.count)]
                    : 4 + planner.random.below(today - 4)
                var file: PlannedFile
                if let before = written[late], planner.chance(0.4) {
                    file = before
                } else {
                    file = chartFile(day: late)
                }
                file.full = true
                written[late] = file
                let (text, exportDate) = Self.day(late)
                feeds.append(PlannedFeed(feed: "popularity", files: [file], day: text, exportDate: exportDate))
            }
            if planner.chance(0.75) {
                var file = chartFile(day: today)
                file.full = true
                written[today] = file
                var feed = PlannedFeed(feed: "popularity", files: [file])
                if planner.chance(0.1) {
                    feed.archived = true
                    feed.wrongMD5 = planner.chance(0.3)
                }
                feeds.append(feed)
            }
            exports[index].feeds += feeds
        }
    }

    /// The charts as they stand, each evolved a little by every day written (so that most days are coded as deltas,
    /// as real days are).
    private var standing: [RankKey: [Int64]] = [:]
    /// Apps that left a chart, which may come back (an item back within four weeks reopens its span).
    private var gone: [Int64] = []

    /// One day's charts: one to three storefronts with one or two genres at first, up to eight entries a chart; each
    /// day most ranks stay or move a place, an entry leaves or a new one enters now and then, a chart is absent for
    /// the day or a new one starts.
    private mutating func chartFile(day number: Int) -> PlannedFile {
        if standing.isEmpty {
            for storefront in planner.pick(ExportPlanner.storefronts, 1 + planner.random.below(3)) {
                for genre in planner.pick(Self.genres, 1 + planner.random.below(2)) {
                    standing[RankKey(storefront: storefront, genre: genre)] = (0..<(2 + planner.random.below(7)))
                        .map { _ in newApp() }
                }
            }
        } else {
            if planner.chance(0.1) {
                let key = RankKey(storefront: ExportPlanner.storefronts[planner.random.below(6)],
                                  genre: Self.genres[planner.random.below(Self.genres.count)])
                if standing[key] == nil { standing[key] = (0..<(1 + planner.random.below(4))).map { _ in newApp() } }
            }
            for key in standing.keys.sorted() {
                guard var ids = standing[key] else { continue }
                if ids.count > 1 && planner.chance(0.4) {
                    let place = planner.random.below(ids.count - 1)
                    ids.swapAt(place, place + 1)
                }
                if !ids.isEmpty && planner.chance(0.2) { gone.append(ids.remove(at: planner.random.below(ids.count))) }
                if ids.count < 8 && planner.chance(0.3) {
                    // A new app, or one that left a chart coming back.
                    let app = gone.isEmpty || planner.chance(0.5)
                        ? newApp() : gone.remove(at: planner.random.below(gone.count))
                    if !ids.contains(app) { ids.insert(app, at: planner.random.below(ids.count + 1)) }
                }
                standing[key] = ids
            }
        }
        let table = ContractTables.popularity
        let date = Self.day(number).exportDate
        var rows: [PlannedRow] = []
        for (key, ids) in standing.sorted(by: { $0.key < $1.key }) where !planner.chance(0.08) {
            var rank = 0
            for app in ids {
                // Duplicate ranks and gaps, as Apple's files have them.
                if rank == 0 || !planner.chance(0.1) { rank += planner.chance(0.1) ? 2 : 1 }
                var row = planner.row(table, key: ["\(key.storefront)", "\(key.genre)", "\(app)"], date: date)
                row.fields[4] = Array("\(rank)".utf8)
                row.stored?[4] = "\(rank)"
                rows.append(row)
            }
        }
        // Now and then not in chart order (the recorder gathers each chart's rows wherever they are).
        if rows.count > 2 && planner.chance(0.25) {
            let first = rows.removeFirst()
            rows = [first] + rows.shuffled(using: &planner.random)
        }
        return planner.dress(table, rows, full: true, date: date)
    }

    private mutating func newApp() -> Int64 {
        defer { nextApp += 1 + Int64(planner.random.below(40)) }
        return nextApp
    }
}
