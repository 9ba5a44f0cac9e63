import EPFFormat
import Foundation

/// Every subcommand, in the order `epf --help` lists them. Unchecked: a constant, read on the main thread only
/// (metatypes of `Command` are not `Sendable`).
nonisolated(unsafe) let commands: [Command.Type] = [
    InspectCommand.self,
    ImportCommand.self,
    FetchCommand.self,
    SyncCommand.self,
    StatusCommand.self,
    LookupCommand.self,
    ChangesCommand.self,
    SearchCommand.self,
    PricesCommand.self,
    GenresCommand.self,
    ChartsCommand.self,
    RanksCommand.self,
    StorefrontsCommand.self,
    SQLCommand.self,
    ExportCommand.self,
    ServeCommand.self,
    GenerateCommand.self,
]

let mainHelp = """
epf: turn Apple's Enterprise Partner Feed into a fast, verified, queryable SQLite database.

USAGE: epf [--db FILE] [--json] [--quiet] [--wide] <command> [options]

COMMANDS:
\(commands.map { "  " + $0.name.padding(toLength: 12, withPad: " ", startingAt: 0) + $0.summary }
    .joined(separator: "\n"))

Run 'epf <command> --help' for a command's options and examples. --db, --schema, --json and --quiet may
come before the command too; --wide (anywhere) shows every column of a table wider than the terminal.
Exit codes: 0 ok, 1 not found, 64 usage, 65 bad data (also a --db that is not SQLite), 66 missing input,
69 server unavailable, 70 internal error, 73 cannot write (no space), 75 locked or a first import
interrupted, 77 permission (credentials refused, or a database this user may not read).
"""

func runMain() -> Int32 {
    var given = Array(CommandLine.arguments.dropFirst())
    TableLayout.wide = GlobalOptions.takeWide(&given)
    guard let (globals, rest) = splitGlobalOptions(given) else { return ExitCode.usage.rawValue }
    if !globals.isEmpty, let word = rest.first, ["--help", "-h", "--version"].contains(word) { given = rest }
    guard let first = given.first else {
        printError(mainHelp)
        return ExitCode.usage.rawValue
    }
    if first == "help", given.count > 1, given[1] == "--man" {
        return writeManPages(Array(given.dropFirst(2)))
    }
    if first == "completions" {
        return printCompletions(Array(given.dropFirst()))
    }
    if first == "--help" || first == "-h" || first == "help" {
        if first == "help", given.count > 1, let command = commands.first(where: { $0.name == given[1] }) {
            say(command.help)
        } else {
            say(mainHelp)
        }
        Output.shared.flush()
        return 0
    }
    if first == "--version" {
        say("epf \(EPFVersion.number)")
        Output.shared.flush()
        return 0
    }
    var words = rest
    guard let name = words.first else {
        printError("epf: give a command after \(globals.joined(separator: " "))\nsee 'epf --help'")
        return ExitCode.usage.rawValue
    }
    guard let command = commands.first(where: { $0.name == name }) else {
        let names = commands.map { $0.name } + ["help"]
        printError("epf: unknown command '\(name)'\(Nearest.hint(for: name, among: names))\nsee 'epf --help'")
        return ExitCode.usage.rawValue
    }
    words.removeFirst()
    var arguments = Arguments(globals + words)
    if arguments.wantsHelp {
        say(command.help)
        Output.shared.flush()
        return 0
    }
    do {
        let code = try command.run(&arguments)
        Output.shared.flush()
        return code.rawValue
    } catch let error as UsageError {
        Output.shared.flush()
        printError(usageMessage(error, command: command))
        return ExitCode.usage.rawValue
    } catch let error as CommandFailure {
        Output.shared.flush()
        printError("epf \(command.name): \(error.description)")
        return error.code.rawValue
    } catch {
        Output.shared.flush()
        printError("epf \(command.name): \(errorText(error))")
        return ExitCode.forUnexplained(error).rawValue
    }
}

/// The global options before the command and the words from the command on; nil (after saying why) for an
/// option before the command that is not a global one.
func splitGlobalOptions(_ words: [String]) -> (globals: [String], rest: [String])? {
    do {
        return try GlobalOptions.split(words)
    } catch {
        printError("epf: \(error)\nsee 'epf --help'")
        return nil
    }
}

/// A usage error as printed: one line with the error (and the nearest valid option for an unknown one), then
/// where the command's help is.
func usageMessage(_ error: UsageError, command: Command.Type) -> String {
    var line = "epf \(command.name): \(error.description)"
    if let unknown = error.unknownOption {
        let names = command.declaredOptions.map { "--" + $0.help.name } + ["--help"]
        line += Nearest.hint(for: unknown.split(separator: "=").first.map(String.init) ?? unknown, among: names)
    }
    return line + "\nsee 'epf \(command.name) --help'"
}

/// `epf help --man DIR` (not listed in `epf --help`; packaging runs it): writes epf.1 and epf-COMMAND.1 into DIR.
func writeManPages(_ words: [String]) -> Int32 {
    guard words.count == 1, let directory = words.first, !directory.hasPrefix("-") else {
        printError("USAGE: epf help --man DIR   (writes epf.1 and one epf-COMMAND.1 per command into DIR)")
        return ExitCode.usage.rawValue
    }
    do {
        for path in try ManPages.write(to: directory, version: EPFVersion.number) { say(path) }
        Output.shared.flush()
        return 0
    } catch let error as CommandFailure {
        printError("epf help --man: \(error.description)")
        return error.code.rawValue
    } catch {
        printError("epf help --man: \(directory): \(errorText(error))")
        return ExitCode.cannotCreate.rawValue
    }
}

/// `epf completions bash|zsh` (not listed in `epf --help`): prints the completion script for that shell.
func printCompletions(_ words: [String]) -> Int32 {
    let shells = Completions.Shell.allCases.map(\.rawValue).joined(separator: "|")
    guard words.count == 1, let shell = Completions.Shell(rawValue: words[0]) else {
        printError("USAGE: epf completions \(shells)   (prints the shell's completion script)")
        return ExitCode.usage.rawValue
    }
    Output.shared.write(Completions.script(for: shell))
    Output.shared.flush()
    return 0
}

signal(SIGPIPE, SIG_IGN)
// Past a file size limit (RLIMIT_FSIZE, ulimit -f) a write fails with EFBIG, which epf reports in plain words,
// instead of the signal killing the process mid-import.
signal(SIGXFSZ, SIG_IGN)
exit(runMain())
