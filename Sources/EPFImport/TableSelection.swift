import Foundation

/// `--only` and `--skip`: which tables an import applies.
package struct TableSelection {
    private let only: NSRegularExpression?
    private let skip: NSRegularExpression?

    /// Throws `ImportError.badOption` for an expression that does not compile.
    package init(options: ImportOptions) throws {
        func compile(_ pattern: String?, _ flag: String) throws -> NSRegularExpression? {
            guard let pattern else { return nil }
            do {
                return try NSRegularExpression(pattern: pattern)
            } catch {
                throw ImportError.badOption("--\(flag) '\(pattern)' is not a valid regular expression")
            }
        }
        only = try compile(options.only, "only")
        skip = try compile(options.skip, "skip")
    }

    /// Whether the table is selected.
    package func contains(_ table: String) -> Bool {
        let range = NSRange(table.startIndex..., in: table)
        if let only, only.firstMatch(in: table, range: range) == nil { return false }
        if let skip, skip.firstMatch(in: table, range: range) != nil { return false }
        return true
    }
}
