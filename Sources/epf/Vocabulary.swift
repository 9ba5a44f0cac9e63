import EPFQuery

/// epf's one set of words for kinds of items (docs/cli.md, "Kinds"): app, book, album, song, video, artist, and
/// collection for an album or a book where epf cannot tell them apart (the change log and the price history
/// record the `collection` table). The older words (software, application, ebook) are accepted as aliases.
enum Vocabulary {
    /// The kinds `changes --kind` lists, by the table that records them.
    static let changeKinds = ["app", "collection", "song", "video", "artist"]

    /// The older words epf still accepts, each with epf's word for it.
    static let aliases = ["software": "app", "application": "app", "ebook": "book"]

    /// The `--entity` of `search`: epf's word or an alias.
    static func entity(_ text: String) throws -> EntityKind {
        guard let kind = EntityKind(word: text) else {
            throw UsageError("--entity must be one of \(EntityKind.words.joined(separator: ", ")), got '\(text)'"
                             + hint(for: text, among: EntityKind.words, aliases: aliases))
        }
        return kind
    }

    /// "; did you mean 'x'?" for the word nearest to `text` among `words` and the aliases, always in epf's word:
    /// a typo of an alias (`softwar`) suggests the word the alias stands for (`app`).
    static func hint(for text: String, among words: [String], aliases: [String: String]) -> String {
        let typed = text.lowercased()
        guard let nearest = Nearest.word(to: typed, among: words + aliases.keys.sorted()) else { return "" }
        let word = aliases[nearest] ?? nearest
        return word == typed ? "" : "; did you mean '\(word)'?"
    }

    /// The `--kind` of `changes` in epf's words: app, collection, song, video, artist, price or rank; aliases
    /// (software, application, album, book, ebook) mapped to them.
    static func changeKind(_ text: String) throws -> String {
        let word = text.lowercased()
        if changeKinds.contains(word) || word == "price" || word == "rank" { return word }
        if let kind = EntityKind(word: word) {
            return kind == .album || kind == .ebook ? "collection" : kind.word
        }
        let words = changeKinds + ["price", "rank"]
        let changeAliases = aliases.merging(["album": "collection", "book": "collection", "ebook": "collection"]) {
            $1
        }
        throw UsageError("--kind must be one of \(words.joined(separator: ", ")), got '\(text)'"
                         + hint(for: word, among: words, aliases: changeAliases))
    }
}
