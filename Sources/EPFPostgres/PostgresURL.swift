/// PostgreSQL connection URLs as `epf` takes them in `--db` and `EPF_DB`.
package enum PostgresURL {
    /// True for `postgresql://...` and `postgres://...` (the two schemes libpq accepts).
    package static func isPostgres(_ text: String) -> Bool {
        let lower = text.lowercased()
        return lower.hasPrefix("postgresql://") || lower.hasPrefix("postgres://")
    }

    /// The URL without its password, for messages, logs and `epf status`: the `:password` of the user part and
    /// any `password=` query parameter are removed. libpq itself still gets the full URL; `PGPASSWORD` and
    /// `~/.pgpass` are never read by epf.
    package static func redacted(_ url: String) -> String {
        guard let schemeEnd = url.range(of: "://") else { return url }
        let scheme = url[..<schemeEnd.upperBound]
        var rest = String(url[schemeEnd.upperBound...])
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        if let at = authority.lastIndex(of: "@") {
            let user = authority[..<at]
            let name = user.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            rest = String(name) + String(authority[at...]) + String(rest[authorityEnd...])
        }
        if let question = rest.firstIndex(of: "?") {
            let query = rest[rest.index(after: question)...].split(separator: "&").filter {
                !$0.lowercased().hasPrefix("password=")
            }
            rest = String(rest[..<question]) + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
        }
        return scheme + rest
    }
}
