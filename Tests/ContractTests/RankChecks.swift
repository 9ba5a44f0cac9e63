import EPFPostgres
import EPFSchema
import EPFSQLite
import Foundation

/// The rank history after an export against the model's recorded days (`ContractModel.rankDays`): on SQLite
/// through `RankHistoryRead` (the recorded days; every chart of every recorded day, absent ones as [], and its
/// depth; no data on days never recorded; the history of a few ids), on PostgreSQL through `epf_rank_days` and the
/// view `epf_rank_history`.
enum RankChecks {
    /// A chart no export writes (no chart has genre 9): [] on every recorded day, nil on any other.
    static let absent = RankKey(storefront: 143441, genre: 9)
    /// An id no chart holds.
    static let unranked: Int64 = 999_999_999

    static func sqliteProblems(database: String, _ model: ContractModel, seed: UInt64) throws -> [String] {
        let days = model.rankDays.keys.sorted()
        guard FileManager.default.fileExists(atPath: database) else {
            return days.isEmpty ? [] : ["SQLite: no database, the model recorded \(days.count) rank days"]
        }
        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        guard let read = try RankHistoryRead(connection) else {
            return days.isEmpty ? [] : ["SQLite: no rank history, the model recorded \(names(days))"]
        }
        do {
            var problems: [String] = []
            let recorded = try read.recordedDays(chart: .apps)
            if recorded != days {
                problems.append("SQLite: rank days \(names(recorded)), the model's \(names(days))")
            }
            let keys = Set(model.rankDays.values.flatMap(\.keys)).union([absent]).sorted()
            for day in days {
                let charts = model.rankDays[day] ?? [:]
                let depths = try read.depths(chart: .apps, on: day)
                let wantDepths = Dictionary(uniqueKeysWithValues: charts.map { (chartKey($0.key), $0.value.count) })
                if depths != wantDepths {
                    problems.append("SQLite: the depths of \(name(day)) are \(depths.count) charts, the model's "
                                    + "\(wantDepths.count)")
                }
                for key in keys {
                    let want = (charts[key] ?? []).map { "\($0.rank):\($0.id)" }
                    let have = try read.chart(chartKey(key), on: day)?.map { "\($0.rank):\($0.id)" }
                    if have != want {
                        problems.append("SQLite: the chart of \(key.storefront)/\(key.genre) on \(name(day)) is "
                                        + "\(have.map { "\($0)" } ?? "no data"), the model's \(want)")
                    }
                }
            }
            // Days never recorded are no data, never empty charts.
            let some = keys.first.map(chartKey) ?? chartKey(absent)
            for number in 4...31 {
                let day = PopularityPlanner.day(number).exportDate
                guard model.rankDays[day] == nil else { continue }
                if try read.chart(some, on: day) != nil || read.depth(some, on: day) != nil {
                    problems.append("SQLite: \(name(day)) was never recorded, yet its chart is not nil")
                }
            }
            let ids = Set(model.rankDays.values.flatMap { $0.values.flatMap { $0.map(\.id) } }).sorted()
            let asked = ids.isEmpty ? [unranked] : [ids[Int(seed % UInt64(ids.count))], ids[0], ids[ids.count - 1],
                                                    unranked]
            for id in Set(asked).sorted() {
                let have = try read.history(of: id).map { "\(name($0.day)) \($0.key.storefrontID)/\($0.key.genreID) "
                                                          + "#\($0.rank)" }
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

    static func postgresProblems(_ reader: PostgresReader, _ model: ContractModel) throws -> [String] {
        let days = model.rankDays.keys.sorted()
        let schema = "\"\(reader.schema)\""
        guard try reader.connection.query("SELECT to_regclass($1)::text", ["\(schema).epf_rank_days"])
            .first?.first ?? nil != nil else {
            return days.isEmpty ? [] : ["PostgreSQL: no rank history, the model recorded \(names(days))"]
        }
        var problems: [String] = []
        let recorded = try reader.connection.query("""
            SELECT export_date::text, charts::text, entries::text FROM \(schema).epf_rank_days WHERE chart = 0
            ORDER BY export_date
            """).map { $0.map { $0 ?? "∅" }.joined(separator: " ") }
        let want = days.map { day in
            let charts = model.rankDays[day] ?? [:]
            return "\(day) \(charts.count) \(charts.values.map(\.count).reduce(0, +))"
        }
        if recorded != want {
            problems.append("PostgreSQL: epf_rank_days (day, charts, entries) holds \(recorded), the model \(want)")
        }
        let have = try reader.connection.query("""
            SELECT export_date::text, chart, storefront_id::text, genre_id::text, rank::text, id::text
            FROM \(schema).epf_rank_history
            """).map { $0.map { $0 ?? "∅" }.joined(separator: " ") }.sorted()
        let lines = days.flatMap { day in
            (model.rankDays[day] ?? [:]).flatMap { key, entries in
                entries.map { "\(day) apps \(key.storefront) \(key.genre) \($0.rank) \($0.id)" }
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
    /// then storefront and genre.
    private static func history(of id: Int64, _ model: ContractModel) -> [String] {
        model.rankDays.keys.sorted().flatMap { day in
            (model.rankDays[day] ?? [:]).sorted { $0.key < $1.key }.compactMap { key, entries in
                entries.first { $0.id == id }.map { "\(name(day)) \(key.storefront)/\(key.genre) #\($0.rank)" }
            }
        }
    }

    private static func chartKey(_ key: RankKey) -> RankChartKey {
        RankChartKey(chart: .apps, storefrontID: key.storefront, genreID: key.genre)
    }

    private static func name(_ day: Int64) -> String { String(ContractMatrixTests.day(day).prefix(10)) }

    private static func names(_ days: [Int64]) -> String { "[" + days.map(name).joined(separator: ", ") + "]" }
}
