import EPFFormat
import Foundation

/// `--storefronts` and `--languages`: which storefronts' rows the price and popularity tables keep, and which
/// languages' rows `application_detail` and the `*_translation` tables keep. A database remembers its selection
/// (`epf_settings`); every later import applies it, and one asking for another is refused (`settle`).
package struct RowSelection: Sendable, Equatable, Codable {
    /// The storefront ids kept, ascending; nil keeps every storefront.
    package var storefronts: [Int]?
    /// The language codes kept, lower case with `-` between subtags (`en`, `zh-hant`); nil keeps every language.
    /// A code without a subtag keeps its regional variants too: `en` keeps `EN`, `en_GB` and `en-us`.
    package var languages: [String]?

    package init(storefronts: [Int]? = nil, languages: [String]? = nil) {
        self.storefronts = storefronts
        self.languages = languages
    }

    /// True when nothing is left out.
    package var keepsEverything: Bool { storefronts == nil && languages == nil }

    /// One dimension of a request: every value, or only these.
    package enum Choice<Value: Sendable & Equatable>: Sendable, Equatable {
        case all
        case only(Value)

        var kept: Value? {
            if case .only(let value) = self { return value }
            return nil
        }
    }

    /// What an import asks for; nil where its option was not given (the database's selection stays).
    package struct Request: Sendable, Equatable {
        package var storefronts: Choice<[Int]>?
        package var languages: Choice<[String]>?

        package init(storefronts: Choice<[Int]>? = nil, languages: Choice<[String]>? = nil) {
            self.storefronts = storefronts
            self.languages = languages
        }

        /// Parses `--storefronts` and `--languages` values (nil when not given). Throws `ImportError.badOption`
        /// naming the value it cannot read.
        package init(storefronts storefrontsText: String?, languages languagesText: String?) throws {
            storefronts = try storefrontsText.map(RowSelection.parseStorefronts)
            languages = try languagesText.map(RowSelection.parseLanguages)
        }
    }

    /// `us,gbr,143462`: ISO 3166-1 alpha-2 or alpha-3 codes of Apple's storefronts (`AppleStorefronts`) or EPF
    /// storefront ids; `all` keeps every storefront.
    static func parseStorefronts(_ text: String) throws -> Choice<[Int]> {
        let words = try listed(text, option: "storefronts")
        if words == ["all"] { return .all }
        var ids: Set<Int> = []
        for word in words {
            if let id = Int(word), id > 0 {
                ids.insert(id)
            } else if let id = AppleStorefronts.id(forCountryCode: word) {
                ids.insert(id)
            } else {
                throw ImportError.badOption("--storefronts: '\(word)' is neither a storefront's ISO 3166 code (us, "
                                            + "gbr) nor an EPF storefront id (143441)")
            }
        }
        return .only(ids.sorted())
    }

    /// `en,ja,zh-Hant`: language codes (letters and digits, subtags joined by `-` or `_`); `all` keeps every one.
    static func parseLanguages(_ text: String) throws -> Choice<[String]> {
        let words = try listed(text, option: "languages")
        if words == ["all"] { return .all }
        var codes: Set<String> = []
        for word in words {
            let code = normalizedLanguage(word)
            let subtags = code.split(separator: "-", omittingEmptySubsequences: false)
            let wellFormed = subtags.allSatisfy { subtag in
                !subtag.isEmpty && subtag.count <= 8 && subtag.utf8.allSatisfy { byte in
                    (0x61...0x7a).contains(byte) || (0x30...0x39).contains(byte)
                }
            }
            guard wellFormed else {
                throw ImportError.badOption("--languages: '\(word)' is not a language code (en, ja, zh-Hant)")
            }
            codes.insert(code)
        }
        return .only(codes.sorted())
    }

    /// The comma-separated words of an option's value, lower case; refuses an empty one.
    private static func listed(_ text: String, option: String) throws -> [String] {
        let words = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            .filter { !$0.isEmpty }
        guard !words.isEmpty else {
            throw ImportError.badOption("--\(option) needs a comma-separated list, or 'all'")
        }
        return words
    }

    /// Lower case, `_` as `-`: how codes are compared (`EN_us` is `en-us`).
    static func normalizedLanguage(_ code: String) -> String {
        String(code.lowercased().map { $0 == "_" ? "-" : $0 })
    }

    /// The selection an import applies: each dimension as requested, else as the database keeps it.
    ///
    /// A request that differs from what a database holding tables keeps is refused (`ImportError.badOption`)
    /// unless `force`: the tables already loaded hold only the old selection's rows, and an incremental would mix
    /// the two. Changing it means loading a full export again with the new option and `--force`.
    package static func settle(_ request: Request, stored: RowSelection, databaseHasTables: Bool,
                               force: Bool) throws -> RowSelection {
        var settled = stored
        if let wanted = request.storefronts { settled.storefronts = wanted.kept }
        if let wanted = request.languages { settled.languages = wanted.kept }
        guard settled != stored, databaseHasTables, !force else { return settled }
        var differences: [String] = []
        if settled.storefronts != stored.storefronts {
            differences.append("--storefronts \(describe(settled.storefronts)) (it keeps "
                               + "\(describe(stored.storefronts)))")
        }
        if settled.languages != stored.languages {
            differences.append("--languages \(describe(settled.languages)) (it keeps \(describe(stored.languages)))")
        }
        throw ImportError.badOption(
            "this database was loaded with another selection: " + differences.joined(separator: ", ")
                + ". Its tables hold only the rows of what it keeps; to change that, import a full export again "
                + "with the new option and --force, or leave the option out to keep the database's selection")
    }

    /// `us (143441), gb (143444)` or `all`, for messages and `epf status`.
    package static func describe(_ storefronts: [Int]?) -> String {
        guard let storefronts else { return "all" }
        return storefronts.map { id in
            AppleStorefronts.entry(id: id).map { "\($0.linkCode) (\(id))" } ?? "\(id)"
        }.joined(separator: ", ")
    }

    /// `en, ja` or `all`.
    package static func describe(_ languages: [String]?) -> String {
        languages?.joined(separator: ", ") ?? "all"
    }

    // MARK: - Stored form

    /// The names of the `epf_settings` rows that hold a selection (absent: all).
    /// (Readers find the first in EPFSchema's `StoreBookkeeping.keptStorefronts`.)
    static let storefrontsSetting = "storefronts"
    static let languagesSetting = "languages"

    /// The selection from its `epf_settings` values; values that do not parse keep everything.
    package init(storedStorefronts: String?, storedLanguages: String?) {
        storefronts = storedStorefronts.map { $0.split(separator: ",").compactMap { Int($0) } }
        languages = storedLanguages.map { $0.split(separator: ",").map(String.init) }
    }

    /// The `epf_settings` value of each dimension; nil removes the row (every value kept).
    package var storedStorefronts: String? { storefronts.map { $0.map(String.init).joined(separator: ",") } }
    package var storedLanguages: String? { languages?.joined(separator: ",") }
}

/// Leaves out, while parsing, the records of a table that `RowSelection` does not keep: a price or popularity
/// table's other storefronts (any table with a `storefront_id` column but `storefront` itself), or
/// `application_detail`'s and a `*_translation` table's other languages. A record whose value does not read as
/// a storefront id or language (empty, junk) is kept, so that the row's checks reject it as before.
struct RowFilter {
    private enum Test {
        case storefront(column: Int, ids: Set<Int64>)
        case language(column: Int, codes: [[UInt8]])
    }

    private let test: Test

    /// The filter of one table file; nil when the selection keeps all of its rows.
    package init?(selection: RowSelection, table: String, columns: [String]) {
        if let storefronts = selection.storefronts, table != "storefront",
           let column = columns.firstIndex(of: "storefront_id") {
            test = .storefront(column: column, ids: Set(storefronts.map(Int64.init)))
        } else if let languages = selection.languages,
                  table == "application_detail" || table.hasSuffix("_translation"),
                  let column = columns.firstIndex(of: "language_code") {
            test = .language(column: column, codes: languages.map { Array($0.utf8) })
        } else {
            return nil
        }
    }

    /// Whether the record stays (true for a record the filter cannot read).
    @inline(__always)
    package func keeps(_ record: EPFRecord) -> Bool {
        switch test {
        case .storefront(let column, let ids):
            guard let id = Self.storefrontID(record.field(column)) else { return true }
            return ids.contains(id)
        case .language(let column, let codes):
            let value = record.field(column)
            guard !value.isEmpty else { return true }
            return codes.contains { Self.language(value, matches: $0) }
        }
    }

    /// The decimal digits of a field as a number; nil when it holds anything else, or is empty or too long.
    private static func storefrontID(_ field: UnsafeRawBufferPointer) -> Int64? {
        guard !field.isEmpty, field.count <= 18 else { return nil }
        var value: Int64 = 0
        for byte in field {
            guard byte >= 0x30 && byte <= 0x39 else { return nil }
            value = value &* 10 &+ Int64(byte &- 0x30)
        }
        return value
    }

    /// Whether a stored language code is `code` or one of its variants (`code` then `-` or `_`), ignoring ASCII
    /// case; `code` is normalized (lower case, `-`).
    private static func language(_ value: UnsafeRawBufferPointer, matches code: [UInt8]) -> Bool {
        guard value.count >= code.count else { return false }
        for index in 0..<code.count {
            var byte = value[index]
            if byte >= 0x41 && byte <= 0x5a { byte |= 0x20 }
            if byte == 0x5f { byte = 0x2d }
            guard byte == code[index] else { return false }
        }
        return value.count == code.count || value[code.count] == 0x2d || value[code.count] == 0x5f
    }
}
