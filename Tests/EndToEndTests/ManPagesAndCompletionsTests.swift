import EPFTestSupport
import Foundation
import Testing

/// A program other than epf (man, bash, zsh), run to completion.
struct ToolRun {
    var status: Int32
    var stdout: String
    var stderr: String

    /// Runs `path arguments` with `environment` added to this process's; nil when `path` does not exist.
    static func run(_ path: String, _ arguments: [String], environment: [String: String] = [:]) throws -> ToolRun? {
        guard FileManager.default.isExecutableFile(atPath: path) else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let (out, err) = BuiltEPF.readToEnd(process, output: output, errors: errors)
        return ToolRun(status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self),
                       stderr: String(decoding: err, as: UTF8.self))
    }
}

/// `epf help --man DIR` and `epf completions bash|zsh`: rendered from the declarations `--help` lists, so every
/// option of every command's `--help` must be in its man page and its completions, and the pages must render.
@Suite struct ManPagesAndCompletionsTests {
    /// The command names `epf --help` lists.
    static func commandNames(in directory: String) throws -> [String] {
        let help = try runEPF(["--help"], in: directory).stdout
        guard let start = help.range(of: "COMMANDS:\n") else { return [] }
        return help[start.upperBound...].split(separator: "\n").prefix { $0.hasPrefix("  ") }
            .compactMap { $0.split(separator: " ").first.map(String.init) }
    }

    /// The option names (`--db`, ...) in the OPTIONS block of `epf COMMAND --help`.
    static func helpOptions(_ command: String, in directory: String) throws -> Set<String> {
        let help = try runEPF([command, "--help"], in: directory).stdout
        guard let start = help.range(of: "OPTIONS:\n") else { return [] }
        var names = Set<String>()
        for line in help[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false) {
            if line.isEmpty { break }
            guard line.hasPrefix("  --") else { continue }
            names.insert(String(line.dropFirst(2).prefix { $0 != " " }))
        }
        return names
    }

    @Test func everyCommandHasAPageListingTheOptionsItsHelpLists() throws {
        let work = try WorkDirectory(prefix: "epf-man")
        let pages = work.file("man1")
        let written = try runEPF(["help", "--man", pages], in: work.path)
        #expect(written.status == 0, "\(written.stderr)")
        let names = try Self.commandNames(in: work.path)
        #expect(names.count >= 10)
        #expect(FileManager.default.fileExists(atPath: pages + "/epf.1"))
        for name in names {
            let source = try String(contentsOfFile: pages + "/epf-\(name).1", encoding: .utf8)
            let options = try Self.helpOptions(name, in: work.path)
            #expect(!options.isEmpty, "epf \(name) --help lists no options")
            for option in options {
                let roff = "\\fB" + option.replacingOccurrences(of: "-", with: "\\-") + "\\fR"
                #expect(source.contains(roff), "epf-\(name).1 lacks \(option), which epf \(name) --help lists")
            }
            #expect(source.contains(".SH SYNOPSIS") && source.contains(".SH OPTIONS"))
        }
        #expect(try runEPF(["help", "--man"], in: work.path).status == 64)
    }

    static let manAvailable = FileManager.default.isExecutableFile(atPath: "/usr/bin/man")

    @Test(.enabled(if: manAvailable, "man (Debian package man-db) is not installed; scripts/prerequisites installs it"))
    func everyPageRendersCleanlyAt80Columns() throws {
        let work = try WorkDirectory(prefix: "epf-man")
        let pages = work.file("man1")
        #expect(try runEPF(["help", "--man", pages], in: work.path).status == 0)
        let files = try FileManager.default.contentsOfDirectory(atPath: pages).filter { $0.hasSuffix(".1") }.sorted()
        #expect(files.count >= 11)
        for file in files {
            let path = pages + "/" + file
            // What lintian runs: groff's warnings (unknown requests, lines it cannot break) come on stderr.
            let checked = try ToolRun.run("/usr/bin/man", ["--warnings", "-E", "UTF-8", "-l", "-Tutf8", "-Z", path],
                                          environment: ["LC_ALL": "C.UTF-8", "MANWIDTH": "80", "MANROFFSEQ": ""])
            #expect(checked?.status == 0 && checked?.stderr == "", "\(file): \(checked?.stderr ?? "")")
            let shown = try ToolRun.run("/usr/bin/man", ["-l", path],
                                        environment: ["LC_ALL": "C.UTF-8", "MANWIDTH": "80"])
            let text = shown?.stdout ?? ""
            #expect(shown?.status == 0 && text.contains("NAME") && text.contains("SYNOPSIS"), "\(file): \(text)")
            for line in text.split(separator: "\n") {
                #expect(line.count <= 80, "\(file): a line of \(line.count) columns: \(line)")
                #expect(!line.hasPrefix(".") && !line.contains("\\f") && !line.contains("\\-"),
                        "\(file): roff shows through: \(line)")
            }
        }
    }

    /// Completes the words of `line` (the last one, possibly empty, is being typed) with the bash script.
    static func bashComplete(_ script: String, _ line: [String]) throws -> [String] {
        let words = line.map { "'\($0)'" }.joined(separator: " ")
        let program = script + "\nCOMP_WORDS=(\(words)); COMP_CWORD=\(line.count - 1); _epf; "
            + "printf '%s\\n' \"${COMPREPLY[@]}\""
        let run = try ToolRun.run("/bin/bash", ["-c", program])
        return (run?.stdout ?? "").split(separator: "\n").map(String.init).sorted()
    }

    @Test func bashCompletesCommandsOptionsAndFixedValues() throws {
        let work = try WorkDirectory(prefix: "epf-completions")
        let generated = try runEPF(["completions", "bash"], in: work.path)
        #expect(generated.status == 0, "\(generated.stderr)")
        let script = generated.stdout
        let syntax = try ToolRun.run("/bin/bash", ["-n", "-c", script])
        #expect(syntax?.status == 0, "bash -n: \(syntax?.stderr ?? "no bash")")
        #expect(try Self.bashComplete(script, ["epf", "sy"]) == ["sync"])
        #expect(try Self.bashComplete(script, ["epf", "import", "--bad-values", ""]) == ["null", "reject"])
        #expect(try Self.bashComplete(script, ["epf", "sync", "--bad-values", "r"]) == ["reject"])
        #expect(try Self.bashComplete(script, ["epf", "generate", "--layout", ""]) == ["v3", "v3-archive", "v5"])
        for name in try Self.commandNames(in: work.path) {
            let offered = Set(try Self.bashComplete(script, ["epf", name, "--"]))
            let listed = try Self.helpOptions(name, in: work.path)
            #expect(listed.isSubset(of: offered), "epf \(name): --help lists \(listed.subtracting(offered))")
            #expect(offered.subtracting(listed) == ["--help"], "epf \(name): completes \(offered.subtracting(listed))")
        }
        #expect(try runEPF(["completions", "fish"], in: work.path).status == 64)
    }

    static let zshAvailable = FileManager.default.isExecutableFile(atPath: "/usr/bin/zsh")

    @Test func zshScriptNamesEveryCommandAndParses() throws {
        let work = try WorkDirectory(prefix: "epf-completions")
        let generated = try runEPF(["completions", "zsh"], in: work.path)
        #expect(generated.status == 0, "\(generated.stderr)")
        #expect(generated.stdout.hasPrefix("#compdef epf\n"))
        for name in try Self.commandNames(in: work.path) {
            #expect(generated.stdout.contains("        \(name))\n"), "no case for \(name)")
        }
        #expect(generated.stdout.contains("--bad-values=[") && generated.stdout.contains(":(null reject)'"))
        // zsh -n checks the syntax where zsh is installed (it is not a prerequisite of the tests).
        if Self.zshAvailable {
            let file = work.file("_epf")
            try generated.stdout.write(toFile: file, atomically: true, encoding: .utf8)
            let syntax = try ToolRun.run("/usr/bin/zsh", ["-n", file])
            #expect(syntax?.status == 0, "zsh -n: \(syntax?.stderr ?? "")")
        }
    }
}
