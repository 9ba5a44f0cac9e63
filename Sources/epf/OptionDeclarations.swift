import EPFPostgresStore
import EPFStore
import Foundation

/// What `--help` shows for one option: its name, the placeholder of its value, what it does and its default.
struct OptionHelp {
    /// The name without the leading dashes, e.g. "max-rejects".
    let name: String
    /// The placeholder of the value ("N", "FILE"), nil for a flag.
    let valueName: String?
    /// What the option does, one or more sentences.
    let summary: String
    /// The default as shown to people ("8080", "one per core"), nil when there is none.
    let shownDefault: String?
    /// The values the option takes when they are a fixed list (shell completions offer them), else empty.
    var choices: [String] = []

    /// The option as written on a command line, e.g. "--max-rejects N".
    var synopsis: String { valueName.map { "--\(name) \($0)" } ?? "--\(name)" }

    /// The summary with the default appended.
    var text: String { shownDefault.map { "\(summary) Default: \($0)." } ?? summary }
}

/// An option declared once, so that a command reads it and `--help` lists it from the same declaration.
protocol DeclaredOption: Sendable {
    var help: OptionHelp { get }
}

/// A flag: `--name`, true when given.
struct Flag: DeclaredOption {
    let help: OptionHelp

    init(_ name: String, _ summary: String) {
        help = OptionHelp(name: name, valueName: nil, summary: summary, shownDefault: nil)
    }
}

/// An option taking a whole number within a range, with a default.
struct IntOption: DeclaredOption {
    let help: OptionHelp
    let defaultValue: Int
    let range: ClosedRange<Int>

    /// `shownDefault` replaces the number in `--help` when the default is computed (e.g. "one per core").
    init(_ name: String, _ valueName: String = "N", default defaultValue: Int, range: ClosedRange<Int>,
         _ summary: String, shownDefault: String? = nil) {
        self.defaultValue = defaultValue
        self.range = range
        help = OptionHelp(name: name, valueName: valueName, summary: summary,
                          shownDefault: shownDefault ?? String(defaultValue))
    }

    /// `text` as this option's value: a whole number within the range.
    func value(_ text: String) throws -> Int {
        guard let number = Int(text), range.contains(number) else {
            throw UsageError("--\(help.name) must be a whole number from \(range.lowerBound) to \(range.upperBound), "
                             + "got '\(text)'")
        }
        return number
    }
}

/// An option taking text, with an optional default (nil: absent unless given).
struct TextOption: DeclaredOption {
    let help: OptionHelp
    let defaultValue: String?

    /// `shownDefault` replaces `defaultValue` in `--help` when the default depends on something (e.g. `$EPF_DB`).
    /// `choices` lists the values when they are a fixed list; without it, a value name of lowercase words joined
    /// by `|` (`null|reject`) is read as that list, as a usage line reads it (upper case names a placeholder).
    init(_ name: String, _ valueName: String, default defaultValue: String? = nil, _ summary: String,
         shownDefault: String? = nil, choices: [String]? = nil) {
        self.defaultValue = defaultValue
        help = OptionHelp(name: name, valueName: valueName, summary: summary,
                          shownDefault: shownDefault ?? defaultValue,
                          choices: choices ?? TextOption.literalValues(valueName))
    }

    /// The values of a value name like `null|reject`; empty for a placeholder such as `FILE` or `FILE|URL`.
    static func literalValues(_ valueName: String) -> [String] {
        let parts = valueName.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        guard parts.count > 1,
              parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isLowercase || $0.isNumber || $0 == "-" } })
        else { return [] }
        return parts
    }
}

/// Options several commands share, declared once.
enum CommonOptions {
    /// `--db FILE`, read through `databasePath(_:)`.
    static let database = TextOption("db", "FILE", default: "epf.sqlite", "The database.",
                                     shownDefault: "$EPF_DB, else ./epf.sqlite")
    /// `--db FILE|URL` of the commands that also write to or read from PostgreSQL (import, sync, status), read
    /// through `databasePath(_:allowPostgres:)`.
    static let importDatabase = TextOption("db", "FILE|URL", default: database.defaultValue,
                                           "The database; a postgresql:// URL imports into PostgreSQL (see "
                                               + "docs/postgresql.md).",
                                           shownDefault: database.help.shownDefault)
    /// `--schema NAME`: the PostgreSQL schema holding the tables and the ledger.
    static let schema = TextOption("schema", "NAME", default: PostgresTarget.defaultSchema,
                                   "PostgreSQL schema for the tables and the ledger (with a postgresql:// --db).")
    /// `--threads N` of the commands that read `.bz2` / `.tbz` inputs.
    static let decompressionThreads = IntOption(
        "threads", default: ProcessInfo.processInfo.activeProcessorCount, range: 1...256,
        "Threads that decompress .bz2/.tbz inputs; 1 = serial.", shownDefault: "one per core")
    /// `--json` where it means "print the same as JSON".
    static func json(_ shape: String) -> Flag { Flag("json", shape) }
}

extension Arguments {
    /// Removes and returns whether the flag was given.
    mutating func read(_ flag: Flag) -> Bool { self.flag(flag.help.name) }

    /// Removes and returns the option's value, or its default.
    mutating func read(_ option: IntOption) throws -> Int {
        guard let text = try self.option(option.help.name) else { return option.defaultValue }
        return try option.value(text)
    }

    /// Removes and returns the option's value, nil when it is not given (its default is the caller's to apply).
    mutating func optionalInt(_ option: IntOption) throws -> Int? {
        try self.option(option.help.name).map { try option.value($0) }
    }

    /// Removes and returns a text option's value as a whole number within `range`, nil when it is not given.
    mutating func optionalInt(_ option: TextOption, range: ClosedRange<Int>) throws -> Int? {
        guard let text = try self.option(option.help.name) else { return nil }
        guard let number = Int(text), range.contains(number) else {
            throw UsageError("--\(option.help.name) must be a whole number from \(range.lowerBound) to "
                             + "\(range.upperBound), got '\(text)'")
        }
        return number
    }

    /// Removes and returns the option's value, or its default (nil when it has none).
    mutating func read(_ option: TextOption) throws -> String? {
        try self.option(option.help.name) ?? option.defaultValue
    }
}

/// The OPTIONS block of a `--help` text: one entry per option, the summaries aligned in one column and wrapped.
func optionsHelp(_ options: [any DeclaredOption], width: Int = 116) -> String {
    let helps = options.map(\.help)
    let column = min(26, (helps.map { $0.synopsis.count }.max() ?? 0) + 4)
    var lines: [String] = []
    for help in helps {
        var prefix = "  " + help.synopsis
        if prefix.count + 1 > column {
            lines.append(prefix)
            prefix = ""
        }
        let indent = String(repeating: " ", count: column)
        var line = prefix.padding(toLength: column, withPad: " ", startingAt: 0)
        var lineHasWords = false
        for word in help.text.split(separator: " ") {
            if lineHasWords && line.count + 1 + word.count > width {
                lines.append(line)
                line = indent
                lineHasWords = false
            }
            line += (lineHasWords ? " " : "") + word
            lineHasWords = true
        }
        lines.append(line)
    }
    return lines.joined(separator: "\n")
}
