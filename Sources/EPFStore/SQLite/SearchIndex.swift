import EPFSchema
import EPFSQLite

/// Building the full-text index `epf_search` (see EPFSchema's `SearchIndex` for what it holds).
///
/// Prefix indexes for 2 and 3 characters (`prefix = '2 3'`) let a short prefix ("ka*") read one doclist
/// instead of merging the doclists of every token it begins: 20-30 ms less per query on a million rows,
/// for about 16% more build time and 50% more index. A 1-character index would double the build time.
/// Indexes built before have none and answer the same, only slower.
extension SearchIndex {
    /// Rebuilds `epf_search` from whichever of application, collection, song, video and artist exist.
    ///
    /// Builds `epf_search_new` with one `INSERT ... SELECT` per table, then replaces `epf_search` with it.
    /// The caller holds the write transaction, so readers see the old index or the new one, never half.
    /// Throws `SQLiteError` (with the SQL) when a statement fails; the caller's rollback undoes everything.
    package static func rebuild(_ connection: SQLiteConnection) throws {
        try connection.registerCJKSpacingFunction()
        try connection.execute("""
            DROP TABLE IF EXISTS epf_search_new;
            CREATE VIRTUAL TABLE epf_search_new USING fts5(kind UNINDEXED, id UNINDEXED, title, names,
                tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3');
            """)
        let hasMediaType = try connection.tableExists("media_type")
        for table in ["application", "collection", "song", "video", "artist"] {
            guard try connection.tableExists(table) else { continue }
            // Tables loaded from old or odd headers may lack a column: it reads as NULL, and a table without
            // its id column is left out, instead of failing the import.
            let present = Set(try connection.query("SELECT name FROM pragma_table_info(?1)", [.text(table)])
                .compactMap { row -> String? in
                    if case .text(let name) = row.first { return name }
                    return nil
                })
            if let sql = insertStatement(table: table, present: present, hasMediaType: hasMediaType) {
                try connection.execute(sql)
            }
        }
        try connection.execute("""
            INSERT INTO epf_search_new(epf_search_new) VALUES ('optimize');
            DROP TABLE IF EXISTS epf_search;
            ALTER TABLE epf_search_new RENAME TO epf_search;
            """)
    }

    /// The `INSERT ... SELECT` that indexes one table, built from the columns it has; nil without its id column.
    static func insertStatement(table: String, present: Set<String>, hasMediaType: Bool) -> String? {
        func column(_ name: String) -> String { present.contains(name) ? "t.\"\(name)\"" : "NULL" }
        let prefix = "INSERT INTO epf_search_new(kind, id, title, names) "
        switch table {
        case "application":
            guard present.contains("application_id") else { return nil }
            let artist = column("artist_name")
            let seller = column("seller_name")
            return prefix + """
                SELECT 'software', t.application_id, epf_cjk(\(column("title"))),
                    epf_cjk(CASE WHEN \(seller) IS NULL OR \(seller) = \(artist) THEN \(artist)
                                 WHEN \(artist) IS NULL THEN \(seller)
                                 ELSE \(artist) || ' ' || \(seller) END)
                FROM application t
                """
        case "collection":
            guard present.contains("collection_id") else { return nil }
            let kind = hasMediaType && present.contains("media_type_id")
                ? "CASE WHEN (SELECT m.name FROM media_type m WHERE m.media_type_id = t.media_type_id) "
                    + "LIKE '%book%' THEN 'ebook' ELSE 'album' END"
                : "'album'"
            return prefix + "SELECT \(kind), t.collection_id, epf_cjk(\(column("name"))), "
                + "epf_cjk(\(column("artist_display_name"))) FROM collection t"
        case "song", "video":
            guard present.contains("\(table)_id") else { return nil }
            return prefix + "SELECT '\(table)', t.\(table)_id, epf_cjk(\(column("name"))), "
                + "epf_cjk(\(column("artist_display_name"))) FROM \(table) t"
        case "artist":
            guard present.contains("artist_id") else { return nil }
            return prefix + "SELECT 'artist', t.artist_id, epf_cjk(\(column("name"))), NULL FROM artist t"
        default:
            return nil
        }
    }
}
