/// The nearest valid word to a mistyped one, for "did you mean" in usage errors.
enum Nearest {
    /// The candidate closest to `word` by edit distance (insertions, deletions, substitutions and swaps of two
    /// neighbours each count 1), when it is close enough to be a typo: at most 2 edits, and fewer than half the
    /// word's letters. Ties go to the earlier candidate; nil when none is close.
    static func word(to word: String, among candidates: [String]) -> String? {
        let typed = Array(word.lowercased())
        var best: (candidate: String, distance: Int)?
        for candidate in candidates where candidate != word {
            let distance = editDistance(typed, Array(candidate.lowercased()))
            if distance <= 2, distance * 2 < max(typed.count, 1), distance < (best?.distance ?? Int.max) {
                best = (candidate, distance)
            }
        }
        return best?.candidate
    }

    /// Optimal string alignment distance (Levenshtein plus adjacent transpositions).
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var before = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], before[j - 2] + 1)
                }
            }
            (before, previous, current) = (previous, current, before)
        }
        return previous[b.count]
    }

    /// " (did you mean 'x'?)" for the nearest candidate, or "" when none is close.
    static func hint(for word: String, among candidates: [String]) -> String {
        Nearest.word(to: word, among: candidates).map { "; did you mean '\($0)'?" } ?? ""
    }
}

/// Options that may come before the command (`epf --db x status` is `epf status --db x`): each is passed on to
/// the command, which reads it as its own (a command that does not take one says so, as it would after it).
enum GlobalOptions {
    /// Options that take a value.
    static let valued = ["db", "schema"]
    /// Flags.
    static let flags = ["json", "quiet"]

    /// Removes `--wide` wherever it is (before a `--`) and says whether it was there: it changes how tables are
    /// printed (`TableLayout.wide`), for every command.
    static func takeWide(_ words: inout [String]) -> Bool {
        let end = words.firstIndex(of: "--") ?? words.endIndex
        let found = words[..<end].contains("--wide")
        if found {
            words = words[..<end].filter { $0 != "--wide" } + words[end...]
        }
        return found
    }

    /// Splits the words before the command: the global options given there, then the command and its words
    /// (`--help` and `--version` end the global options: they are answered as if first). Throws a usage error for
    /// any other option before the command.
    static func split(_ words: [String]) throws -> (globals: [String], rest: [String]) {
        var globals: [String] = []
        var index = 0
        let ownWords = ["--help", "-h", "--version"]
        while index < words.count, words[index].hasPrefix("-"), words[index] != "-", !ownWords.contains(words[index]) {
            let word = words[index]
            let name = String(word.dropFirst(2).prefix { $0 != "=" })
            if word.hasPrefix("--"), valued.contains(name) {
                if word.contains("=") {
                    globals.append(word)
                } else {
                    guard index + 1 < words.count else { throw UsageError("--\(name) needs a value") }
                    globals += [word, words[index + 1]]
                    index += 1
                }
            } else if word.hasPrefix("--"), flags.contains(name), !word.contains("=") {
                globals.append(word)
            } else {
                let known = (valued + flags).map { "--" + $0 } + ["--help", "--version"]
                throw UsageError("unknown option '\(word)' before the command"
                                 + Nearest.hint(for: word, among: known))
            }
            index += 1
        }
        return (globals, Array(words[index...]))
    }
}
