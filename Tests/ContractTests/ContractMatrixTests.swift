import EPFConcurrency
import EPFPostgres
import EPFSQLite
import EPFTestSupport
import Foundation
import Testing

/// Which sequences run: `EPF_CONTRACT_SEED=N` replays one (`scripts/test --seed N`); otherwise
/// `EPF_CONTRACT_SEQUENCES` (default 200; `scripts/test --sequences N`) seeds from `EPF_CONTRACT_FIRST_SEED`
/// (default 1).
enum ContractSettings {
    static var seeds: [UInt64] {
        let environment = ProcessInfo.processInfo.environment
        if let seed = environment["EPF_CONTRACT_SEED"].flatMap(UInt64.init) { return [seed] }
        let count = environment["EPF_CONTRACT_SEQUENCES"].flatMap(UInt64.init) ?? 200
        let first = environment["EPF_CONTRACT_FIRST_SEED"].flatMap(UInt64.init) ?? 1
        return Array(first..<(first + count))
    }

    /// Sequences run at once: `EPF_CONTRACT_JOBS`, default twice the cores.
    static var concurrency: Int {
        ProcessInfo.processInfo.environment["EPF_CONTRACT_JOBS"].flatMap(Int.init)
            ?? 2 * ProcessInfo.processInfo.activeProcessorCount
    }
}

/// The broken sequences, collected from the worker threads.
final class FailureList: @unchecked Sendable {
    private let lock = NSLock()
    private var failures: [(UInt64, String)] = []

    func add(_ seed: UInt64, _ failure: String) {
        lock.lock()
        failures.append((seed, failure))
        lock.unlock()
    }

    var sorted: [(UInt64, String)] {
        lock.lock()
        defer { lock.unlock() }
        return failures.sorted { $0.0 < $1.0 }
    }
}

/// Runs seeded sequences a few at a time (each mostly waits for the epf processes it starts and for PostgreSQL),
/// then records one issue per broken sequence (the first ten) and expects none: the contract and operations matrices.
enum SeededSequences {
    /// `body` returns nil when the sequence held, else what broke; a thrown error is reported with `replay`.
    static func run(_ seeds: [UInt64], replay: String, _ body: @escaping @Sendable (UInt64) throws -> String?) throws {
        let failures = FailureList()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = ContractSettings.concurrency
        for seed in seeds {
            queue.addOperation {
                do {
                    if let failure = try body(seed) { failures.add(seed, failure) }
                } catch {
                    failures.add(seed, "sequence \(seed) could not run: \(error)\nreplay: \(replay) \(seed)")
                }
            }
        }
        queue.waitUntilAllOperationsAreFinished()
        let broken = failures.sorted
        for (_, failure) in broken.prefix(10) { Issue.record(Comment(rawValue: failure)) }
        let brokenSeeds = broken.map { "\($0.0)" }.joined(separator: " ")
        #expect(broken.isEmpty, "\(broken.count) of \(seeds.count) sequences broke; seeds: \(brokenSeeds)")
    }
}

/// The database all sequences share in the test cluster; each sequence imports into a schema of its own.
enum ContractPostgres {
    static let database: Result<String, ClusterError> = {
        do {
            return .success(try TestCluster.get().database())
        } catch let error as ClusterError {
            return .failure(error)
        } catch {
            return .failure(ClusterError(description: "\(error)"))
        }
    }()
}

/// The import contract as a randomized, model-checked matrix: seeded sequences of full and incremental exports with
/// EPF-FORMAT.md's dirt in any file, imported by the built `epf` into SQLite and PostgreSQL. After every export
/// both stores must hold exactly the model's rows, and `epf import` must exit and count rejects, repairs and rows
/// left out by the selection (`--storefronts`, `--languages`, given to some sequences) as the model says; on
/// SQLite, `epf changes` must list the model's changes and `epf lookup` answer as the model says for a present, a
/// removed and an unknown id.
@Suite struct ContractMatrixTests {
    /// Runs the sequences a few at a time (each mostly waits for the epf processes it starts and for PostgreSQL),
    /// then records one issue per broken sequence.
    @Test func sequences() throws {
        let postgres = try ContractPostgres.database.get()
        try SeededSequences.run(ContractSettings.seeds, replay: "scripts/test --seed") { seed in
            try Self.run(seed: seed, postgres: postgres)
        }
        // Today's ranks by app were read from their lists, not only from the tables (the check is not idle).
        if ContractSettings.seeds.count >= 20 {
            #expect(Self.answersFromChartLists.withLock { $0 } > 0)
        }
    }

    /// How many of today's ranks `RankChecks.todayProblems` read from the lists by app, over the sequences.
    static let answersFromChartLists = Mutex(0)

    /// Runs one sequence; nil when every export left both stores as the model says, else what broke.
    static func run(seed: UInt64, postgres: String) throws -> String? {
        var planner = ExportPlanner(seed: seed)
        var exports = planner.sequence()
        let layout = ChartLayout.of(seed: seed)
        var charts = PopularityPlanner(seed: seed, layout: layout)
        charts.addCharts(to: &exports)
        var selectionPlanner = SelectionPlanner(seed: seed)
        let requests = selectionPlanner.requests(count: exports.count)
        let steps = Self.steps(exports, requests, seed: seed)
        let scratch = try TemporaryDirectory(prefix: "epf-contract")
        let database = scratch.file("epf.sqlite")
        let schema = "contract_\(seed)_\(UInt32.random(in: 0...UInt32.max))"
        defer { try? PostgresConnection(url: postgres).execute("DROP SCHEMA IF EXISTS \(schema) CASCADE") }
        var model = ContractModel()
        var written: [Int: [String]] = [:]
        for (number, step) in steps.enumerated() {
            let export = step.export
            let paths = try written[export.number] ?? FeedWriter.write(export, under: scratch.url)
            written[export.number] = paths
            // An export applied again with `--force` is given no other option: the database's stay.
            let request = step.forced ? SelectionRequest(arguments: ["--force"]) : step.request
            let expected = model.apply(export, request: request, force: step.forced)
            var problems: [String] = []
            // Every third export is first dry-run on both stores: it must settle the selection as the import will
            // (what the database keeps, or a refusal) and write nothing.
            let dryRuns = !step.forced && (seed &+ UInt64(export.number)) % 3 == 0

            if dryRuns {
                problems += try Self.dryRunProblems(paths + request.arguments + ["--db", database], expected,
                                                    store: "SQLite", settings: SQLiteReader.settings(database),
                                                    in: scratch.path)
            }
            let sqlite = try BuiltEPF.run(["import"] + paths + request.arguments
                                              + ["--db", database, "--json", "--quiet"], in: scratch.path)
            problems += Self.reportProblems(sqlite, expected, store: "SQLite")
            problems += try Self.rowProblems(SQLiteReader(path: database), model, store: "SQLite")
            problems += try Self.historyProblems(SQLiteReader(path: database), model, store: "SQLite")
            problems += try RankChecks.sqliteProblems(database: database, model, seed: seed)
            let today = try RankChecks.todayProblems(database: database, seed: seed)
            problems += today.problems
            Self.answersFromChartLists.withLock { $0 += today.fromLists }
            problems += try Self.changeProblems(database: database, model, in: scratch.path)
            problems += try RankChecks.keptStorefrontProblems(database: database, model, seed: seed,
                                                              export: export.number, in: scratch.path)
            problems += try Self.lookupProblems(database: database, model, seed: seed, in: scratch.path)

            if dryRuns {
                problems += try Self.dryRunProblems(paths + request.arguments
                                                        + ["--db", postgres, "--schema", schema,
                                                           "--rejects-dir", scratch.file("pg.rejects")],
                                                    expected, store: "PostgreSQL",
                                                    settings: PostgresReader.settings(url: postgres, schema: schema),
                                                    in: scratch.path)
            }
            let pg = try BuiltEPF.run(["import"] + paths + request.arguments
                                          + ["--db", postgres, "--schema", schema, "--json", "--quiet",
                                             "--rejects-dir", scratch.file("pg.rejects")], in: scratch.path)
            problems += Self.reportProblems(pg, expected, store: "PostgreSQL")
            let pgReader = try PostgresReader(url: postgres, schema: schema)
            problems += try Self.rowProblems(pgReader, model, store: "PostgreSQL")
            problems += try Self.historyProblems(pgReader, model, store: "PostgreSQL")
            problems += try RankChecks.postgresProblems(pgReader, model)

            if !problems.isEmpty {
                let history = steps.prefix(number + 1).map { step in
                    let arguments = step.forced ? ["--force"] : step.request.arguments
                    return (step.forced ? "again: " : "") + step.export.summary
                        + (arguments.isEmpty ? "" : " " + arguments.joined(separator: " "))
                }.joined(separator: "\n  ")
                let files = paths.joined(separator: ", ")
                return """
                    contract sequence \(seed) (\(layout.rawValue) charts) broke at \(step.forced ? "--force of " : "")\
                    export \(export.number) (files: \(files))
                    \(problems.joined(separator: "\n"))
                    the sequence so far:
                      \(history)
                    replay: scripts/test --seed \(seed)
                    """
            }
        }
        return nil
    }

    /// One import of a sequence: an export with its request, or (`forced`) an export already imported, again with
    /// `--force`.
    struct Step {
        let export: PlannedExport
        let request: SelectionRequest
        var forced = false
    }

    /// The exports in order, and in one sequence of four an export already imported applied again with `--force`
    /// after one of them: mostly the one just imported, else an earlier one (its fulls take the tables back to
    /// their day). Its own generator, so that the exports and requests stayed as they were.
    static func steps(_ exports: [PlannedExport], _ requests: [SelectionRequest], seed: UInt64) -> [Step] {
        var steps = zip(exports, requests).map { Step(export: $0, request: $1) }
        var random = SeededGenerator(seed: seed ^ 0xF0_4CE0_0000_0000)
        guard random.below(4) == 0 else { return steps }
        let after = random.below(exports.count)
        let again = random.below(10) < 6 ? after : random.below(after + 1)
        steps.insert(Step(export: exports[again], request: SelectionRequest(), forced: true), at: after + 1)
        return steps
    }

    // MARK: - What epf import reported

    static func reportProblems(_ run: BuiltEPF.Run, _ expected: ExpectedImport, store: String) -> [String] {
        var problems: [String] = []
        if run.status != expected.status {
            problems.append("\(store): epf import exited \(run.status), the model says \(expected.status); "
                            + "stderr: \(run.stderr.prefix(600))")
        }
        if expected.selectionRefused {
            if !run.stderr.contains("loaded with another selection") {
                problems.append("\(store): the model says the selection is refused; stderr: \(run.stderr.prefix(600))")
            }
            return problems
        }
        guard let report = try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any],
              let outcomes = report["outcomes"] as? [[String: Any]] else {
            return problems + ["\(store): no JSON report: \(run.stdout.prefix(300)) \(run.stderr.prefix(600))"]
        }
        var seen: Set<String> = []
        for outcome in outcomes {
            guard let name = outcome["table"] as? String, let status = outcome["status"] as? String else { continue }
            let table = ExpectedImport.key(table: name, day: Self.feedDay(outcome))
            seen.insert(table)
            let message = (outcome["message"] as? String).map { ": \($0.prefix(300))" } ?? ""
            if let counts = expected.applied[table] {
                let rejects = outcome["rejects"] as? Int ?? -1
                let repaired = outcome["repaired"] as? Int ?? -1
                if status != "applied" {
                    problems.append("\(store): \(table) \(status), the model says applied\(message)")
                } else if rejects != counts.rejects || repaired != counts.repaired {
                    problems.append("\(store): \(table) rejected \(rejects) and repaired \(repaired), the model says "
                                    + "\(counts.rejects) and \(counts.repaired)")
                } else if outcome["leftOut"] as? Int != expected.leftOut[table] ?? 0 {
                    problems.append("\(store): \(table) left out \(outcome["leftOut"] ?? "?") records, the model "
                                    + "says \(expected.leftOut[table] ?? 0)")
                }
            } else if expected.refused.contains(table) {
                if status == "applied" { problems.append("\(store): \(table) applied, the model says refused") }
            } else if expected.unchanged.contains(table) {
                if status != "unchanged" {
                    problems.append("\(store): \(table) \(status), the model says unchanged\(message)")
                }
            } else if expected.superseded.contains(table) {
                if status != "superseded" {
                    problems.append("\(store): \(table) \(status), the model says superseded\(message)")
                }
            } else {
                problems.append("\(store): \(table) \(status), but the export has no such file")
            }
        }
        for table in expected.applied.keys where !seen.contains(table) {
            problems.append("\(store): \(table) not reported, the model says applied")
        }
        let fileErrors = report["fileErrors"] as? [Any] ?? []
        for table in expected.refused where !seen.contains(table) && fileErrors.isEmpty {
            problems.append("\(store): \(table) neither reported nor named by a file error, the model says refused")
        }
        return problems
    }

    /// `epf import --dry-run` with the import's arguments (`settings` reads the store's `epf_settings`): refused
    /// when the model says the selection is, else each table the model applies validated with the records the
    /// import will leave out; the settings unchanged.
    static func dryRunProblems(_ arguments: [String], _ expected: ExpectedImport, store: String,
                               settings: () throws -> [String], in directory: String) throws -> [String] {
        let before = try settings()
        let run = try BuiltEPF.run(["import", "--dry-run", "--json", "--quiet"] + arguments, in: directory)
        var problems: [String] = []
        if try settings() != before { problems.append("\(store): the dry run changed epf_settings") }
        if expected.selectionRefused {
            if run.status != 64 || !run.stderr.contains("loaded with another selection") {
                problems.append("\(store): the dry run exited \(run.status), the model refuses the selection; "
                                + "stderr: \(run.stderr.prefix(600))")
            }
            return problems
        }
        guard let report = try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any],
              let outcomes = report["outcomes"] as? [[String: Any]] else {
            return problems + ["\(store): the dry run gave no JSON report: \(run.stdout.prefix(300)) "
                               + "\(run.stderr.prefix(600))"]
        }
        for outcome in outcomes {
            guard let name = outcome["table"] as? String,
                  case let table = ExpectedImport.key(table: name, day: Self.feedDay(outcome)),
                  expected.applied[table] != nil else { continue }
            if outcome["status"] as? String != "validated" {
                problems.append("\(store): the dry run says \(table) \(outcome["status"] ?? "?"), the model applies it")
            } else if outcome["leftOut"] as? Int != expected.leftOut[table] ?? 0 {
                problems.append("\(store): the dry run left out \(outcome["leftOut"] ?? "?") records of \(table), "
                                + "the model says \(expected.leftOut[table] ?? 0)")
            }
        }
        return problems
    }

    // MARK: - The rows

    static func rowProblems(_ reader: some StoreReader, _ model: ContractModel, store: String) throws -> [String] {
        var problems: [String] = []
        for spec in ContractTables.compared {
            let table = model.tables[spec.name] ?? ContractModel.Table()
            let actual: [[String?]]?
            do {
                actual = try reader.rows(of: spec)
            } catch {
                problems.append("\(store): reading \(spec.name): \(error)")
                continue
            }
            guard let actual else {
                if table.exists { problems.append("\(store): \(spec.name) is missing, the model has it") }
                continue
            }
            if !table.exists {
                problems.append("\(store): \(spec.name) exists with \(actual.count) rows, the model has no table")
                continue
            }
            let want = table.allRows.map { Self.line(Self.samePrices($0, spec)) }.sorted()
            let have = actual.map { Self.line(Self.samePrices($0, spec)) }.sorted()
            if want != have {
                let missing = Self.difference(want, have)
                let extra = Self.difference(have, want)
                problems.append("\(store): \(spec.name) holds \(have.count) rows, the model \(want.count); "
                                + "missing \(missing.count): \(missing.prefix(2).joined(separator: " / ")); "
                                + "unexpected \(extra.count): \(extra.prefix(2).joined(separator: " / "))")
            }
        }
        return problems
    }

    /// A row with its prices spelled as numbers (`DecimalNumber.text`: `0.990` and `0.99` alike are `0.99`): the
    /// feed's text, PostgreSQL's numeric text and SQLite's REAL compare as the numbers they are.
    static func samePrices(_ row: [String?], _ spec: TableSpec) -> [String?] {
        var row = row
        for (index, column) in spec.columns.enumerated() where column.kind == .decimal && index < row.count {
            if let text = row[index], let number = Double(text) { row[index] = DecimalNumber.text(number) }
        }
        return row
    }

    /// The recorded price history must be the model's, line for line (the table may be missing while empty).
    static func historyProblems(_ reader: some StoreReader, _ model: ContractModel, store: String) throws
        -> [String] {
        let have = (try reader.priceHistory() ?? []).sorted()
        let want = model.priceHistory.sorted()
        guard have != want else { return [] }
        return ["\(store): epf_price_history holds \(have.count) changes, the model \(want.count); missing: "
                + Self.difference(want, have).prefix(3).joined(separator: ", ") + "; unexpected: "
                + Self.difference(have, want).prefix(3).joined(separator: ", ")]
    }

    /// A row as one comparable line: NULL as `∅`, values quoted so that CR LF and separators show.
    static func line(_ row: [String?]) -> String {
        row.map { $0.map { "\"" + $0.debugDescription.dropFirst().dropLast() + "\"" } ?? "∅" }
            .joined(separator: "|")
    }

    /// The lines of `left` not matched in `right`, counting repeats.
    static func difference(_ left: [String], _ right: [String]) -> [String] {
        var counts: [String: Int] = [:]
        for line in right { counts[line, default: 0] += 1 }
        return left.filter { line in
            if let count = counts[line], count > 0 {
                counts[line] = count - 1
                return false
            }
            return true
        }
    }

    // MARK: - epf changes and epf lookup (SQLite)

    static func day(_ milliseconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }

    static func changeProblems(database: String, _ model: ContractModel, in directory: String) throws -> [String] {
        let run = try BuiltEPF.run(["changes", "--since", "2000-01-01", "--json", "--db", database], in: directory)
        if !model.tables.values.contains(where: \.exists) {
            // Every file of the first export refused: no EPF table yet, which the query commands report (66).
            guard run.status == 66, run.stderr.contains("holds no EPF tables") else {
                return ["epf changes on a database without tables exited \(run.status), the model says 66: "
                        + "\(run.stderr.prefix(300))"]
            }
            return []
        }
        guard run.status == 0,
              let list = try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: Any]] else {
            return ["epf changes exited \(run.status): \(run.stdout.prefix(200)) \(run.stderr.prefix(300))"]
        }
        let have = list.map { entry in
            "\(entry["exportDate"] as? String ?? "?") \(entry["kind"] as? String ?? "?") "
                + "\(entry["change"] as? String ?? "?") \(entry["id"] as? Int64 ?? -1)"
        }.sorted()
        let want = model.changes.map { "\(day($0.exportDate)) app \($0.change) \($0.id)" }.sorted()
        guard have != want else { return [] }
        return ["epf changes lists \(have.count) changes, the model \(want.count); missing: "
                + Self.difference(want, have).prefix(4).joined(separator: ", ") + "; unexpected: "
                + Self.difference(have, want).prefix(4).joined(separator: ", ")]
    }

    static func lookupProblems(database: String, _ model: ContractModel, seed: UInt64,
                               in directory: String) throws -> [String] {
        guard let applications = model.tables["application"], applications.exists else { return [] }
        let titled = applications.rows.values.compactMap { row -> (Int64, String)? in
            guard let id = row[1].flatMap({ Int64($0) }), let title = row[2] else { return nil }
            return (id, title)
        }.sorted { $0.0 < $1.0 }
        let present = titled.isEmpty ? nil : titled[Int(seed % UInt64(titled.count))]
        // An id not found whose latest change is a removal (one `--force` brought back is found instead).
        let presentIDs = Set(model.presentApps)
        let removed = model.changes.map(\.id).filter { model.removal(of: $0) != nil && !presentIDs.contains($0) }.max()
        let unknown: Int64 = 999_999_999
        let ids = [present?.0, removed, unknown].compactMap { $0 }
        let run = try BuiltEPF.run(["lookup"] + ids.map(String.init) + ["--json", "--db", database], in: directory)
        guard run.status == 1,
              let answer = try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any] else {
            return ["epf lookup \(ids) exited \(run.status) (the model says 1): \(run.stdout.prefix(200)) "
                    + "\(run.stderr.prefix(300))"]
        }
        var problems: [String] = []
        let results = answer["results"] as? [[String: Any]] ?? []
        let invalid = Set(answer["invalidIds"] as? [String] ?? [])
        let removals = answer["removedIds"] as? [[String: Any]] ?? []
        if let (id, title) = present {
            let found = results.first { $0["trackId"] as? Int64 == id }
            if found?["trackName"] as? String != title {
                problems.append("epf lookup \(id): trackName \(String(describing: found?["trackName"])), "
                                + "the model's title \(title.debugDescription)")
            }
        }
        if let removed, let date = model.removal(of: removed) {
            let reported = removals.first { $0["id"] as? Int64 == removed }
            if reported?["removedInExport"] as? String != day(date) || !invalid.contains("\(removed)") {
                problems.append("epf lookup \(removed): the model says removed in \(day(date)); epf answered "
                                + "\(run.stdout.prefix(300))")
            }
        }
        if !invalid.contains("\(unknown)") || removals.contains(where: { $0["id"] as? Int64 == unknown }) {
            problems.append("epf lookup \(unknown): not found expected; epf answered \(run.stdout.prefix(300))")
        }
        if results.count != (present == nil ? 0 : 1) {
            problems.append("epf lookup \(ids): \(results.count) results")
        }
        return problems
    }
}

extension ContractMatrixTests {
    /// An outcome's feed day as the model keys it (`20260107`), from the report's `feedDate` instant
    /// (`2026-01-07T00:00:00Z`).
    static func feedDay(_ outcome: [String: Any]) -> String? {
        (outcome["feedDate"] as? String).map { String($0.prefix(10).filter { $0 != "-" }) }
    }
}
