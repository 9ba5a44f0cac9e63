import EPFTestSupport
import Foundation
import Testing

/// The one CLI surface (issue 31, section 3): one JSON writer and date form, one vocabulary of kinds, short usage
/// errors, global options before the command, tables that fit the terminal, NO_COLOR, the phases line and the
/// exit codes the help lists. Each test runs the built binary on a small generated feed.
@Suite struct SurfaceCLITests {
    /// A generated feed (`apps` apps) imported into `epf.sqlite`, and one app id of it.
    struct Imported {
        let work: WorkDirectory
        let importRun: RunResult
        let appID: String
        var database: String { work.file("epf.sqlite") }

        init(apps: Int = 100, importArguments: [String] = ["--quiet"]) throws {
            work = try WorkDirectory()
            let generated = try runEPF(["generate", "feed", "--apps", "\(apps)"], in: work.path)
            guard generated.status == 0 else { throw Failure(text: "generate: \(generated.stderr)") }
            let feeds = try FileManager.default.contentsOfDirectory(atPath: work.file("feed")).sorted()
            importRun = try runEPF(["import"] + feeds.map { "feed/" + $0 } + ["--db", "epf.sqlite"] + importArguments,
                                   in: work.path)
            guard importRun.status == 0 else { throw Failure(text: "import: \(importRun.stderr)") }
            let id = try runEPF(["sql", "SELECT application_id FROM application ORDER BY 1 LIMIT 1", "--csv",
                                 "--db", "epf.sqlite"], in: work.path)
            appID = id.stdout.split(separator: "\r\n").dropFirst().first.map(String.init) ?? ""
        }

        func epf(_ arguments: [String], environment: [String: String] = [:]) throws -> RunResult {
            try runEPF(arguments, in: work.path, environment: environment)
        }
    }

    struct Failure: Error, CustomStringConvertible { let text: String; var description: String { text } }

    static func object(_ text: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
    }

    /// What JSONEncoder wrote and JSONText never does: `"key" : value`, escaped slashes, milliseconds.
    static func encoderMarks(_ text: String) -> [String] {
        var marks: [String] = []
        if text.contains("\" : ") { marks.append("\"key\" : value") }
        if text.contains("\\/") { marks.append("\\/") }
        if text.contains(/"exportDate" *: *\d/) { marks.append("exportDate in milliseconds") }
        return marks
    }

    /// Members whose value is a bare day such as `"20260105"` or `"2026-01-05"`, not the one date form.
    static func bareDays(_ text: String) -> [String] {
        text.matches(of: /"\w+": "(\d{8}|\d{4}-\d{2}-\d{2})"/).map { String($0.output.0) }
    }

    /// Whether text is an ISO 8601 UTC timestamp such as 2026-01-05T00:00:00Z.
    static func isISOTimestamp(_ text: String) -> Bool {
        text.wholeMatch(of: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z/) != nil
    }

    @Test func everyJSONReportUsesTheOneWriterAndISODates() throws {
        let work = try WorkDirectory()
        let generated = try runEPF(["generate", "mirror/20260105", "--apps", "100", "--json"], in: work.path)
        #expect(generated.status == 0, "\(generated.stderr)")
        #expect(Self.encoderMarks(generated.stdout).isEmpty, "\(Self.encoderMarks(generated.stdout))")
        #expect(Self.bareDays(generated.stdout).isEmpty, "\(Self.bareDays(generated.stdout))")
        let exportDate = Self.object(generated.stdout)["exportDate"] as? String ?? ""
        #expect(Self.isISOTimestamp(exportDate), "\(exportDate)")

        let inspected = try runEPF(["inspect", "mirror/20260105/itunes20260105", "--json"], in: work.path)
        let reports = (try? JSONSerialization.jsonObject(with: Data(inspected.stdout.utf8))) as? [[String: Any]] ?? []
        #expect(!reports.isEmpty && reports.allSatisfy { Self.isISOTimestamp($0["exportDate"] as? String ?? "") }
                    && reports.allSatisfy { $0["feedDate"] as? String == "2026-01-05T00:00:00Z" },
                "\(inspected.stdout.prefix(300))")
        #expect(Self.bareDays(inspected.stdout).isEmpty, "\(Self.bareDays(inspected.stdout))")

        let plan = try runEPF(["sync", "mirror", "--plan", "--json", "--db", "epf.sqlite"], in: work.path)
        #expect(plan.status == 0, "\(plan.stderr)")
        let steps = Self.object(plan.stdout)["steps"] as? [[String: Any]] ?? []
        #expect(steps.count == 1 && steps.first?["mode"] as? String == "full"
                    && steps.first?["date"] as? String == "2026-01-05T00:00:00Z", "\(plan.stdout)")

        for command in [["sync", "mirror"], ["import", "mirror/20260105", "--force"]] {
            let run = try runEPF(command + ["--db", "epf.sqlite", "--json"], in: work.path)
            #expect(run.status == 0, "\(command): \(run.stderr)")
            #expect(Self.encoderMarks(run.stdout).isEmpty, "\(command): \(Self.encoderMarks(run.stdout))")
            let report = Self.object(run.stdout)
            let outcomes = report["outcomes"] as? [[String: Any]] ?? []
            let applied = outcomes.filter { $0["status"] as? String == "applied" }
            #expect(!applied.isEmpty, "\(command): \(run.stdout.prefix(400))")
            for outcome in applied {
                let date = outcome["exportDate"] as? String ?? ""
                #expect(Self.isISOTimestamp(date), "\(command): \(date)")
                #expect(outcome["feedDate"] as? String == "2026-01-05T00:00:00Z", "\(command): \(outcome)")
            }
            #expect(Self.bareDays(run.stdout).isEmpty, "\(command): \(Self.bareDays(run.stdout))")
            // Seconds to the millisecond, rates whole: no long fractions anywhere in the report.
            #expect(run.stdout.firstMatch(of: /": -?\d+\.\d{4,}/) == nil, "\(command): unrounded number")
            #expect(run.stdout.firstMatch(of: /"rowsPerSecond": -?\d+\./) == nil, "\(command): rows/s not whole")
            // No history is recorded: nothing is timed under either history phase, however busy the machine.
            let phases = report["phases"] as? [String: Double] ?? [:]
            #expect(phases["priceHistory"] == 0 && phases["rankHistory"] == 0, "\(command): \(phases)")
        }
    }

    @Test func pricesAndLookupAnswerInJSONForAnUnknownID() throws {
        let feed = try Imported()
        let unknown = try feed.epf(["prices", "99", "--json", "--db", feed.database])
        #expect(unknown.status == 1 && unknown.stderr.contains("not found: 99"))
        let answer = Self.object(unknown.stdout)
        #expect(answer["id"] as? Int == 99 && answer["found"] as? Bool == false
                    && (answer["prices"] as? [Any])?.isEmpty == true, "\(unknown.stdout)")
        let genre = try feed.epf(["genres", "999999", "--json", "--db", feed.database])
        #expect(genre.status == 1 && Self.object(genre.stdout)["found"] as? Bool == false, "\(genre.stdout)")
        let lookup = try feed.epf(["lookup", "99", "--json", "--db", feed.database])
        #expect(lookup.status == 1 && (Self.object(lookup.stdout)["invalidIds"] as? [String]) == ["99"])

        let known = try feed.epf(["prices", feed.appID, "--json", "--db", feed.database])
        let prices = Self.object(known.stdout)
        #expect(known.status == 0 && prices["found"] as? Bool == true && prices["kind"] as? String == "app",
                "\(known.stdout.prefix(300))")
    }

    @Test func oneVocabularyWithTheOldWordsAsAliases() throws {
        let feed = try Imported()
        let heading = try feed.epf(["lookup", feed.appID, "--db", feed.database])
        #expect(heading.stdout.split(separator: "\n").first?.hasSuffix("(app)") == true, "\(heading.stdout)")
        let prices = try feed.epf(["prices", feed.appID, "--db", feed.database])
        #expect(prices.stdout.split(separator: "\n").first?.hasSuffix("(app)") == true, "\(prices.stdout)")

        let title = try feed.epf(["sql", "SELECT title FROM application WHERE application_id = \(feed.appID)",
                                  "--csv", "--db", feed.database])
        let word = String(title.stdout.split(separator: "\r\n").dropFirst().first?.split(separator: " ").first ?? "")
        let app = try feed.epf(["search", word, "--entity", "app", "--db", feed.database])
        let software = try feed.epf(["search", word, "--entity", "software", "--db", feed.database])
        #expect(app.status == 0 && app.stdout == software.stdout, "\(app.stderr)")
        let kinds = app.stdout.split(separator: "\n").dropFirst().map { $0.split(separator: " ")[1] }
        #expect(!kinds.isEmpty && kinds.allSatisfy { $0 == "app" }, "\(app.stdout)")

        for (alias, word) in [("software", "app"), ("album", "collection"), ("book", "collection")] {
            let viaAlias = try feed.epf(["changes", "--since", "2026-01-01", "--kind", alias, "--json",
                                         "--db", feed.database])
            let viaWord = try feed.epf(["changes", "--since", "2026-01-01", "--kind", word, "--json",
                                        "--db", feed.database])
            #expect(viaAlias.status == 0 && viaAlias.stdout == viaWord.stdout, "\(alias): \(viaAlias.stderr)")
        }
    }

    @Test(arguments: [
        (["imprt", "x"], "epf: unknown command 'imprt'; did you mean 'import'?", "see 'epf --help'"),
        (["lookup", "1", "--contry", "us"], "epf lookup: unknown option '--contry'; did you mean '--country'?",
         "see 'epf lookup --help'"),
        (["import", "x", "--dry-rn"], "epf import: unknown option '--dry-rn'; did you mean '--dry-run'?",
         "see 'epf import --help'"),
        // A typo of an older word suggests epf's word for it.
        (["search", "x", "--entity", "softwar"],
         "epf search: --entity must be one of app, book, album, song, video, artist, got 'softwar'; "
             + "did you mean 'app'?", "see 'epf search --help'"),
        (["changes", "--since", "2026-01-01", "--kind", "albun"],
         "epf changes: --kind must be one of app, collection, song, video, artist, price, rank, got 'albun'; "
             + "did you mean 'collection'?", "see 'epf changes --help'"),
        (["--dbb", "x", "status"], "epf: unknown option '--dbb' before the command; did you mean '--db'?",
         "see 'epf --help'"),
        (["status", "--frobnicate"], "epf status: unknown option '--frobnicate'", "see 'epf status --help'"),
    ])
    func aUsageErrorIsOneLineAndWhereTheHelpIs(arguments: [String], error: String, pointer: String) throws {
        let work = try WorkDirectory()
        let run = try runEPF(arguments, in: work.path)
        #expect(run.status == 64)
        #expect(run.stderr == error + "\n" + pointer + "\n", "\(arguments)")
        #expect(run.stdout.isEmpty)
    }

    @Test func globalOptionsWorkBeforeTheCommand() throws {
        let feed = try Imported()
        let after = try feed.epf(["status", "--db", feed.database, "--json"])
        let before = try feed.epf(["--db", feed.database, "--json", "status"])
        #expect(after.status == 0 && before.status == 0, "\(before.stderr)")
        #expect(Self.object(before.stdout)["tables"] != nil && before.stdout == after.stdout)
        let version = try feed.epf(["--db", feed.database, "--version"])
        #expect(version.status == 0 && version.stdout.hasPrefix("epf "), "\(version.stderr)")
        let nothing = try feed.epf(["--db", feed.database])
        #expect(nothing.status == 64 && nothing.stderr.hasSuffix("see 'epf --help'\n"), "\(nothing.stderr)")
        // The command's own --db wins over one given before it.
        let both = try feed.epf(["--db", "elsewhere.sqlite", "lookup", feed.appID, "--db", feed.database])
        #expect(both.status == 0, "\(both.stderr)")
        let quiet = try feed.epf(["--quiet", "--db", "again.sqlite", "import", "feed/itunes20260105",
                                  "--only", "^genre$"])
        #expect(quiet.status == 0 && FileManager.default.fileExists(atPath: feed.work.file("again.sqlite")),
                "\(quiet.stderr)")
    }

    /// Runs `epf` on a pseudo-terminal of `columns` columns (util-linux `script`); the output with `\r\n` as `\n`.
    static func onTerminal(_ arguments: [String], columns: Int, in directory: String,
                           environment: [String: String] = [:]) throws -> String {
        let quoted = ([BuiltEPF.url.path] + arguments).map { "'" + $0.replacing("'", with: "'\\''") + "'" }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qec", "stty cols \(columns) rows 60; exec " + quoted.joined(separator: " "), "/dev/null"]
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        var merged = ProcessInfo.processInfo.environment
        merged.removeValue(forKey: "EPF_DB")
        merged.removeValue(forKey: "NO_COLOR")
        for (key, value) in environment { merged[key] = value }
        process.environment = merged
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let (data, _) = BuiltEPF.readToEnd(process, output: output, errors: errors)
        return String(decoding: data, as: UTF8.self).replacing("\r\n", with: "\n")
    }

    static func width(_ line: Substring) -> Int {
        line.replacing(/\x1B\[[0-9;]*[A-Za-z]/, with: "").count
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"),
                   "needs util-linux script for a pseudo-terminal"))
    func tablesFitTheTerminalAndWideOrAPipeShowsEverything() throws {
        let feed = try Imported()
        let arguments = ["status", "--db", feed.database]
        let narrow = try Self.onTerminal(arguments, columns: 80, in: feed.work.path)
        let lines = narrow.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("table ") }, "\(narrow)")
        #expect(lines.allSatisfy { Self.width($0) <= 80 }, "\(narrow)")
        #expect(!narrow.contains("…"), "a column cut at the edge: \(narrow)")
        #expect(narrow.contains("--wide shows them"))
        let lastImports = lines.first { $0.hasPrefix("finished") } ?? ""
        #expect(!lastImports.contains("location") && lastImports.contains("rows"), "\(lastImports)")

        let wide = try Self.onTerminal(arguments + ["--wide"], columns: 80, in: feed.work.path)
        #expect(wide.split(separator: "\n").contains { $0.hasPrefix("finished") && $0.hasSuffix("location") })
        let piped = try feed.epf(arguments)
        #expect(piped.stdout.split(separator: "\n").contains { $0.hasPrefix("finished") && $0.hasSuffix("location") })
        #expect(!piped.stdout.contains("--wide"))
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"),
                   "needs util-linux script for a pseudo-terminal"))
    func anEmptyNoColorKeepsColour() throws {
        let feed = try Imported()
        let arguments = ["prices", feed.appID, "--db", feed.database]
        let bold = "\u{1B}[1m"
        #expect(try Self.onTerminal(arguments, columns: 100, in: feed.work.path, environment: ["NO_COLOR": ""])
                    .contains(bold))
        #expect(try !Self.onTerminal(arguments, columns: 100, in: feed.work.path, environment: ["NO_COLOR": "1"])
                    .contains(bold))
    }

    @Test func thePhasesLineNamesOnlyThePhasesThatRan() throws {
        let feed = try Imported(importArguments: ["--no-documents"])
        let phases = feed.importRun.stdout.split(separator: "\n").first { $0.hasPrefix("phases: ") } ?? ""
        #expect(phases.hasPrefix("phases: reading "), "\(feed.importRun.stdout)")
        #expect(!phases.contains("price history") && !phases.contains("lookup documents"), "\(phases)")
    }

    /// Every exit code epf's sources return (the cases of `ExitCode`) is listed in `epf --help`, in docs/cli.md
    /// and in epf(1).
    @Test func theHelpTheDocsAndTheManPageListEveryExitCode() throws {
        let root = BuiltEPF.packageRoot
        let source = try String(contentsOf: root.appendingPathComponent("Sources/epf/CLI.swift"), encoding: .utf8)
        guard let enumRange = source.range(of: "enum ExitCode: Int32") else {
            Issue.record("no enum ExitCode in Sources/epf/CLI.swift")
            return
        }
        let body = source[enumRange.upperBound...].prefix { $0 != "}" }
        var codes = Set(body.matches(of: /case \w+ = (\d+)/).compactMap { Int($0.1) })
        // Any literal exit status elsewhere in the CLI's sources.
        let directory = root.appendingPathComponent("Sources/epf").path
        let sources = try FileManager.default.contentsOfDirectory(atPath: directory)
        for file in sources where file.hasSuffix(".swift") {
            let text = try String(contentsOf: root.appendingPathComponent("Sources/epf/" + file), encoding: .utf8)
            codes.formUnion(text.matches(of: /\bexit\((\d+)\)/).compactMap { Int($0.1) })
        }
        #expect(codes.isSuperset(of: [0, 1, 64, 65, 66, 69, 70, 73, 75, 77]), "\(codes.sorted())")

        let work = try WorkDirectory()
        let help = try runEPF(["--help"], in: work.path).stdout
        let helpCodes = help.components(separatedBy: "Exit codes:").last ?? ""
        let cli = try String(contentsOf: root.appendingPathComponent("docs/cli.md"), encoding: .utf8)
        let cliCodes = cli.components(separatedBy: "Exit status, the same for every command:").last?
            .components(separatedBy: "\n\n").first ?? ""
        #expect(try runEPF(["help", "--man", work.file("man")], in: work.path).status == 0)
        let man = try String(contentsOfFile: work.file("man/epf.1"), encoding: .utf8)
        let manCodes = man.components(separatedBy: ".SH EXIT STATUS").last?.components(separatedBy: ".SH").first ?? ""
        for code in codes.sorted() {
            #expect(helpCodes.contains(try Regex("\\b\(code) [a-z]")), "epf --help does not list exit code \(code)")
            #expect(cliCodes.contains("**\(code)**"), "docs/cli.md does not list exit code \(code)")
            #expect(manCodes.contains(".B \(code)\n"), "epf(1) does not list exit code \(code)")
        }
    }
}
