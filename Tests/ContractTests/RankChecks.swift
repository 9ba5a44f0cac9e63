import EPFPostgres
import EPFSchema
import EPFSQLite
import EPFTestSupport
import Foundation

/// The rank history after an export against the model's recorded days (`ContractModel.rankDays`), for each chart
/// table of both layouts (v3's one, v5's four: a table the sequence never writes must have no day): on SQLite
/// through `RankHistoryRead` (the recorded days, of any chart and of each; every chart of every recorded day, absent
/// ones as [], and its depth; no data on days never recorded; the history of a few ids across charts), on
/// PostgreSQL through `epf_rank_days` and the view `epf_rank_history`.
enum RankChecks {
    /// A chart no export writes (no chart has genre 9): [] on every recorded day, nil on any other.
    static let absent = RankKey(storefront: 143441, genre: 9)
    /// An id no chart holds.
    static let unranked: Int64 = 999_999_999

    /// The charts of every chart table the matrix writes (both layouts), in the store's order.
    static let charts: [RankChart] = ContractTables.compared.filter(\.chart).compactMap { RankChart(table: $0.name) }
        .sorted()

    static func sqliteProblems(database: String, _ model: ContractModel, seed: UInt64) throws -> [String] {
        let allDays = Set(model.rankDays.values.flatMap(\.keys)).sorted()
        guard FileManager.default.fileExists(atPath: database) else {
            return allDays.isEmpty ? [] : ["SQLite: no database, the model recorded \(allDays.count) rank days"]
        }
        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        guard let read = try RankHistoryRead(connection) else {
            return allDays.isEmpty ? [] : ["SQLite: no rank history, the model recorded \(names(allDays))"]
        }
        do {
            var problems: [String] = []
            let recordedAll = try read.recordedDays()
            if recordedAll != allDays {
                problems.append("SQLite: rank days of any chart \(names(recordedAll)), the model's \(names(allDays))")
            }
            for chart in charts {
                problems += try chartProblems(read, chart, model.rankDays[chart.table] ?? [:])
            }
            let ids = Set(model.rankDays.values.flatMap { $0.values.flatMap { $0.values.flatMap { $0.map(\.id) } } })
                .sorted()
            let asked = ids.isEmpty ? [unranked] : [ids[Int(seed % UInt64(ids.count))], ids[0], ids[ids.count - 1],
                                                    unranked]
            for id in Set(asked).sorted() {
                let have = try read.history(of: id).map { point in
                    "\(name(point.day)) \(point.key.chart.rawValue) \(point.key.storefrontID)/\(point.key.genreID) "
                        + "#\(point.rank)"
                }
                let want = history(of: id, model)
                if have != want {
                    problems.append("SQLite: the history of \(id) is \(have), the model's \(want)")
                }
            }
            return problems
        } catch {
            return ["SQLite: reading the rank history: \(error)"]
        }
    }

    /// One chart table's recorded days against the model's `days`: the days, each day's depths, every chart the
    /// table ever held and one it never does on each recorded day, and no data on every day of the month not
    /// recorded.
    private static func chartProblems(_ read: RankHistoryRead, _ chart: RankChart,
                                      _ days: [Int64: [RankKey: [RankEntry]]]) throws -> [String] {
        var problems: [String] = []
        let recorded = try read.recordedDays(chart: chart)
        if recorded != days.keys.sorted() {
            problems.append("SQLite: \(chart.rawValue) rank days \(names(recorded)), the model's "
                            + "\(names(days.keys.sorted()))")
        }
        let keys = Set(days.values.flatMap(\.keys)).union([absent]).sorted()
        for (day, charts) in days.sorted(by: { $0.key < $1.key }) {
            let depths = try read.depths(chart: chart, on: day)
            let wantDepths = Dictionary(uniqueKeysWithValues: charts.map { (chartKey($0.key, chart), $0.value.count) })
            if depths != wantDepths {
                problems.append("SQLite: the \(chart.rawValue) depths of \(name(day)) are \(depths.count) charts, "
                                + "the model's \(wantDepths.count)")
            }
            for key in keys {
                let want = (charts[key] ?? []).map { "\($0.rank):\($0.id)" }
                let have = try read.chart(chartKey(key, chart), on: day)?.map { "\($0.rank):\($0.id)" }
                if have != want {
                    problems.append("SQLite: the \(chart.rawValue) chart of \(key.storefront)/\(key.genre) on "
                                    + "\(name(day)) is \(have.map { "\($0)" } ?? "no data"), the model's \(want)")
                }
            }
        }
        // Days never recorded are no data, never empty charts.
        let some = chartKey(keys.first ?? absent, chart)
        for number in 4...31 {
            let day = PopularityPlanner.day(number).exportDate
            guard days[day] == nil else { continue }
            if try read.chart(some, on: day) != nil || read.depth(some, on: day) != nil {
                problems.append("SQLite: \(name(day)) was never recorded for \(chart.rawValue), yet its chart is not "
                                + "nil")
            }
        }
        return problems
    }

    /// Today's ranks by app (`ChartAppLists`, what `epf ranks` reads without history) against the chart tables'
    /// own rows, for a few apps of each chart table the database holds (the tables are checked against the model
    /// by `rowProblems`): when the lists say they are the table's, they hold exactly its rows of the app. Returns
    /// the problems, and how many answers came from the lists (so a run can tell the check was not idle).
    /// A storefront the selection (`--storefronts`) leaves out is said to be, never an empty chart: `epf charts
    /// --country CC` exits 64 naming what the database keeps (checked on every third export, one storefront
    /// drawn by the seed).
    static func keptStorefrontProblems(database: String, _ model: ContractModel, seed: UInt64, export: Int,
                                       in directory: String) throws -> [String] {
        guard (seed &+ UInt64(export)) % 3 == 0, let kept = model.keptStorefronts, !model.chartDays.isEmpty
        else { return [] }
        let left = SelectionPlanner.codes.keys.sorted().filter { !kept.contains($0) }
        guard !left.isEmpty, let code = SelectionPlanner.codes[left[Int(seed % UInt64(left.count))]]?.0 else {
            return []
        }
        let run = try BuiltEPF.run(["charts", "--country", code, "--db", database], in: directory)
        guard run.status == 64, run.stderr.contains("'\(code)' is not kept in this database") else {
            return ["epf charts --country \(code), a storefront --storefronts left out, exited \(run.status): "
                    + "\(run.stderr.prefix(300))"]
        }
        return []
    }

    static func todayProblems(database: String, seed: UInt64) throws -> (problems: [String], fromLists: Int) {
        guard FileManager.default.fileExists(atPath: database) else { return ([], 0) }
        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        let tables = Set(try connection.query("SELECT name FROM sqlite_schema WHERE type = 'table'").compactMap {
            if case .text(let name) = $0[0] { return name }
            return nil
        })
        guard let lists = ChartAppLists(connection, tables: tables) else { return ([], 0) }
        var problems: [String] = []
        var fromLists = 0
        let chartTables = ContractTables.compared.filter(\.chart).map(\.name).filter { tables.contains($0) }
        for table in chartTables.sorted() {
            let complete = "storefront_id IS NOT NULL AND genre_id IS NOT NULL AND application_rank IS NOT NULL "
                + "AND export_date IS NOT NULL"
            let ids = try connection.query("""
                SELECT DISTINCT application_id FROM \(table) WHERE application_id IS NOT NULL AND \(complete)
                ORDER BY application_id
                """).compactMap { row -> Int64? in
                if case .integer(let id) = row[0] { return id }
                return nil
            }
            let asked = ids.isEmpty ? [unranked]
                : [ids[Int(seed % UInt64(ids.count))], ids[0], ids[ids.count - 1], unranked]
            for id in Set(asked).sorted() {
                guard let have = try lists.entries(of: id, table: table) else { continue }
                fromLists += 1
                let want = try connection.query("""
                    SELECT storefront_id, genre_id, application_rank, export_date FROM \(table)
                    WHERE application_id = ?1 AND \(complete)
                    """, [.integer(id)]).map { row in row.map { "\($0)" }.joined(separator: " ") }.sorted()
                let got = have.map { "integer(\($0.storefrontID)) integer(\($0.genreID)) integer(\($0.rank)) "
                    + "integer(\($0.exportDate))" }.sorted()
                if got != want {
                    problems.append("SQLite: today's ranks of \(id) in \(table) from the lists by app are \(got), "
                                    + "the table's rows \(want)")
                }
            }
        }
        return (problems, fromLists)
    }

    static func postgresProblems(_ reader: PostgresReader, _ model: ContractModel) throws -> [String] {
        let schema = "\"\(reader.schema)\""
        guard try reader.connection.query("SELECT to_regclass($1)::text", ["\(schema).epf_rank_days"])
            .first?.first ?? nil != nil else {
            let days = Set(model.rankDays.values.flatMap(\.keys)).sorted()
            return days.isEmpty ? [] : ["PostgreSQL: no rank history, the model recorded \(names(days))"]
        }
        var problems: [String] = []
        let recorded = try reader.connection.query("""
            SELECT chart::text, export_date::text, charts::text, entries::text FROM \(schema).epf_rank_days
            ORDER BY chart, export_date
            """).map { $0.map { $0 ?? "∅" }.joined(separator: " ") }
        let want = charts.flatMap { chart in
            (model.rankDays[chart.table] ?? [:]).sorted { $0.key < $1.key }.map { day, charts in
                "\(chart.code) \(day) \(charts.count) \(charts.values.map(\.count).reduce(0, +))"
            }
        }
        if recorded != want {
            problems.append("PostgreSQL: epf_rank_days (chart, day, charts, entries) holds \(recorded), the model "
                            + "\(want)")
        }
        let have = try reader.connection.query("""
            SELECT export_date::text, chart, storefront_id::text, genre_id::text, rank::text, id::text
            FROM \(schema).epf_rank_history
            """).map { $0.map { $0 ?? "∅" }.joined(separator: " ") }.sorted()
        let lines = charts.flatMap { chart in
            (model.rankDays[chart.table] ?? [:]).flatMap { day, charts in
                charts.flatMap { key, entries in
                    entries.map { "\(day) \(chart.rawValue) \(key.storefront) \(key.genre) \($0.rank) \($0.id)" }
                }
            }
        }.sorted()
        if have != lines {
            problems.append("PostgreSQL: epf_rank_history holds \(have.count) ranks, the model \(lines.count); "
                            + "missing: \(ContractMatrixTests.difference(lines, have).prefix(3)); unexpected: "
                            + "\(ContractMatrixTests.difference(have, lines).prefix(3))")
        }
        return problems
    }

    /// The model's history of `id`, spelled as `sqliteProblems` spells `RankHistoryRead.history`'s points: by day,
    /// then chart, storefront and genre.
    private static func history(of id: Int64, _ model: ContractModel) -> [String] {
        let days = Set(model.rankDays.values.flatMap(\.keys)).sorted()
        return days.flatMap { day in
            charts.flatMap { chart in
                (model.rankDays[chart.table]?[day] ?? [:]).sorted { $0.key < $1.key }.compactMap { key, entries in
                    entries.first { $0.id == id }.map {
                        "\(name(day)) \(chart.rawValue) \(key.storefront)/\(key.genre) #\($0.rank)"
                    }
                }
            }
        }
    }

    private static func chartKey(_ key: RankKey, _ chart: RankChart) -> RankChartKey {
        RankChartKey(chart: chart, storefrontID: key.storefront, genreID: key.genre)
    }

    private static func name(_ day: Int64) -> String { String(ContractMatrixTests.day(day).prefix(10)) }

    private static func names(_ days: [Int64]) -> String { "[" + days.map(name).joined(separator: ", ") + "]" }
}
