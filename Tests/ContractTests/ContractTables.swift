/// The tables the contract matrix writes, as the test itself describes them (not the importer's schemas): column
/// names and header types from EPF-FORMAT.md section 5, the key, and the kind of value each column holds.
enum ValueKind {
    /// `export_date`: milliseconds.
    case exportDate
    /// An integer id (a key column, or `storefront_id`).
    case id
    /// A nullable integer (`download_size`).
    case integer
    /// Short text (titles, names, URLs).
    case text
    /// Long text (descriptions, release notes): where CR LF and leading CR LF go.
    case longText
    /// A date (`YYYY MM DD` and the other shapes EPF uses).
    case date
    /// A price, `DECIMAL(9,3)`.
    case decimal
    /// `BOOLEAN`, 0 or 1.
    case boolean
    /// A language code (part of `application_detail`'s key).
    case language
    /// An ISO-4217 currency code.
    case currency
    /// A place in a chart (`application_rank`): a small integer.
    case rank
}

struct ColumnSpec {
    let name: String
    let dbType: String
    let kind: ValueKind
}

struct TableSpec {
    let name: String
    /// `itunes` or `pricing`.
    let feed: String
    let columns: [ColumnSpec]
    /// Indexes of the key columns; empty for a table without a primary key.
    let key: [Int]
    /// Whether the change log tracks the table (`application`: kind `app`).
    var tracked: Bool { name == "application" }

    var keyed: Bool { !key.isEmpty }
    /// Whether the table is a chart (a popularity table): FULL every day, its full loads recorded by `--history
    /// ranks`.
    var chart: Bool { name.hasSuffix("_popularity_per_genre") }
    func index(of column: String) -> Int? { columns.firstIndex { $0.name == column } }
}

enum ContractTables {
    static let application = TableSpec(name: "application", feed: "itunes", columns: [
        ColumnSpec(name: "export_date", dbType: "BIGINT", kind: .exportDate),
        ColumnSpec(name: "application_id", dbType: "INTEGER", kind: .id),
        ColumnSpec(name: "title", dbType: "VARCHAR(1000)", kind: .text),
        ColumnSpec(name: "recommended_age", dbType: "VARCHAR(20)", kind: .text),
        ColumnSpec(name: "artist_name", dbType: "VARCHAR(1000)", kind: .text),
        ColumnSpec(name: "seller_name", dbType: "VARCHAR(1000)", kind: .text),
        ColumnSpec(name: "company_url", dbType: "VARCHAR(1000)", kind: .text),
        ColumnSpec(name: "support_url", dbType: "VARCHAR(1000)", kind: .text),
        ColumnSpec(name: "view_url", dbType: "VARCHAR(1000)", kind: .text),
        ColumnSpec(name: "artwork_url_large", dbType: "VARCHAR(1000)", kind: .text),
        ColumnSpec(name: "artwork_url_small", dbType: "VARCHAR(1000)", kind: .text),
        ColumnSpec(name: "itunes_release_date", dbType: "DATETIME", kind: .date),
        ColumnSpec(name: "copyright", dbType: "VARCHAR(4000)", kind: .text),
        ColumnSpec(name: "description", dbType: "LONGTEXT", kind: .longText),
        ColumnSpec(name: "version", dbType: "VARCHAR(100)", kind: .text),
        ColumnSpec(name: "itunes_version", dbType: "VARCHAR(100)", kind: .text),
        ColumnSpec(name: "download_size", dbType: "BIGINT", kind: .integer),
    ], key: [1])

    static let applicationDetail: TableSpec = {
        var columns = [
            ColumnSpec(name: "export_date", dbType: "BIGINT", kind: .exportDate),
            ColumnSpec(name: "application_id", dbType: "INTEGER", kind: .id),
            ColumnSpec(name: "language_code", dbType: "VARCHAR(20)", kind: .language),
            ColumnSpec(name: "title", dbType: "VARCHAR(1000)", kind: .text),
            ColumnSpec(name: "description", dbType: "LONGTEXT", kind: .longText),
            ColumnSpec(name: "release_notes", dbType: "LONGTEXT", kind: .longText),
            ColumnSpec(name: "company_url", dbType: "VARCHAR(1000)", kind: .text),
            ColumnSpec(name: "support_url", dbType: "VARCHAR(1000)", kind: .text),
        ]
        for prefix in ["screenshot", "ipad_screenshot"] {
            columns += (1...4).map { ColumnSpec(name: "\(prefix)_url_\($0)", dbType: "VARCHAR(1000)", kind: .text) }
            columns += (1...4).map {
                ColumnSpec(name: "\(prefix)_width_height_\($0)", dbType: "VARCHAR(20)", kind: .text)
            }
        }
        return TableSpec(name: "application_detail", feed: "itunes", columns: columns, key: [1, 2])
    }()

    static let genreApplication = TableSpec(name: "genre_application", feed: "itunes", columns: [
        ColumnSpec(name: "export_date", dbType: "BIGINT", kind: .exportDate),
        ColumnSpec(name: "genre_id", dbType: "INTEGER", kind: .id),
        ColumnSpec(name: "application_id", dbType: "INTEGER", kind: .id),
        ColumnSpec(name: "is_primary", dbType: "BOOLEAN", kind: .boolean),
    ], key: [1, 2])

    /// A table no built-in schema knows, without a primary key: the generic path (replace on a full, append on an
    /// incremental).
    static let keyless = TableSpec(name: "contract_note", feed: "itunes", columns: [
        ColumnSpec(name: "export_date", dbType: "BIGINT", kind: .exportDate),
        ColumnSpec(name: "note_id", dbType: "INTEGER", kind: .id),
        ColumnSpec(name: "name", dbType: "VARCHAR(100)", kind: .text),
        ColumnSpec(name: "body", dbType: "LONGTEXT", kind: .longText),
    ], key: [])

    static let applicationPrice = TableSpec(name: "application_price", feed: "pricing", columns: [
        ColumnSpec(name: "export_date", dbType: "BIGINT", kind: .exportDate),
        ColumnSpec(name: "application_id", dbType: "INTEGER", kind: .id),
        ColumnSpec(name: "retail_price", dbType: "DECIMAL(9,3)", kind: .decimal),
        ColumnSpec(name: "currency_code", dbType: "VARCHAR(20)", kind: .currency),
        ColumnSpec(name: "storefront_id", dbType: "INTEGER", kind: .id),
    ], key: [1, 4])

    /// v3's chart table (`popularity<date>`, a FULL file in every export's folder, full or incremental); written by
    /// `PopularityPlanner`, not `ExportPlanner` (its own generator: the other tables' sequences stay as they were).
    static let popularity = TableSpec(name: "application_popularity_per_genre", feed: "popularity", columns: [
        ColumnSpec(name: "export_date", dbType: "BIGINT", kind: .exportDate),
        ColumnSpec(name: "storefront_id", dbType: "INTEGER", kind: .id),
        ColumnSpec(name: "genre_id", dbType: "INTEGER", kind: .id),
        ColumnSpec(name: "application_id", dbType: "INTEGER", kind: .id),
        ColumnSpec(name: "application_rank", dbType: "INTEGER", kind: .rank),
    ], key: [1, 2, 3])

    /// v5's four chart tables (since 2023: free and paid, iPhone and iPad), with the real 2025 header: the same
    /// columns as v3's chart but `BIGINT` application ids. Written by `PopularityPlanner` for sequences of v5's
    /// layout, FULL every day, each table its own file in the `popularity<date>` folder.
    static let v5Charts: [TableSpec] = ["free", "paid", "free_ipad", "paid_ipad"].map { prefix in
        TableSpec(name: "\(prefix)_application_popularity_per_genre", feed: "popularity", columns: [
            ColumnSpec(name: "export_date", dbType: "BIGINT", kind: .exportDate),
            ColumnSpec(name: "storefront_id", dbType: "INTEGER", kind: .id),
            ColumnSpec(name: "genre_id", dbType: "INTEGER", kind: .id),
            ColumnSpec(name: "application_id", dbType: "BIGINT", kind: .id),
            ColumnSpec(name: "application_rank", dbType: "INTEGER", kind: .rank),
        ], key: [1, 2, 3])
    }

    static let all = [application, applicationDetail, genreApplication, keyless, applicationPrice]
    static let feeds = ["itunes", "pricing"]
    /// Every table the contract matrix compares: `all` and the charts of both layouts.
    static let compared = all + [popularity] + v5Charts
}
