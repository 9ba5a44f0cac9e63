import EPFFormat
import Foundation

/// The manual pages, `epf(1)` and `epf-COMMAND(1)`, rendered as roff from each command's `--help` text and its
/// option declarations (`CommandOptions.swift`), so that the pages say what `--help` says.
///
/// A help text is read as sections: its `USAGE:` line is the synopsis, the paragraphs before the next heading
/// (`OPTIONS:`, `EXAMPLES:`, `EXIT STATUS:`, ...) the description. The OPTIONS section is rendered from the
/// declarations; text after the option list in that section (notes such as "Prints 'listening on ...'") is kept.
enum ManPages {
    /// A page's file name and roff source.
    struct Page {
        var fileName: String
        var source: String
    }

    /// Every page: `epf.1` first, then one per command in `epf --help` order.
    static func all(version: String) -> [Page] {
        [Page(fileName: "epf.1", source: mainPage(version: version))]
            + commands.map { Page(fileName: "epf-\($0.name).1", source: page(for: $0, version: version)) }
    }

    /// Writes every page into `directory` (created when missing); returns the paths written.
    static func write(to directory: String, version: String) throws -> [String] {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return try all(version: version).map { page in
            let path = (directory as NSString).appendingPathComponent(page.fileName)
            do {
                try Data(page.source.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            } catch {
                throw CommandFailure(.cannotCreate, "cannot write the manual page \(path): \(errorText(error))")
            }
            return path
        }
    }

    /// `epf-NAME(1)`.
    static func page(for command: Command.Type, version: String) -> String {
        let sections = HelpSections(command.help)
        var roff = header(title: "EPF-\(command.name.uppercased())", version: version)
        roff += ".SH NAME\n" + escape("epf-\(command.name) - \(command.summary)") + "\n"
        roff += ".SH SYNOPSIS\n"
        let usage = sections.usage.hasPrefix("epf \(command.name)")
            ? String(sections.usage.dropFirst("epf \(command.name)".count)) : " " + sections.usage
        roff += ".B epf \(escape(command.name))\n" + escape(usage.trimmingCharacters(in: .whitespaces)) + "\n"
        if !sections.description.isEmpty {
            roff += ".SH DESCRIPTION\n" + body(sections.description)
        }
        roff += ".SH OPTIONS\n" + options(command.declaredOptions)
        roff += ".TP\n\\fB\\-\\-help\\fR, \\fB\\-h\\fR\nPrint the help text and exit.\n"
        for (heading, lines) in sections.others {
            if heading == "OPTIONS" {
                let notes = HelpSections.paragraphsAfterOptionList(lines)
                if !notes.isEmpty { roff += ".PP\n" + body(notes) }
                continue
            }
            roff += ".SH \(escape(heading))\n" + body(lines)
        }
        roff += ".SH SEE ALSO\n.BR epf (1)\n"
        return roff
    }

    /// `epf(1)`: what epf is, its commands, exit statuses, environment and files.
    static func mainPage(version: String) -> String {
        var roff = header(title: "EPF", version: version)
        roff += ".SH NAME\nepf \\- turn Apple's Enterprise Partner Feed into a fast, verified, queryable SQLite "
            + "database\n"
        roff += ".SH SYNOPSIS\n.B epf\n\\fICOMMAND\\fR [\\fIoptions\\fR]\n.br\n.B epf\n\\fB\\-\\-version\\fR\n"
        roff += ".SH DESCRIPTION\n" + body([
            "epf downloads Apple's Enterprise Partner Feed (EPF) from Apple's feed server, verified and resumable "
                + "(epf fetch), loads it into one SQLite database with verification and crash safety (epf import, "
                + "and epf sync for a nightly job), answers questions from the command line (lookup, search, "
                + "prices, genres, storefronts, sql) and serves the same answers as JSON over HTTP (epf serve).",
            "",
            "Run 'epf COMMAND --help', or read epf-COMMAND(1), for a command's options and examples.",
            "",
            "--db, --schema, --json and --quiet may come before COMMAND as well as after it; --wide, anywhere, "
                + "shows every column of a table wider than the terminal (which otherwise leaves out its least "
                + "useful columns). A usage error is one line naming the nearest valid word, and exits 64.",
        ])
        roff += ".SH COMMANDS\n"
        for command in commands {
            roff += ".TP\n.BR epf\\-\(escape(command.name)) (1)\n" + escape(command.summary) + "\n"
        }
        roff += ".SH EXIT STATUS\n"
        let statuses: [(Int32, String)] = [
            (0, "Success."), (1, "Some requested ids were not found."), (64, "Usage error."),
            (65, "Bad data: some tables or files were not applied, or the database file is not an SQLite database."),
            (66, "Missing input."),
            (69, "A server did not answer or deliver after retries."),
            (70, "Internal error: a failure epf did not foresee, or epf serve could not start listening."),
            (73, "Cannot write (for example, no space left)."),
            (75, "Locked: another run holds the lock; or a first import was interrupted: run it again."),
            (77, "Permission: the feed server refused the credentials, or this user may not read the database "
                + "(the file or its directory, or a missing -shm file it may not create)."),
        ]
        for (code, text) in statuses { roff += ".TP\n.B \(code)\n\(escape(text))\n" }
        roff += ".SH ENVIRONMENT\n"
        let variables: [(String, String)] = [
            ("EPF_DB", "The database when --db is not given (default ./epf.sqlite)."),
            ("EPF_MIRROR", "The mirror of epf fetch when --mirror is not given."),
            ("EPF_USER, EPF_PASSWORD", "Feed server credentials of epf fetch when --netrc-file is not given."),
            ("NO_COLOR", "When set to a non-empty value, no colour on a terminal."),
        ]
        for (name, text) in variables { roff += ".TP\n.B \(escape(name))\n\(escape(text))\n" }
        roff += ".SH FILES\n"
        let files: [(String, String)] = [
            ("/etc/default/epf", "Settings of the packaged epf-serve and epf-sync units: database, mirror, feed URL, "
                + "listen address, metrics directory."),
            ("/etc/epf/feed.netrc", "The feed server credentials the epf-sync unit passes to epf fetch."),
            ("/var/lib/epf", "The packaged units' database and mirror."),
        ]
        for (name, text) in files { roff += ".TP\n.I \(escape(name))\n\(escape(text))\n" }
        roff += ".SH SEE ALSO\n"
        roff += commands.map { ".BR epf\\-\(escape($0.name)) (1)" }.joined(separator: ",\n") + "\n"
        return roff
    }

    private static func header(title: String, version: String) -> String {
        ".\\\" Generated by 'epf help --man' from the same declarations as 'epf --help'; do not edit.\n"
            + ".TH \"\(title)\" 1 \"\" \"epf \(escape(version))\" \"epf manual\"\n.nh\n.ad l\n"
    }

    /// The OPTIONS entries: a tagged paragraph per option.
    static func options(_ options: [any DeclaredOption]) -> String {
        options.map { option in
            let help = option.help
            var tag = "\\fB" + escape("--" + help.name) + "\\fR"
            if let value = help.valueName { tag += " \\fI" + escape(value) + "\\fR" }
            return ".TP\n" + tag + "\n" + escape(help.text) + "\n"
        }.joined()
    }

    /// Help text lines as roff: a block of unindented lines is one filled paragraph; indented lines (examples,
    /// lists) keep their line breaks, indented, and wrap only where one is wider than the page.
    static func body(_ lines: [String]) -> String {
        var roff = ""
        var paragraph: [String] = []
        var first = true
        func flush() {
            guard !paragraph.isEmpty else { return }
            if !first { roff += ".PP\n" }
            first = false
            roff += escape(paragraph.joined(separator: " ")) + "\n"
            paragraph = []
        }
        var index = 0
        while index < lines.count {
            let line = lines[index]
            if line.trimmingCharacters(in: .whitespaces).isEmpty {
                flush()
                index += 1
            } else if line.hasPrefix(" ") {
                flush()
                if !first { roff += ".PP\n" }
                first = false
                roff += ".RS 4\n"
                var previous: String?
                while index < lines.count, lines[index].hasPrefix(" ") {
                    if let previous, !continues(lines[index], previous) { roff += ".br\n" }
                    roff += escape(lines[index].trimmingCharacters(in: .whitespaces)) + "\n"
                    previous = lines[index]
                    index += 1
                }
                roff += ".RE\n"
            } else {
                paragraph.append(line.trimmingCharacters(in: .whitespaces))
                index += 1
            }
        }
        flush()
        return roff
    }

    /// Whether an indented help line continues the one before: help texts wrap at about 116 columns, so a line
    /// after one that long continues it, unless both start with the same word (two long examples, `epf ...`).
    static func continues(_ line: String, _ previous: String) -> Bool {
        let firstWord = { (text: String) in text.split(separator: " ").first.map(String.init) ?? "" }
        return previous.count >= 96 && firstWord(line) != firstWord(previous)
    }

    /// Text made safe for roff: backslashes as `\e`, hyphens as `\-` (options must copy as ASCII minus signs),
    /// a leading `.` or `'` guarded so it is not read as a request.
    static func escape(_ text: String) -> String {
        var escaped = text.replacingOccurrences(of: "\\", with: "\\e").replacingOccurrences(of: "-", with: "\\-")
        if escaped.hasPrefix(".") || escaped.hasPrefix("'") { escaped = "\\&" + escaped }
        return escaped
    }
}

/// A command's `--help` text split into its usage line, description and titled sections.
struct HelpSections {
    /// The usage line without `USAGE:`, e.g. `epf sync ROOT [--db FILE] [options]`.
    var usage = ""
    /// The lines between the usage line and the first titled section.
    var description: [String] = []
    /// The titled sections in order (`OPTIONS`, `EXIT STATUS`, `EXAMPLES`, ...), with their lines.
    var others: [(heading: String, lines: [String])] = []

    init(_ help: String) {
        var sections: [(heading: String?, lines: [String])] = []
        for line in help.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("USAGE:") {
                usage = line.dropFirst("USAGE:".count).trimmingCharacters(in: .whitespaces)
                sections.append((nil, []))
            } else if let title = HelpSections.heading(line) {
                sections.append((title, []))
            } else if !sections.isEmpty {
                sections[sections.count - 1].lines.append(line)
            }
        }
        for section in sections {
            if let heading = section.heading {
                others.append((heading, HelpSections.trimmed(section.lines)))
            } else {
                description = HelpSections.trimmed(section.lines)
            }
        }
    }

    /// The title of a heading line (`EXAMPLES:`, `ENDPOINTS (GET and HEAD, JSON):`), nil for other lines.
    static func heading(_ line: String) -> String? {
        guard line.hasSuffix(":"), let first = line.first, first.isUppercase else { return nil }
        let title = String(line.dropLast())
        let words = title.split(separator: "(")[0]
        guard words.allSatisfy({ $0.isUppercase || $0 == " " }) else { return nil }
        return title
    }

    /// The paragraphs of an OPTIONS section after its option list: blocks whose first line is not indented.
    static func paragraphsAfterOptionList(_ lines: [String]) -> [String] {
        var kept: [String] = []
        var block: [String] = []
        for line in lines + [""] {
            if line.trimmingCharacters(in: .whitespaces).isEmpty {
                if let first = block.first, !first.hasPrefix(" ") { kept += (kept.isEmpty ? [] : [""]) + block }
                block = []
            } else {
                block.append(line)
            }
        }
        return kept
    }

    private static func trimmed(_ lines: [String]) -> [String] {
        var lines = lines
        while lines.first?.trimmingCharacters(in: .whitespaces).isEmpty == true { lines.removeFirst() }
        while lines.last?.trimmingCharacters(in: .whitespaces).isEmpty == true { lines.removeLast() }
        return lines
    }
}
