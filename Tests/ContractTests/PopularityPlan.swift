import EPFTestSupport

/// A seeded planner of the charts a sequence's exports carry (`application_popularity_per_genre`, v3's
/// `popularity<date>` feed, a FULL file in full and incremental folders alike): most exports carry their day's
/// charts, some none (a day without popularity); some also carry an earlier day's, late (a day never shipped, or one
/// older than the table's: out of order) or again (the same bytes, or the day shipped anew). Charts are small (a
/// few storefronts and genres, up to eight entries) with duplicate ranks and gaps, rows in any order now and then,
/// and the dirt any file gets (`ExportPlanner.dress`: keys written twice, junk ranks, rejected rows, wrong counts,
/// cuts).
///
/// Its own generator (from the sequence's seed), so that adding it left every sequence's other files as they were.
struct PopularityPlanner {
    private var planner: ExportPlanner
    /// The apps the charts draw from; a few are replaced each day.
    private var pool: [Int64] = []
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
            if index > 0 && planner.chance(0.3) {
                // A day before today: never shipped (late, maybe older than the table's day) or shipped before.
                let late = 4 + planner.random.below(today - 4)
                var file: PlannedFile
                if let before = written[late], planner.chance(0.5) {
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

    /// One day's charts: one to three storefronts, one or two genres each, up to eight entries a chart.
    private mutating func chartFile(day number: Int) -> PlannedFile {
        if pool.isEmpty {
            pool = (0..<12).map { _ in newApp() }
        } else {
            pool = pool.map { planner.chance(0.15) ? newApp() : $0 }
        }
        let table = ContractTables.popularity
        let date = Self.day(number).exportDate
        var rows: [PlannedRow] = []
        for storefront in planner.pick(ExportPlanner.storefronts, 1 + planner.random.below(3)).sorted() {
            for genre in planner.pick(Self.genres, 1 + planner.random.below(2)).sorted() {
                var rank = 0
                for app in planner.pick(pool, planner.random.below(9)) {
                    // Duplicate ranks and gaps, as Apple's files have them.
                    if rank == 0 || !planner.chance(0.1) { rank += planner.chance(0.1) ? 2 : 1 }
                    var row = planner.row(table, key: ["\(storefront)", "\(genre)", "\(app)"], date: date)
                    row.fields[4] = Array("\(rank)".utf8)
                    row.stored?[4] = "\(rank)"
                    rows.append(row)
                }
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
