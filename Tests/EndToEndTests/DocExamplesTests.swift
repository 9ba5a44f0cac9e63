import EPFTestSupport
import Foundation
import Testing

/// The docs say what is true: every `$ epf ...` transcript in README.md, feeds/README.md and docs/*.md runs and
/// prints what the doc shows (see `DocBlock` for the marks a doc may use), every `$ curl ...` transcript gets from
/// `epf serve` what the doc shows, every example of `epf CMD --help` runs, and every source path the docs name
/// exists. The commands run against the database `scripts/demo` builds.
@Suite("Documented examples")
struct DocExamplesTests {
    static let root = EPFBinary.packageRoot

    /// Every block of every document, and the directive errors found while reading them.
    static let parsed: (blocks: [DocBlock], errors: [String]) = {
        var errors: [String] = []
        var blocks: [DocBlock] = []
        for file in DocBlock.documents(root: root) {
            guard let text = try? String(contentsOf: root.appendingPathComponent(file), encoding: .utf8) else {
                errors.append("\(file): cannot be read")
                continue
            }
            blocks += DocBlock.blocks(in: file, text: text, errors: &errors)
        }
        return (blocks, errors)
    }()

    /// A directory holding `epf` (a link to the built binary) for the commands' `PATH`; held for the whole run.
    nonisolated(unsafe) static let binDirectory = try? TemporaryDirectory(prefix: "epf-doc-bin")

    /// `binDirectory` with its link made once.
    static let binPath: String = {
        guard let directory = binDirectory?.path else { return "" }
        try? FileManager.default.createSymbolicLink(atPath: directory + "/epf", withDestinationPath: EPFBinary.url.path)
        atexit {
            if let path = DocExamplesTests.binDirectory?.path { try? FileManager.default.removeItem(atPath: path) }
        }
        return directory
    }()

    /// Runs `command` with the shell in `directory`, `epf` on `PATH` meaning the built binary.
    static func run(_ command: String, in directory: String) throws -> RunResult {
        let path = binPath + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        return try runShell(command, in: directory, environment: ["PATH": path, "NO_COLOR": "1"])
    }

    @Test func theDocsHoldTranscriptsAndOnlyKnownDirectives() {
        #expect(Self.parsed.errors.isEmpty, "\(Self.parsed.errors)")
        let blocks = Self.parsed.blocks
        #expect(blocks.count >= 20, "found \(blocks.count) blocks with '$ epf' commands")
        let skipped = blocks.filter { if case .skip = $0.mode { return true } else { return false } }
        #expect(skipped.count <= 4, "exemptions stay few: \(skipped)")
        let requests = blocks.flatMap(\.examples).filter(\.isHTTP).count
        #expect(requests >= 30, "found \(requests) '$ curl' requests")
    }

    /// How a request's answer is compared: the doc's wrapped, trimmed JSON matches the one-line body, a space at a
    /// wrap inside a string is the text's own, and any other difference (a value, a key, a header) is caught.
    @Test func aWrappedAnswerMatchesItsBodyAndNothingElse() {
        let body = #"{"id":1,"name":"Café Olé","tags":["a","b"],"note":"its popularity was not","price":0.99}"#
        let shown = [#"{"id":1,"name":"Café Olé", …,"note":"its"#, #" popularity was not", …}"#]
        #expect(DocOutput.matches(DocOutput.httpLines(shown), DocOutput.httpLines([body])))
        let wrappedBetweenValues = [#"{"id":1,"name":"Café Olé","tags":["a","b"],"#,
                                    #" "note":"its popularity was not","#, #"   "price":0.99}"#]
        #expect(DocOutput.matches(DocOutput.httpLines(wrappedBetweenValues), DocOutput.httpLines([body])))
        let wrongs = [[#"{"id":2, …}"#], [#"{"id":1,"name":"Cafe Ole", …}"#], [#"{"id":1, …,"price":1.99}"#],
                      [#"{"id":1,"name":"Café Olé", …,"note":"itspopularity was not", …}"#],
                      [#"{"id":1, …,"tags":["a"], …}"#]]
        for wrong in wrongs {
            #expect(!DocOutput.matches(DocOutput.httpLines(wrong), DocOutput.httpLines([body])), "\(wrong)")
        }
        let headers = ["HTTP/1.1 200 OK", "Date: Sun, 22 Nov 2026 02:48:24 GMT", "Content-Length: 85", "", body]
        let answered = ["HTTP/1.1 200 OK", "Date: Fri, 27 Nov 2026 16:20:19 GMT", "Content-Length: 85", "", body, ""]
        #expect(DocOutput.matches(DocOutput.httpLines(headers), DocOutput.httpLines(answered)))
        let otherLength = ["HTTP/1.1 200 OK", "Date: Fri, 27 Nov 2026 16:20:19 GMT", "Content-Length: 86", "", body]
        #expect(!DocOutput.matches(DocOutput.httpLines(headers), DocOutput.httpLines(otherLength)))
    }

    /// The blocks with `$ epf` commands to run (their `curl` commands run in `aDocumentedRequestAnswers...`).
    static let commandBlocks = parsed.blocks.filter { $0.examples.contains { !$0.isHTTP } }

    @Test(arguments: commandBlocks)
    func aDocumentedTranscriptPrintsWhatTheDocShows(block: DocBlock) throws {
        if case .skip = block.mode { return }
        let work = try WorkDirectory(prefix: "epf-doc")
        if block.mode == .fresh {
            try DemoDatabase.linkFeeds(into: work.path)
        } else {
            try DemoDatabase.copy(into: work.path)
        }
        for example in block.examples where !example.isHTTP {
            let run = try Self.run(example.command, in: work.path)
            let place = "\(block.file):\(example.line): \(example.command)"
            #expect(run.status == example.status, "\(place): exit status \(run.status)\n\(run.stderr.suffix(1500))")
            let printed = Self.lines(run.stdout)
            let actual = printed.last == "" ? Array(printed.dropLast()) : printed
            let shown = example.stdout.joined(separator: "\n")
            #expect(DocOutput.matches(example.stdout, actual),
                    "\(place): the doc shows\n\(shown)\nbut it printed\n\(run.stdout)")
            let shownOnStderr = example.stderr.joined(separator: "\n")
            #expect(DocOutput.contains(example.stderr, in: Self.lines(run.stderr)),
                    "\(place): the doc shows on stderr\n\(shownOnStderr)\nbut it printed\n\(run.stderr)")
        }
    }

    /// The documents with `$ curl` commands to run.
    static let httpDocuments = Array(Set(parsed.blocks.filter { $0.examples.contains(where: \.isHTTP) }.map(\.file)))
        .sorted()

    /// Every `$ curl` command of `document`, in the document's order, against one `epf serve --threads 2` of a copy
    /// of the demo database (so `/metrics` counts exactly the requests shown before it), with the doc's
    /// `127.0.0.1:8080` made the server's port; what curl prints is compared after `DocOutput.httpLines`.
    @Test(arguments: httpDocuments)
    func aDocumentedRequestAnswersWhatTheDocShows(document: String) throws {
        let curl = try runShell("command -v curl", in: "/")
        try #require(curl.status == 0, "the documented requests need curl: run scripts/prerequisites --test")
        let work = try WorkDirectory(prefix: "epf-doc-http")
        try DemoDatabase.copy(into: work.path)
        let served = try ServedEPF(database: "epf.sqlite", in: work.path, options: ["--threads", "2"])
        defer { served.stop() }
        // Only this server answers: no proxy, no ~/.curlrc.
        let environment = ["no_proxy": "*", "NO_PROXY": "*", "CURL_HOME": work.path]
        var ran = 0
        for block in Self.parsed.blocks where block.file == document {
            if case .skip = block.mode { continue }
            for example in block.examples where example.isHTTP {
                let place = "\(block.file):\(example.line): \(example.command)"
                guard example.command.contains("127.0.0.1:8080") else {
                    Issue.record("\(place): a documented request must ask 127.0.0.1:8080 (the test's server stands in)")
                    continue
                }
                let command = example.command.replacingOccurrences(of: "127.0.0.1:8080",
                                                                   with: "127.0.0.1:\(served.port)")
                let run = try runShell(command, in: work.path, environment: environment)
                ran += 1
                #expect(run.status == example.status, "\(place): exit status \(run.status)\n\(run.stderr.suffix(500))")
                let shown = example.stdout.joined(separator: "\n")
                let answered = DocOutput.httpLines(Self.lines(run.stdout))
                #expect(DocOutput.matches(DocOutput.httpLines(example.stdout), answered),
                        "\(place): the doc shows\n\(shown)\nbut it printed\n\(run.stdout)")
            }
        }
        #expect(ran > 0, "\(document): no request ran")
    }

    /// The lines of `text`, whichever line ends it uses (CSV ends its records with CR LF).
    static func lines(_ text: String) -> [String] {
        text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).map(String.init)
    }

    /// The commands `epf --help` lists.
    static func commands() throws -> [String] {
        let help = try runEPF(["--help"], in: root.path).stdout
        let listed = help.components(separatedBy: "COMMANDS:").last?.components(separatedBy: "\n\n").first ?? ""
        return listed.split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) }
    }

    /// Help examples not run, each with the reason; everything else in an EXAMPLES section runs.
    static let helpExemptions: [(pattern: String, reason: String)] = [
        ("^epf fetch ", "downloads from Apple's feed server (FetchCLITests runs fetch against a local one)"),
        ("^epf serve ", "serves until stopped (the EPFServerTests and ServedEPF tests start it on port 0)"),
        ("postgresql://", "needs a PostgreSQL server (PostgresTests starts one)"),
        ("^epf generate .*(--apps 1000000|--scale)", "writes gigabytes for benchmarks"),
    ]

    /// Every example of `epf CMD --help` exits 0: `import`, `sync` and `generate` examples in order in an empty
    /// directory holding `feeds/`, the others in a copy of the demo database.
    @Test func everyHelpExampleRuns() throws {
        let commands = try Self.commands()
        #expect(commands.count >= 10, "\(commands)")
        var ran = 0
        for command in commands {
            let help = try runEPF([command, "--help"], in: Self.root.path).stdout
            guard let section = help.components(separatedBy: "EXAMPLES:\n").dropFirst().first else { continue }
            let examples = section.components(separatedBy: "\n\n")[0].split(separator: "\n")
                .map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { $0.hasPrefix("epf ") }
            let work = try WorkDirectory(prefix: "epf-help")
            if ["import", "sync", "generate"].contains(command) {
                try DemoDatabase.linkFeeds(into: work.path)
            } else {
                try DemoDatabase.copy(into: work.path)
            }
            for example in examples where !Self.helpExemptions.contains(where: {
                example.range(of: $0.pattern, options: .regularExpression) != nil
            }) {
                let run = try Self.run(example, in: work.path)
                ran += 1
                let errors = run.stderr.suffix(1500)
                #expect(run.status == 0, "epf \(command) --help: \(example): exit \(run.status)\n\(errors)")
            }
        }
        #expect(ran >= 25, "ran \(ran) help examples")
    }

    /// Source paths the docs quote: `Sources/...` and `Tests/...` paths, and file names in backquotes such as
    /// `ReadAheadSchedule.swift` or `SQLite/Importer.swift`, which must name a file under Sources/ or Tests/.
    @Test func everySourcePathTheDocsNameExists() throws {
        let manager = FileManager.default
        var swiftFiles: [String] = []
        for top in ["Sources", "Tests"] {
            let enumerator = manager.enumerator(atPath: Self.root.appendingPathComponent(top).path)
            while let path = enumerator?.nextObject() as? String {
                if path.hasSuffix(".swift") || path.hasSuffix(".h") { swiftFiles.append(top + "/" + path) }
            }
        }
        var checked = 0
        var missing: [String] = []
        for file in ["README.md"] + DocBlock.documents(root: Self.root).filter({ $0.hasPrefix("docs/") }) {
            let text = try String(contentsOf: Self.root.appendingPathComponent(file), encoding: .utf8)
            for match in text.matches(of: /(?:Sources|Tests)\/[A-Za-z0-9_.\/+-]*[A-Za-z0-9_+-]/) {
                checked += 1
                if !manager.fileExists(atPath: Self.root.appendingPathComponent(String(match.0)).path) {
                    missing.append("\(file): \(match.0)")
                }
            }
            for match in text.matches(of: /`([A-Za-z0-9_\/+-]+\.(?:swift|h))`/) {
                let name = String(match.1)
                checked += 1
                if !swiftFiles.contains(where: { $0 == name || $0.hasSuffix("/" + name) }) {
                    missing.append("\(file): `\(name)`")
                }
            }
        }
        #expect(checked >= 30, "checked \(checked) paths")
        #expect(missing.isEmpty, "paths the docs name that do not exist:\n\(missing.joined(separator: "\n"))")
    }
}
