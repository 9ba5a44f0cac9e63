import EPFTestSupport

/// The layout of a sequence's charts: v3's one table (`application_popularity_per_genre`) or v5's four (free and
/// paid, iPhone and iPad), each a FULL file of the `popularity<date>` folder.
enum ChartLayout: String {
    case v3
    case v5

    /// The chart tables the layout ships every day.
    var tables: [TableSpec] { self == .v3 ? [ContractTables.popularity] : ContractTables.v5Charts }

    /// A sequence's layout: its own generator, so that choosing it left every v3 sequence as it was; half the
    /// sequences are v5's.
    static func of(seed: UInt64) -> ChartLayout {
        var random = SeededGenerator(seed: seed ^ 0x0750_5000_0000_0000)
        return random.below(2) == 0 ? .v5 : .v3
    }
}

/// A seeded planner of the charts a sequence's exports carry (v3's `application_popularity_per_genre` or v5's four
/// chart tables, FULL files in full and incremental folders alike): most exports carry their day's charts, some
/// none (a day without popularity); some also carry an earlier day's, late (a day never shipped, or one older than
/// the table's: out of order) or again (the same bytes, or the day shipped anew). Charts are small (a few
/// storefronts and genres, up to eight entries; v5's four smaller still), move a little each day, and have
/// duplicate ranks and gaps, rows in any order now and then, and the dirt any file gets (`ExportPlanner.dress`:
/// keys written twice, junk ranks, rejected rows, wrong counts, cuts). A v5 day now and then lacks one of its four
/// tables, and its iPad charts share some apps with the iPhone charts of the same price.
///
/// Its own generator (from the sequence's seed), so that adding it left every sequence's other files as they were.
struct PopularityPlanner {
    let layout: ChartLayout
    private var planner: ExportPlanner
    private var nextApp: Int64 = 500_000_001
    /// The chart files written so far, by day number and table.
    private var written: [Int: [String: PlannedFile]] = [:]

    static let genres: [Int64] = [36, 6014, 6016]

    /// Whether an export may also carry an earlier day's charts (the contract matrix's sequences); the operations
    /// matrix's exports carry their own day's only, and come out of order by the user's operations.
    let lateDays: Bool

    init(seed: UInt64, layout: ChartLayout = .v3, lateDays: Bool = true) {
        self.layout = layout
        self.lateDays = lateDays
        planner = ExportPlanner(seed: seed ^ 0xC4A2_7500_0000_0000)
    }

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
            if lateDays && index > 0 && planner.chance(0.35) {
                // A day before today: mostly one shipped before (again: a keyframe day recorded anew re-bases the
                // days coded against it), else any (late: never shipped, maybe older than the table's day).
                let shipped = written.keys.filter { $0 < today }.sorted()
                let late = !shipped.isEmpty && planner.chance(0.7) ? shipped[planner.random.below(shipped.count)]
                    : 4 + planner.random.below(today - 4)
                var files: [PlannedFile] = []
                for table in layout.tables {
                    var file: PlannedFile
                    if let before = written[late]?[table.name], planner.chance(0.4) {
                        // The same bytes again, as a plain file (an archive's bytes differ each time it is made).
                        file = before
                        file.archived = false
                        file.wrongMD5 = false
                    } else {
                        file = chartFile(table, day: late)
                    }
                    file.full = true
                    written[late, default: [:]][table.name] = file
                    files.append(file)
                }
                let (text, exportDate) = Self.day(late)
                feeds.append(PlannedFeed(feed: "popularity", files: files, day: text, exportDate: exportDate))
            }
            if planner.chance(0.75) {
                var files: [PlannedFile] = []
                for table in layout.tables {
                    // A v5 day without one of its tables now and then: that chart has no data that day.
                    if layout == .v5 && planner.chance(0.05) { continue }
                    var file = chartFile(table, day: today)
                    file.full = true
                    if layout == .v5 && planner.chance(0.1) {
                        // v5's layout: one archive per table, `popularity20260107/free_..._per_genre.tbz`.
                        file.archived = true
                        file.wrongMD5 = planner.chance(0.3)
                    }
                    written[today, default: [:]][table.name] = file
                    files.append(file)
                }
                var feed = PlannedFeed(feed: "popularity", files: files)
                if layout == .v3 && planner.chance(0.1) {
                    feed.archived = true
                    feed.wrongMD5 = planner.chance(0.3)
                }
                if !files.isEmpty { feeds.append(feed) }
            }
            exports[index].feeds += feeds
        }
    }

    /// The charts as they stand, by table, each evolved a little by every day written (so that most days are coded
    /// as deltas, as real days are).
    private var standing: [String: [RankKey: [Int64]]] = [:]
    /// Apps that left a chart, by table, which may come back (an item back within four weeks reopens its span).
    private var gone: [String: [Int64]] = [:]

    /// One day's charts of `table`: v3's one to three storefronts with one or two genres at first, up to eight
    /// entries a chart (v5's one or two storefronts, up to five entries at first); each day most ranks stay or move
    /// a place, an entry leaves or a new one enters now and then, a chart is absent for the day or a new one
    /// starts.
    private mutating func chartFile(_ table: TableSpec, day number: Int) -> PlannedFile {
        var charts = standing[table.name] ?? [:]
        if charts.isEmpty {
            let storefronts = layout == .v3 ? 1 + planner.random.below(3) : 1 + planner.random.below(2)
            for storefront in planner.pick(ExportPlanner.storefronts, storefronts) {
                for genre in planner.pick(Self.genres, 1 + planner.random.below(2)) {
                    let entries = layout == .v3 ? 2 + planner.random.below(7) : 1 + planner.random.below(5)
                    charts[RankKey(storefront: storefront, genre: genre)] = (0..<entries).map { _ in
                        newApp(for: table)
                    }
                }
            }
        } else {
            if planner.chance(0.1) {
                let key = RankKey(storefront: ExportPlanner.storefronts[planner.random.below(6)],
                                  genre: Self.genres[planner.random.below(Self.genres.count)])
                if charts[key] == nil {
                    charts[key] = (0..<(1 + planner.random.below(4))).map { _ in newApp(for: table) }
                }
            }
            for key in charts.keys.sorted() {
                guard var ids = charts[key] else { continue }
                if ids.count > 1 && planner.chance(0.4) {
                    let place = planner.random.below(ids.count - 1)
                    ids.swapAt(place, place + 1)
                }
                if !ids.isEmpty && planner.chance(0.2) {
                    gone[table.name, default: []].append(ids.remove(at: planner.random.below(ids.count)))
                }
                if ids.count < 8 && planner.chance(0.3) {
                    // A new app, or one that left a chart coming back.
                    let left = gone[table.name] ?? []
                    let app: Int64
                    if left.isEmpty || planner.chance(0.5) {
                        app = newApp(for: table, besides: ids)
                    } else {
                        app = gone[table.name, default: []].remove(at: planner.random.below(left.count))
                    }
                    if !ids.contains(app) { ids.insert(app, at: planner.random.below(ids.count + 1)) }
                }
                charts[key] = ids
            }
        }
        standing[table.name] = charts
        let date = Self.day(number).exportDate
        var rows: [PlannedRow] = []
        for (key, ids) in charts.sorted(by: { $0.key < $1.key }) where !planner.chance(0.08) {
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

    /// A new app for a chart of `table`; on v5's iPad charts, now and then an app of the iPhone charts of the same
    /// price instead (an app ranks on both devices), one not among `besides`.
    private mutating func newApp(for table: TableSpec, besides: [Int64] = []) -> Int64 {
        if layout == .v5, table.name.contains("_ipad_"),
           let phone = standing[table.name.replacingOccurrences(of: "_ipad_", with: "_")] {
            let shared = Set(phone.values.joined()).subtracting(besides).sorted()
            if !shared.isEmpty && planner.chance(0.4) { return shared[planner.random.below(shared.count)] }
        }
        defer { nextApp += 1 + Int64(planner.random.below(40)) }
        return nextApp
    }
}
