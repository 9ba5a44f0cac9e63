import EPFSQLite

/// The statement behind app lookups: the app's row, its price in one storefront (`?2`), its developer,
/// and its genres, devices and languages as `group_concat` lists, for app `?1`, in one step.
///
/// One statement instead of one per part saves a reset, bind and step per part and lets SQLite do the
/// joins; each part still reads through an index (`application_price_pk`, `genre_application_app`,
/// `application_device_type_pk`, `application_detail_pk`, `artist_application_app`). Columns missing from an
/// older `application` table read as NULL; tables that are absent leave their part out.
struct ApplicationStatement {
    /// Result columns, in order.
    enum Column: Int32, CaseIterable {
        case title, description, artistName, sellerName, companyUrl, viewUrl, artworkSmall, artworkLarge
        case releaseDate, version, downloadSize, recommendedAge, copyright, supportUrl
        case retailPrice, currency, artistId, artistViewUrl, genres, devices, languages
    }

    let statement: SQLiteStatement
    let hasPrices: Bool
    let hasDeveloper: Bool
    let hasDevices: Bool
    let hasLanguages: Bool

    /// Prepares the statement for an `application` table with these (lower-case) columns and these tables.
    /// Throws `SQLiteError` when a related table lacks a column the lookup reads.
    init(connection: SQLiteConnection, columns: Set<String>, tables: Set<String>) throws {
        func column(_ name: String) -> String { columns.contains(name) ? "a.\(name)" : "NULL" }
        hasPrices = tables.contains("application_price")
        hasDeveloper = tables.contains("artist_application")
        hasDevices = tables.contains("application_device_type")
        hasLanguages = tables.contains("application_detail")
        let developer = "(SELECT artist_id FROM artist_application WHERE application_id = ?1 LIMIT 1)"
        let parts: [String] = [
            column("title"), column("description"), column("artist_name"), column("seller_name"),
            column("company_url"), column("view_url"), column("artwork_url_small"), column("artwork_url_large"),
            column("itunes_release_date"), column("version"), column("download_size"), column("recommended_age"),
            column("copyright"), column("support_url"),
            hasPrices ? "p.retail_price" : "NULL", hasPrices ? "p.currency_code" : "NULL",
            hasDeveloper ? developer : "NULL",
            hasDeveloper && tables.contains("artist")
                ? "(SELECT view_url FROM artist WHERE artist_id = \(developer))" : "NULL",
            // "6014p,6016": primary genres marked; ordered in Swift, as an ORDER BY here would sort in a temp
            // B-tree on every lookup.
            tables.contains("genre_application") ? """
                (SELECT group_concat(CAST(genre_id AS INTEGER) || CASE WHEN is_primary = 1 THEN 'p' ELSE '' END,
                    ',') FROM genre_application WHERE application_id = ?1 AND genre_id IS NOT NULL)
                """ : "NULL",
            hasDevices ? """
                (SELECT group_concat(CAST(device_type_id AS INTEGER), ',') FROM application_device_type
                    WHERE application_id = ?1)
                """ : "NULL",
            hasLanguages ? """
                (SELECT group_concat(language_code, char(1)) FROM application_detail WHERE application_id = ?1)
                """ : "NULL",
        ]
        let sql = "SELECT " + parts.joined(separator: ",\n    ") + "\nFROM application a\n"
            + (hasPrices ? "LEFT JOIN application_price p ON p.application_id = ?1 AND p.storefront_id = ?2\n" : "")
            + "WHERE a.application_id = ?1"
        statement = try connection.prepare(sql)
    }
}
