import EPFConcurrency
import EPFPostgres
import Foundation

/// Exit statuses, following sysexits(3) like swift-argument-parser's tools.
///
/// Every case is listed in `epf --help`, docs/cli.md and epf(1); a test reads this enum and checks.
enum ExitCode: Int32, CaseIterable {
    case ok = 0
    /// Some requested IDs were not found (lookup), or a generic failure.
    case notFound = 1
    case usage = 64
    case dataError = 65
    case noInput = 66
    /// A server did not answer or deliver after retries (EX_UNAVAILABLE).
    case unavailable = 69
    /// An internal error: a failure epf did not foresee, or a server that could not start (EX_SOFTWARE).
    case software = 70
    case cannotCreate = 73
    case tempFail = 75
    /// The server refused the credentials (EX_NOPERM).
    case noPermission = 77
}

/// A mistake in the command line: printed as one line (with the nearest valid word when there is one) and a
/// pointer to `--help`, exit 64.
struct UsageError: Error, CustomStringConvertible {
    let description: String
    /// The option word that is not one of the command's (e.g. `--contry`), for a "did you mean" hint.
    let unknownOption: String?

    init(_ message: String) {
        description = message
        unknownOption = nil
    }

    /// An option the command does not take.
    init(unknownOption: String) {
        description = "unknown option '\(unknownOption)'"
        self.unknownOption = unknownOption
    }
}

/// A failure the command already explained; carries the exit status to use.
struct CommandFailure: Error, CustomStringConvertible {
    let code: ExitCode
    let description: String
    init(_ code: ExitCode, _ message: String) {
        self.code = code
        description = message
    }
}

/// One subcommand of `epf`: a name, a help text with examples, and `run`.
protocol Command {
    /// The word after `epf`, e.g. "inspect".
    static var name: String { get }
    /// One line for `epf --help`.
    static var summary: String { get }
    /// The full `--help` text: usage line, options, examples.
    static var help: String { get }
    /// The options the command reads, in the order `--help` lists them (see `CommandOptions.swift`).
    static var declaredOptions: [any DeclaredOption] { get }
    /// Runs with the arguments after the command name; returns the exit status.
    static func run(_ arguments: inout Arguments) throws -> ExitCode
}

/// Command-line arguments after the subcommand: `--flag`, `--option value`, `--option=value`, positionals.
///
/// Commands read their options through declarations (`OptionDeclarations.swift`), which `--help` lists too;
/// `finish()` rejects anything left over.
struct Arguments {
    private var rawOrder: [String]
    private var consumed = Set<Int>()

    init(_ items: [String]) {
        rawOrder = items
    }


    private static func looksNumeric(_ text: String) -> Bool {
        text.count > 1 && text.dropFirst().allSatisfy { $0.isNumber || $0 == "." }
    }

    /// True when `--help` or `-h` was given.
    var wantsHelp: Bool { rawOrder.contains("--help") || rawOrder.contains("-h") }

    /// Removes and returns whether `--name` was given.
    mutating func flag(_ name: String) -> Bool {
        var found = false
        for (index, item) in rawOrder.enumerated() where !consumed.contains(index) && item == "--\(name)" {
            consumed.insert(index)
            found = true
        }
        return found
    }

    /// Removes and returns the value of `--name VALUE` or `--name=VALUE` (the last one wins).
    mutating func option(_ name: String) throws -> String? {
        var value: String?
        var index = 0
        while index < rawOrder.count {
            defer { index += 1 }
            guard !consumed.contains(index) else { continue }
            let item = rawOrder[index]
            if item == "--\(name)" {
                guard index + 1 < rawOrder.count, !consumed.contains(index + 1) else {
                    throw UsageError("--\(name) needs a value")
                }
                consumed.insert(index)
                consumed.insert(index + 1)
                value = rawOrder[index + 1]
                index += 1
            } else if item.hasPrefix("--\(name)=") {
                consumed.insert(index)
                value = String(item.dropFirst(name.count + 3))
            }
        }
        return value
    }

    /// Every value of a repeatable option.
    mutating func options(_ name: String) throws -> [String] {
        var values: [String] = []
        while let value = try option(name) { values.append(value) }
        return values
    }

    /// The remaining positional arguments; throws on any unknown `--option`.
    mutating func finish() throws -> [String] {
        var positionals: [String] = []
        var afterDoubleDash = false
        for (index, item) in rawOrder.enumerated() where !consumed.contains(index) {
            if item == "--help" || item == "-h" { continue }
            if !afterDoubleDash && item == "--" { afterDoubleDash = true; continue }
            if !afterDoubleDash && item.hasPrefix("-") && item != "-" && !Arguments.looksNumeric(item) {
                throw UsageError(unknownOption: item)
            }
            positionals.append(item)
        }
        return positionals
    }
}

/// Writes to standard error.
func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// Whether a file descriptor is a terminal.
func isTerminal(_ descriptor: Int32) -> Bool { isatty(descriptor) == 1 }

/// The terminal width, or nil when stdout is not a terminal.
func terminalWidth() -> Int? {
    guard isTerminal(STDOUT_FILENO) else { return nil }
    var size = winsize()
    if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
    return 80
}

/// Whether colour may be used on stdout: a terminal, and `NO_COLOR` unset or empty (no-color.org: only a
/// non-empty value turns colour off).
var colorAllowed: Bool {
    isTerminal(STDOUT_FILENO) && (ProcessInfo.processInfo.environment["NO_COLOR"] ?? "").isEmpty
}

/// Standard output with a large buffer; flushed at exit. Any thread may write: the buffer is behind a Mutex, and
/// a line is appended whole.
final class Output: Sendable {
    static let shared = Output()
    private let buffer = Mutex<[UInt8]>([])

    func write(_ text: String) {
        buffer.withLock { buffer in
            buffer.append(contentsOf: text.utf8)
            if buffer.count > 1 << 16 { Self.drain(&buffer) }
        }
    }

    func line(_ text: String = "") {
        buffer.withLock { buffer in
            buffer.append(contentsOf: text.utf8)
            buffer.append(UInt8(ascii: "\n"))
            if buffer.count > 1 << 16 { Self.drain(&buffer) }
        }
    }

    func flush() {
        buffer.withLock { Self.drain(&$0) }
    }

    /// Writes `buffer` to standard output and empties it.
    private static func drain(_ buffer: inout [UInt8]) {
        guard !buffer.isEmpty else { return }
        buffer.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            var offset = 0
            while offset < raw.count {
                let written = Foundation.write(STDOUT_FILENO, base + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return
                }
                offset += written
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }
}

/// Shorthand for `Output.shared.line`.
func say(_ text: String = "") { Output.shared.line(text) }

/// The database path from `--db`, `$EPF_DB` or `./epf.sqlite` (`CommonOptions.database`). A `postgresql://` URL
/// is refused (usage error) unless `allowPostgres`: only import, sync and status work with PostgreSQL; lookups and
/// serving read SQLite.
func databasePath(_ arguments: inout Arguments, allowPostgres: Bool = false) throws -> String {
    let option = CommonOptions.database
    var path = option.defaultValue ?? "epf.sqlite"
    if let given = try arguments.option(option.help.name) {
        path = given
    } else if let given = ProcessInfo.processInfo.environment["EPF_DB"], !given.isEmpty {
        path = given
    }
    if !allowPostgres && PostgresURL.isPostgres(path) {
        throw UsageError("\(PostgresURL.redacted(path)): PostgreSQL holds imports for analytics; lookups, search, "
                         + "prices and epf serve read a SQLite file (epf import --db FILE.sqlite). Only import, sync "
                         + "and status take a postgresql:// URL.")
    }
    return path
}
