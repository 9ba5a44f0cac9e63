import EPFPostgres
import EPFSchema
import EPFTestSupport
import Foundation
import Glibc
import Testing

/// Which operation sequences run: `EPF_OPERATIONS_SEED=N` replays one (`scripts/test --operations-seed N`);
/// otherwise `EPF_OPERATIONS_SEQUENCES` (default 100; `scripts/test --operations N`) from
/// `EPF_OPERATIONS_FIRST_SEED` (default 1).
enum OperationsSettings {
    static var seeds: [UInt64] {
        let environment = ProcessInfo.processInfo.environment
        if let seed = environment["EPF_OPERATIONS_SEED"].flatMap(UInt64.init) { return [seed] }
        let count = environment["EPF_OPERATIONS_SEQUENCES"].flatMap(UInt64.init) ?? 100
        let first = environment["EPF_OPERATIONS_FIRST_SEED"].flatMap(UInt64.init) ?? 1
        return Array(first..<(first + count))
    }
}

/// The operations contract as a randomized, model-checked matrix: seeded sequences of what users do (exports out of
/// date order, the same export twice, `--force`, an incremental without its full, skipped days, `import` and `sync`
/// mixed, a moved mirror, a file that is not EPF or fails its `.md5` or its count, `kill -9` and resume), each run
/// with the built `epf` on SQLite and PostgreSQL. After every operation the exit status, the rows and every claim
/// `epf status --json` makes (each table's export date, the date the data is complete as of, the mixed flag, the
/// failures not made up for) must be the model's (`OperationsModel`); the SQLite readers run as another OS user
/// (`nobody`, when the tests run as root): status after every operation, and lookup, sql and serve at the end.
@Suite struct OperationsMatrixTests {
    @Test func sequences() throws {
        let postgres = try ContractPostgres.database.get()
        try SeededSequences.run(OperationsSettings.seeds, replay: "scripts/test --operations-seed") { seed in
            try Self.run(seed: seed, postgres: postgres)
        }
    }

    /// One sequence: nil when every operation left both stores and their claims as the model says.
    static func run(seed: UInt64, postgres: String) throws -> String? {
        var exportPlanner = ExportPlanner(seed: seed)
        var exports = exportPlanner.sequence()
        // Half the sequences carry charts (v3's or v5's layout, each export its own day's), and two in three of
        // those record ranks (`--history ranks` on every import and sync): their own generator, so that the others
        // stayed as they were.
        var chartRandom = SeededGenerator(seed: seed ^ 0x0C4A_7500_0000_0000)
        let charted = chartRandom.below(2) == 0
        let ranks = charted && chartRandom.below(3) < 2
        if charted {
            var charts = PopularityPlanner(seed: seed, layout: ChartLayout.of(seed: seed), lateDays: false)
            charts.addCharts(to: &exports)
        }
        // One sequence in three with a later full drops an itunes table from every full after the first, as Apple
        // stopped shipping music: status must call it retired, not behind (a generator of its own, as the charts').
        var retireRandom = SeededGenerator(seed: seed ^ 0x7E71_2ED0_0000_0000)
        if exports.dropFirst().contains(where: \.full), retireRandom.below(3) == 0 {
            let candidates = [ContractTables.applicationDetail, ContractTables.genreApplication,
                              ContractTables.keyless].map(\.name)
            let gone = candidates[retireRandom.below(candidates.count)]
            for index in exports.indices.dropFirst() where exports[index].full {
                for feed in exports[index].feeds.indices {
                    exports[index].feeds[feed].files.removeAll { $0.table.name == gone }
                }
            }
        }
        let rankArguments = ranks ? ["--history", "ranks"] : []
        let request = ranks ? SelectionRequest(history: false, ranks: true, arguments: rankArguments)
            : SelectionRequest()
        var planner = OperationsPlanner(seed: seed)
        let operations = planner.operations(exports: exports)
        let scratch = try TemporaryDirectory(prefix: "epf-operations")
        // Readers run as another user: the folders on the way must let them in.
        chmod(scratch.path, 0o755)
        let database = scratch.file("db", "epf.sqlite")
        try FileManager.default.createDirectory(atPath: scratch.file("db"), withIntermediateDirectories: true)
        chmod(scratch.file("db"), 0o755)
        let schema = "operations_\(seed)_\(UInt32.random(in: 0...UInt32.max))"
        defer { try? PostgresConnection(url: postgres).execute("DROP SCHEMA IF EXISTS \(schema) CASCADE") }
        var mirror = "mirror1"
        var paths: [Int: [String]] = [:]
        for export in exports {
            let written = try FeedWriter.write(export, under: scratch.url.appendingPathComponent(mirror))
            paths[export.number] = written.map { String($0.dropFirst(scratch.path.count + mirror.count + 2)) }
        }
        func current(_ number: Int) -> [String] {
            (paths[number] ?? []).map { scratch.file(mirror, $0) }
        }
        var model = OperationsModel()
        var done: [String] = []
        let sqliteTarget = ["--db", database]
        let pgTarget = ["--db", postgres, "--schema", schema, "--rejects-dir", scratch.file("pg.rejects")]

        for (step, operation) in operations.enumerated() {
            done.append(operation.description)
            var problems: [String] = []
            func importBoth(_ arguments: [String], expected: Int32, kill delay: Int? = nil) throws {
                for (store, target) in [("SQLite", sqliteTarget), ("PostgreSQL", pgTarget)] {
                    if let delay { try Self.killed(arguments + target, after: delay, in: scratch.path) }
                    var run = try BuiltEPF.run(arguments + target + ["--quiet"], in: scratch.path)
                    // PostgreSQL frees a killed import's advisory lock once its server process notices the client
                    // is gone (at the end of the statement it was running): until then the import says 75.
                    var waited = 0
                    while delay != nil, store == "PostgreSQL", run.status == 75, waited < 60 {
                        usleep(500_000)
                        waited += 1
                        run = try BuiltEPF.run(arguments + target + ["--quiet"], in: scratch.path)
                    }
                    if run.status != expected {
                        problems.append("\(store): exited \(run.status), the model says \(expected); stderr: "
                                        + "\(run.stderr.prefix(700))")
                    }
                }
            }
            switch operation {
            case .importExport(let number, let force):
                let expected = model.importExport(exports[number - 1], root: scratch.file(mirror, "export\(number)"),
                                                  force: force, request: request)
                try importBoth(["import"] + current(number) + (force ? ["--force"] : []) + rankArguments,
                               expected: expected)
            case .killAndResume(let number, let delay):
                let expected = model.importExport(exports[number - 1], root: scratch.file(mirror, "export\(number)"),
                                                  force: false, request: request)
                try importBoth(["import"] + current(number) + rankArguments, expected: expected, kill: delay)
            case .importDamaged(let number, let table):
                let export = exports[number - 1]
                guard let feed = export.feeds.first(where: { feed in
                    !feed.archived && feed.files.contains { $0.table.name == table }
                }) else { continue }
                let file = scratch.file(mirror, "export\(number)", "\(feed.feed)\(export.day)", table)
                let original = try Data(contentsOf: URL(fileURLWithPath: file))
                try Data("this is not an EPF file\n".utf8).write(to: URL(fileURLWithPath: file))
                let expected = model.importExport(export, root: scratch.file(mirror, "export\(number)"), force: false,
                                                  damaged: table, request: request)
                try importBoth(["import"] + current(number) + rankArguments, expected: expected)
                try original.write(to: URL(fileURLWithPath: file))
            case .sync(let upTo):
                let root = scratch.file("sync-mirror")
                try? FileManager.default.removeItem(atPath: root)
                let published = Array(exports.prefix(upTo))
                for export in published {
                    let misplaced = !export.full && planner.misplaces()
                    for path in current(export.number) {
                        let name = (path as NSString).lastPathComponent
                        let folder = export.full || misplaced ? root : "\(root)/incremental/\(export.day)"
                        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                        try FileManager.default.createSymbolicLink(atPath: "\(folder)/\(name)", withDestinationPath: path)
                        if FileManager.default.fileExists(atPath: path + ".md5") {
                            try FileManager.default.createSymbolicLink(atPath: "\(folder)/\(name).md5",
                                                                       withDestinationPath: path + ".md5")
                        }
                    }
                }
                // What sync applies: the newest full the mirror holds and the incrementals after it, in order.
                let newestFull = published.lastIndex { $0.full } ?? 0
                var expected: Int32 = 0
                for export in published[newestFull...] {
                    let status = model.importExport(export, root: scratch.file(mirror, "export\(export.number)"),
                                                    force: false, request: request)
                    expected = max(expected, status)
                }
                try importBoth(["sync", root] + rankArguments, expected: expected)
            case .moveMirror:
                let moved = mirror == "mirror1" ? "mirror2" : "mirror1"
                try FileManager.default.moveItem(atPath: scratch.file(mirror), toPath: scratch.file(moved))
                mirror = moved
            }
            if FileManager.default.fileExists(atPath: database) {
                problems += try ContractMatrixTests.rowProblems(SQLiteReader(path: database), model.rows,
                                                                store: "SQLite")
            } else if model.rows.tables.values.contains(where: \.exists) {
                problems.append("SQLite: no database, the model has tables")
            }
            problems += try ContractMatrixTests.rowProblems(try PostgresReader(url: postgres, schema: schema),
                                                            model.rows, store: "PostgreSQL")
            problems += try Self.claimProblems(Self.asReader(["status", "--json", "--db", database], in: scratch.path),
                                               model, store: "SQLite")
            problems += try Self.claimProblems(BuiltEPF.run(["status", "--json", "--db", postgres, "--schema", schema],
                                                            in: scratch.path), model, store: "PostgreSQL")
            if step == operations.count - 1 {
                problems += try Self.readerProblems(database: database, model, in: scratch.path)
                problems += try Self.chartReaderProblems(database: database, model, in: scratch.path)
            }
            if !problems.isEmpty {
                return """
                    operations sequence \(seed) broke at step \(step + 1): \(operation)
                    \(problems.joined(separator: "\n"))
                    the operations so far:
                      \(done.joined(separator: "\n  "))
                    the exports:
                      \(exports.map(\.summary).joined(separator: "\n  "))
                    replay: scripts/test --operations-seed \(seed)
                    """
            }
        }
        return nil
    }

    // MARK: - Running epf

    /// Starts `epf arguments`, kills it with SIGKILL after `delay` ms (if it is still running) and waits.
    static func killed(_ arguments: [String], after delay: Int, in directory: String) throws {
        let (process, output, errors) = try BuiltEPF.start(arguments + ["--quiet"], in: directory)
        usleep(UInt32(delay) * 1000)
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        _ = BuiltEPF.readToEnd(process, output: output, errors: errors)
    }

    /// Runs `epf arguments` as the reader user (`nobody` when the tests run as root).
    static func asReader(_ arguments: [String], in directory: String) throws -> BuiltEPF.Run {
        try BuiltEPF.runAsReader(arguments, in: directory)
    }

    // MARK: - What status claims

    static func claimProblems(_ run: BuiltEPF.Run, _ model: OperationsModel, store: String) -> [String] {
        if !model.rows.tables.values.contains(where: \.exists) {
            guard run.status == 66 else {
                return ["\(store): epf status of a database without tables exited \(run.status), the model says 66: "
                        + "\(run.stderr.prefix(300))"]
            }
            return []
        }
        guard run.status == 0,
              let status = try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any] else {
            return ["\(store): epf status exited \(run.status): \(run.stdout.prefix(200)) \(run.stderr.prefix(400))"]
        }
        var problems: [String] = []
        let claims = model.claims
        if status["exportDateMs"] as? Int64 != claims.asOf {
            problems.append("\(store): status says data as of \(status["exportDate"] ?? "nil"), the model "
                            + "\(claims.asOf.map { ContractMatrixTests.day($0) } ?? "nil")")
        }
        if status["mixed"] as? Bool != claims.mixed {
            problems.append("\(store): status says mixed \(status["mixed"] ?? "nil"), the model \(claims.mixed)")
        }
        let missing = (status["missing"] as? [String] ?? []).sorted()
        if missing != model.missing {
            problems.append("\(store): status says missing \(missing), the model \(model.missing)")
        }
        // No operation is running while the claims are read (kill -9 released its lock).
        if status["importRunning"] as? Bool != false {
            problems.append("\(store): status says importRunning \(status["importRunning"] ?? "nil") between "
                            + "operations")
        }
        let retired = (status["retired"] as? [[String: Any]] ?? []).compactMap { $0["table"] as? String }.sorted()
        if retired != model.retired.sorted() {
            problems.append("\(store): status says retired \(retired), the model \(model.retired.sorted())")
        }
        let incrementalOnly = (status["incrementalOnly"] as? [String] ?? []).sorted()
        if incrementalOnly != model.incrementalOnly {
            problems.append("\(store): status says incrementalOnly \(incrementalOnly), the model "
                            + "\(model.incrementalOnly)")
        }
        let failures = (status["failures"] as? [[String: Any]] ?? []).map { failure in
            "\(failure["table"] as? String ?? "-")|\(failure["feed"] as? String ?? "?")|"
                + "\(failure["export"] as? String ?? "?")"
        }.sorted()
        if failures != model.failureLines {
            problems.append("\(store): status lists failures \(failures), the model \(model.failureLines)")
        }
        let rankDays = Set(model.rows.rankDays.values.flatMap(\.keys))
        let newestDay = rankDays.max().map { ContractMatrixTests.day($0) }
        if status["rankHistory"] as? Bool != model.rows.recordsRanks || status["rankDays"] as? Int != rankDays.count
            || status["rankNewestDay"] as? String != newestDay {
            problems.append("\(store): status says rankHistory \(status["rankHistory"] ?? "nil"), rankDays "
                            + "\(status["rankDays"] ?? "nil"), rankNewestDay \(status["rankNewestDay"] ?? "nil"); the "
                            + "model \(model.rows.recordsRanks), \(rankDays.count), \(newestDay ?? "nil")")
        }
        let tables = status["tables"] as? [[String: Any]] ?? []
        for (name, state) in model.tables {
            let entry = tables.first { $0["name"] as? String == name }
            if entry?["exportDateMs"] as? Int64 != state.date {
                problems.append("\(store): status says \(name) is of \(entry?["exportDate"] ?? "nil"), the model "
                                + "\(state.date.map { ContractMatrixTests.day($0) } ?? "nil")")
            }
        }
        return problems
    }

    // MARK: - Readers as another user

    /// lookup, sql and serve (one request) as the reader user: each answers from the model's rows and claims.
    static func readerProblems(database: String, _ model: OperationsModel, in directory: String) throws -> [String] {
        guard let applications = model.rows.tables["application"], applications.exists else { return [] }
        var problems: [String] = []
        let count = try asReader(["sql", "SELECT count(*) AS n FROM application", "--json", "--db", database],
                                 in: directory)
        if count.status != 0 || !count.stdout.contains("\(applications.rows.count)") {
            problems.append("epf sql as a reader exited \(count.status), the model has \(applications.rows.count) "
                            + "apps: \(count.stdout.prefix(200)) \(count.stderr.prefix(300))")
        }
        if let id = applications.rows.keys.compactMap({ $0.first.flatMap { $0.flatMap { Int64($0) } } }).min() {
            let lookup = try asReader(["lookup", "\(id)", "--json", "--db", database], in: directory)
            if lookup.status != 0 || !lookup.stdout.contains("\(id)") {
                problems.append("epf lookup \(id) as a reader exited \(lookup.status): \(lookup.stderr.prefix(300))")
            }
        }
        problems += try serveProblems(database: database, model, in: directory)
        return problems
    }

    /// The storefronts `--country` names in `epf charts` and `epf ranks` (the matrix's sixth has no country).
    static let countries: [Int64: String] = [143441: "us", 143444: "gb", 143462: "jp", 143455: "ca", 143460: "au"]

    /// With ranks recorded, `epf ranks` and `epf charts` as the reader user: an id's every recorded rank, and (v5's
    /// tables, which `epf charts` shows as they are; v3's it splits by price) a chart on its newest recorded day.
    static func chartReaderProblems(database: String, _ model: OperationsModel, in directory: String) throws
        -> [String] {
        let recorded = model.rows.rankDays.flatMap { table, days in
            days.flatMap { day, charts in
                charts.compactMap { key, entries in
                    RankChart(table: table).map { (chart: $0, day: day, key: key, entries: entries) }
                }
            }
        }.sorted { ($0.chart, $0.day, $0.key) < ($1.chart, $1.day, $1.key) }
        guard let id = recorded.flatMap({ $0.entries.map(\.id) }).min() else { return [] }
        var problems: [String] = []
        let ranks = try asReader(["ranks", "\(id)", "--since", "2026-01-01", "--json", "--db", database],
                                 in: directory)
        let answer = try? JSONSerialization.jsonObject(with: Data(ranks.stdout.utf8)) as? [String: Any]
        let have = (answer?["charts"] as? [[String: Any]] ?? []).flatMap { chart in
            (chart["days"] as? [[String: Any]] ?? []).compactMap { day -> String? in
                guard let rank = day["rank"] as? Int else { return nil }
                return "\(chart["chart"] as? String ?? "?") \(chart["storefrontId"] as? Int64 ?? -1)/"
                    + "\(chart["genreId"] as? Int64 ?? -1) \((day["date"] as? String ?? "?").prefix(10)) #\(rank)"
            }
        }.sorted()
        let want = recorded.compactMap { chart, day, key, entries in
            entries.first { $0.id == id }.map { entry in
                let date = ContractMatrixTests.day(day).prefix(10)
                return "\(chart.rawValue) \(key.storefront)/\(key.genre) \(date) #\(entry.rank)"
            }
        }.sorted()
        if ranks.status != 0 || have != want {
            problems.append("epf ranks \(id) as a reader exited \(ranks.status) with \(have), the model's \(want): "
                            + "\(ranks.stderr.prefix(300))")
        }
        guard let newest = recorded.filter({ $0.chart != .apps && countries[$0.key.storefront] != nil })
            .max(by: { $0.day < $1.day }), let country = countries[newest.key.storefront] else { return problems }
        // `--country` names a storefront through the storefront table, which the matrix's exports lack: root imports
        // one last (after every claim was checked), as a user would with the next full.
        let storefronts = try storefrontFeed(under: directory)
        let imported = try BuiltEPF.run(["import", storefronts, "--db", database, "--quiet"], in: directory)
        guard imported.status == 0 else {
            return problems + ["importing the storefront table exited \(imported.status): "
                               + "\(imported.stderr.prefix(300))"]
        }
        let day = String(ContractMatrixTests.day(newest.day).prefix(10))
        let charts = try asReader(["charts", "--country", country, "--chart", newest.chart.rawValue, "--genre",
                                   "\(newest.key.genre)", "--date", day, "--limit", "200", "--json", "--db", database],
                                  in: directory)
        let chart = try? JSONSerialization.jsonObject(with: Data(charts.stdout.utf8)) as? [String: Any]
        let listed = (chart?["results"] as? [[String: Any]] ?? []).map {
            "\($0["rank"] as? Int ?? -1):\($0["trackId"] as? Int64 ?? -1)"
        }
        let entries = newest.entries.map { "\($0.rank):\($0.id)" }
        if charts.status != (entries.isEmpty ? 1 : 0) || listed != entries {
            problems.append("epf charts --country \(country) --chart \(newest.chart.rawValue) --genre "
                            + "\(newest.key.genre) --date \(day) as a reader exited \(charts.status) with \(listed), "
                            + "the model's \(entries): \(charts.stderr.prefix(300))")
        }
        return problems
    }

    /// Writes `itunes20260131/storefront`, a clean full of the matrix's five storefronts with their countries, and
    /// returns its folder.
    static func storefrontFeed(under directory: String) throws -> String {
        let spec = TableSpec(name: "storefront", feed: "itunes", columns: [
            ColumnSpec(name: "export_date", dbType: "BIGINT", kind: .exportDate),
            ColumnSpec(name: "storefront_id", dbType: "INTEGER", kind: .id),
            ColumnSpec(name: "country_code", dbType: "VARCHAR(3)", kind: .text),
            ColumnSpec(name: "name", dbType: "VARCHAR(200)", kind: .text),
        ], key: [1])
        let codes: [Int64: String] = [143441: "USA", 143444: "GBR", 143462: "JPN", 143455: "CAN", 143460: "AUS"]
        let rows = codes.sorted { $0.key < $1.key }.map { id, code in
            PlannedRow(fields: ["1769817600000", "\(id)", code, code].map { Array($0.utf8) }, stored: nil)
        }
        let folder = (directory as NSString).appendingPathComponent("storefronts/itunes20260131")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data(PlannedFile(table: spec, rows: rows).bytes(full: true))
            .write(to: URL(fileURLWithPath: (folder as NSString).appendingPathComponent("storefront")))
        return folder
    }

    /// `epf serve` as the reader user answers `/healthz` with the model's claims.
    static func serveProblems(database: String, _ model: OperationsModel, in directory: String) throws -> [String] {
        let (process, output, _) = try BuiltEPF.startAsReader(["serve", "--db", database, "--port", "0"],
                                                              in: directory)
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        let line = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        guard let port = line.firstMatch(of: /127\.0\.0\.1:(\d+)/).flatMap({ UInt16($0.1) }) else {
            return ["epf serve as a reader did not start: \(line.prefix(300))"]
        }
        guard let body = httpGet(port: port, path: "/healthz"),
              let health = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any] else {
            return ["GET /healthz of epf serve as a reader gave no JSON"]
        }
        let claims = model.claims
        let want = claims.asOf.map { ContractMatrixTests.day($0) }
        var problems: [String] = []
        if health["exportDate"] as? String != want {
            problems.append("/healthz says data as of \(health["exportDate"] ?? "nil"), the model \(want ?? "nil")")
        }
        if health["mixed"] as? Bool != claims.mixed {
            problems.append("/healthz says mixed \(health["mixed"] ?? "nil"), the model \(claims.mixed)")
        }
        if health["failures"] as? Int != model.failures.count {
            problems.append("/healthz counts \(health["failures"] ?? "nil") failures, the model "
                            + "\(model.failures.count)")
        }
        return problems
    }

    /// The body of `GET path` on 127.0.0.1:`port` (HTTP/1.1, `Connection: close`), nil when it fails.
    static func httpGet(port: UInt16, path: String) -> String? {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return nil }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { return nil }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
        guard send(socket, request, request.count, 0) == request.count else { return nil }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(socket, &buffer, buffer.count, 0)
            if count <= 0 { break }
            response += buffer[0..<count]
        }
        let text = String(decoding: response, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { return nil }
        return String(text[split.upperBound...])
    }
}
