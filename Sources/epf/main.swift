import EPFFormat
import Foundation

/// Every subcommand, in the order `epf --help` lists them.
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
    StorefrontsCommand.self,
    SQLCommand.self,
    ServeCommand.self,
    GenerateCommand.self,
]

let mainHelp = """
epf: turn Apple's Enterprise Partner Feed into a fast, verified, queryable SQLite database.

USAGE: epf <command> [options]

COMMANDS:
\(commands.map { "  " + $0.name.padding(toLength: 12, withPad: " ", startingAt: 0) + $0.summary }
    .joined(separator: "\n"))

Run 'epf <command> --help' for a command's options and examples.
Exit codes: 0 ok, 1 not found, 64 usage, 65 bad data, 66 missing input, 69 server unavailable,
73 cannot write (no space), 75 locked, 77 credentials refused.
"""

func runMain() -> Int32 {
    var words = Array(CommandLine.arguments.dropFirst())
    guard let first = words.first else {
        printError(mainHelp)
        return ExitCode.usage.rawValue
    }
    if first == "--help" || first == "-h" || first == "help" {
        if first == "help", words.count > 1, let command = commands.first(where: { $0.name == words[1] }) {
            say(command.help)
        } else {
            say(mainHelp)
        }
        Output.shared.flush()
        return 0
    }
    if first == "--version" {
        say("epf 0.1.0")
        Output.shared.flush()
        return 0
    }
    guard let command = commands.first(where: { $0.name == first }) else {
        printError("epf: unknown command '\(first)'\n\n\(mainHelp)")
        return ExitCode.usage.rawValue
    }
    words.removeFirst()
    var arguments = Arguments(words)
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
        printError("epf \(command.name): \(error.description)\n\n\(command.help)")
        return ExitCode.usage.rawValue
    } catch let error as CommandFailure {
        Output.shared.flush()
        printError("epf \(command.name): \(error.description)")
        return error.code.rawValue
    } catch {
        Output.shared.flush()
        printError("epf \(command.name): \(errorText(error))")
        return ExitCode.software.rawValue
    }
}

signal(SIGPIPE, SIG_IGN)
// Past a file size limit (RLIMIT_FSIZE, ulimit -f) a write fails with EFBIG, which epf reports in plain words,
// instead of the signal killing the process mid-import.
signal(SIGXFSZ, SIG_IGN)
exit(runMain())
