import Foundation

/// The shell transcripts in the Markdown docs, read as examples to run: every `$ epf ...` and `$ curl ...` line of a
/// fenced code block is a command, and the lines after it (up to the next `$ ` line, a `==> ` step line of the
/// demo's transcript, or the end of the block) are what it prints. A `curl` command asks `epf serve` of the demo
/// database, which the doc shows at `127.0.0.1:8080`; its output is compared after `DocOutput.httpLines`.
///
/// How a doc says more than the output:
/// - A line that is only `…` stands for any number of lines left out; a `…` inside a line for any text.
/// - A line ending in `(stderr)`, `(stderr; exit status N)` or `(exit status N)` (after two or more spaces, or
///   alone) is printed on standard error, and/or sets the exit status (default 0).
/// - An HTML comment on the line before the fence steers the whole block:
///   `<!-- doc-test: fresh -->` runs it in an empty directory (its commands build their own database, in order);
///   `<!-- doc-test: skip REASON -->` does not run it (a server, the network, another machine); the reason is
///   required. Without one, the block runs in a copy of the database `scripts/demo` builds.
struct DocBlock: Sendable, CustomStringConvertible {
    /// How the block is run.
    enum Mode: Sendable, Equatable {
        case demoDatabase
        case fresh
        case skip(reason: String)
    }

    /// One command of the block and what the doc says it prints.
    struct Example: Sendable {
        let line: Int
        let command: String
        var stdout: [String] = []
        var stderr: [String] = []
        var status: Int32 = 0

        /// Whether the command is a `curl` request to `epf serve`, not an `epf` command.
        var isHTTP: Bool { command.hasPrefix("curl ") }
    }

    let file: String
    let line: Int
    let mode: Mode
    var examples: [Example]

    var description: String { "\(file):\(line)" }

    /// The Markdown files whose transcripts are run, relative to the package root.
    static func documents(root: URL) -> [String] {
        let docs = (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path))
            ?? []
        return ["README.md", "feeds/README.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }

    /// The blocks of `file` that hold at least one `$ epf` or `$ curl` command; a malformed directive, and a `curl`
    /// in a `fresh` block (it has no server to ask), are reported in `errors`.
    static func blocks(in file: String, text: String, errors: inout [String]) -> [DocBlock] {
        let lines = text.components(separatedBy: "\n")
        var blocks: [DocBlock] = []
        var index = 0
        while index < lines.count {
            guard lines[index].hasPrefix("```") else {
                index += 1
                continue
            }
            let opening = index
            var body: [String] = []
            index += 1
            while index < lines.count, !lines[index].hasPrefix("```") {
                body.append(lines[index])
                index += 1
            }
            index += 1
            var mode = Mode.demoDatabase
            let before = lines[..<opening].last { !$0.trimmingCharacters(in: .whitespaces).isEmpty } ?? ""
            if let directive = before.firstMatch(of: /^<!--\s*doc-test:\s*(.*?)\s*-->\s*$/) {
                let words = String(directive.1)
                if words == "fresh" {
                    mode = .fresh
                } else if words.hasPrefix("skip"), words.count > 5 {
                    mode = .skip(reason: String(words.dropFirst(5)))
                } else {
                    errors.append("\(file):\(opening): unknown or reasonless doc-test directive '\(words)'")
                }
            }
            let examples = Self.examples(body, firstLine: opening + 2)
            if mode == .fresh, examples.contains(where: \.isHTTP) {
                errors.append("\(file):\(opening + 1): a fresh block cannot hold a curl command (no server runs)")
            }
            if !examples.isEmpty {
                blocks.append(DocBlock(file: file, line: opening + 1, mode: mode, examples: examples))
            }
        }
        return blocks
    }

    /// The commands of a block's lines (the first of which is line `firstLine` of the file) and their output.
    static func examples(_ body: [String], firstLine: Int) -> [Example] {
        var examples: [Example] = []
        var current: Example?
        func close() {
            guard var example = current else { return }
            while example.stdout.last?.trimmingCharacters(in: .whitespaces).isEmpty == true {
                example.stdout.removeLast()
            }
            examples.append(example)
            current = nil
        }
        var index = 0
        while index < body.count {
            let line = body[index]
            let number = firstLine + index
            index += 1
            if line.hasPrefix("$ ") || line.hasPrefix("==> ") {
                close()
                guard line.hasPrefix("$ epf ") || line.hasPrefix("$ curl ") else { continue }
                var command = String(line.dropFirst(2))
                while command.hasSuffix("\\"), index < body.count {
                    command = String(command.dropLast()) + body[index]
                    index += 1
                }
                current = Example(line: number, command: command)
                continue
            }
            guard current != nil else { continue }
            var text = line
            var toStandardError = false
            if let note = line.firstMatch(of: /(^|\s{2,})\((stderr)?(; )?(exit status (\d+))?\)\s*$/),
               note.2 != nil || note.5 != nil {
                text = String(line[..<note.range.lowerBound])
                toStandardError = note.2 != nil
                if let status = note.5.flatMap({ Int32($0) }) { current?.status = status }
            }
            if toStandardError {
                current?.stderr.append(text)
            } else if !(text.isEmpty && text != line) {
                current?.stdout.append(text)
            }
        }
        close()
        return examples
    }
}

/// Compares what a command printed with what a doc shows.
enum DocOutput {
    /// Whether `actual` (all lines printed) matches `expected` (the doc's lines), with `…` lines standing for any
    /// number of lines and `…` inside a line for any text, after `normalized`.
    static func matches(_ expected: [String], _ actual: [String]) -> Bool {
        let wanted = expected.map(normalized)
        let got = actual.map(normalized)
        // memo[i][j]: wanted[i...] matches got[j...].
        var memo = [[Bool?]](repeating: [Bool?](repeating: nil, count: got.count + 1), count: wanted.count + 1)
        func match(_ i: Int, _ j: Int) -> Bool {
            if let known = memo[i][j] { return known }
            let result: Bool
            if i == wanted.count {
                result = j == got.count
            } else if wanted[i] == "…" {
                result = match(i + 1, j) || (j < got.count && match(i, j + 1))
            } else {
                result = j < got.count && lineMatches(wanted[i], got[j]) && match(i + 1, j + 1)
            }
            memo[i][j] = result
            return result
        }
        return match(0, 0)
    }

    /// Whether each of `expected` (normalized) is a line of `actual`, in order; for what goes to standard error,
    /// where progress lines may come between.
    static func contains(_ expected: [String], in actual: [String]) -> Bool {
        var remaining = actual.map(normalized)[...]
        for line in expected.map(normalized) {
            guard let found = remaining.firstIndex(where: { lineMatches(line, $0) }) else { return false }
            remaining = remaining[(found + 1)...]
        }
        return true
    }

    /// A doc line against a printed line: equal, or with `…` matching any text.
    static func lineMatches(_ wanted: String, _ got: String) -> Bool {
        guard wanted.contains("…") else { return wanted == got }
        let pieces = wanted.components(separatedBy: "…")
        guard let first = pieces.first, let last = pieces.last, got.hasPrefix(first) else { return false }
        var rest = got.dropFirst(first.count)
        for piece in pieces.dropFirst().dropLast() {
            guard let found = rest.range(of: piece) else { return false }
            rest = rest[found.upperBound...]
        }
        return rest.hasSuffix(last) && rest.count >= last.count
    }

    /// The lines of an HTTP answer as the docs wrap them, for `matches`: a line that starts with a space continues
    /// the line before (the line break goes, the space stays: inside a JSON string it is the text's own), a line
    /// that starts as JSON (`{`, `[`, or JSONP's `/**/`) loses the whitespace outside its strings (so the server's
    /// one-line body and the doc's wrapped one read the same), and the empty lines that end it are dropped.
    static func httpLines(_ lines: [String]) -> [String] {
        var joined: [String] = []
        for line in lines {
            if line.hasPrefix(" "), !joined.isEmpty {
                joined[joined.count - 1] += line
            } else {
                joined.append(line)
            }
        }
        while joined.last?.trimmingCharacters(in: .whitespaces).isEmpty == true { joined.removeLast() }
        return joined.map { line in
            line.hasPrefix("{") || line.hasPrefix("[") || line.hasPrefix("/**/") ? compactJSON(line) : line
        }
    }

    /// `text` without whitespace outside JSON strings; a `…` stays where it is, in a string or between values.
    static func compactJSON(_ text: String) -> String {
        var result = ""
        var inString = false
        var escaped = false
        for character in text {
            if inString {
                result.append(character)
                if escaped {
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    inString = false
                }
            } else if character == "\"" {
                inString = true
                result.append(character)
            } else if !character.isWhitespace {
                result.append(character)
            }
        }
        return result
    }

    /// A line with its runs of spaces made one (columns realign when a width changes) and what differs from run
    /// to run masked: clock times (`2026-11-22T00:11:19Z`; export dates at midnight stay), durations (`0.1 s`),
    /// rates (`7.4 MB/s`), the seconds and rows/s columns that end a row of import's table, the database's size
    /// in `epf status` and in `/v1/status` (`"sizeBytes":N`), and the HTTP `Date:` header's value.
    static func normalized(_ line: String) -> String {
        var text = line.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        text = text.replacing(/\d{4}-\d\d-\d\dT(\d\d:\d\d:\d\d)Z/) { match in
            match.1 == "00:00:00" ? String(match.0) : "<time>"
        }
        text = text.replacing(/\d+(\.\d+)? s\b/) { _ in "<t> s" }
        text = text.replacing(/\d+(\.\d+)? MB\/s/) { _ in "<rate> MB/s" }
        text = text.replacing(#/ \d+\.\d\d (\d+|-)$/#) { _ in " <t> <rate>" }
        text = text.replacing(/^database: (.*) \(\d+(\.\d+)? [KMG]B\)$/) { match in "database: \(match.1) (<size>)" }
        text = text.replacing(/"sizeBytes":\d+/) { _ in "\"sizeBytes\":<size>" }
        text = text.replacing(/^Date: \w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT$/) { _ in "Date: <time>" }
        return text
    }
}
