/// The names a table file may have.
enum TableName {
    /// Why a file name cannot be a table: EPF tables are snake_case words; `epf_` and `sqlite_` names are
    /// reserved for the importer's bookkeeping and SQLite itself. Nil when the name is fine.
    package static func problem(_ name: String) -> String? {
        let allowed = name.utf8.allSatisfy { byte in
            (byte >= 0x61 && byte <= 0x7a) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x30 && byte <= 0x39)
                || byte == 0x5f
        }
        guard !name.isEmpty, name.count <= 64, allowed, let first = name.utf8.first, !(0x30...0x39).contains(first)
        else {
            return "'\(name.prefix(80))' is not an EPF table name (letters, digits and _ only); file not loaded"
        }
        let lower = name.lowercased()
        if lower.hasPrefix("epf_") || lower.hasPrefix("sqlite_") {
            return "'\(name)' is reserved (epf_ and sqlite_ tables belong to epf and SQLite); file not loaded"
        }
        return nil
    }
}
