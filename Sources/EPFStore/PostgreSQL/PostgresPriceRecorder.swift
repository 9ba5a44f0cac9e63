import EPFFormat
import EPFImport
import EPFPostgres
import EPFSchema
import EPFStore
import Foundation

/// Price history of one PostgreSQL table load, through the load's lifecycle (`LoadRecorder`): the same rows as
/// `PriceRecorder` records on SQLite (see `PriceHistory`), written by set-based statements in the load's
/// transaction. PostgreSQL's planner compares the old and new tables of a full with a merge or hash join over their
/// keys, not a lookup per row. Nil for tables that are not price tables, or when the import does not record
/// history.
final class PostgresPriceRecorder: LoadRecorder {
    let target: PostgresTarget
    let table: String
    let kind: String
    let key: String
    let mode: ExportMode
    /// The full's staging table, or the incremental's table of incoming rows.
    let loaded: String
    let feedDate: String?
    /// Whether the table existed, with its price columns, when the load began (the first load is the baseline).
    let existed: Bool
    private static let before = "epf_price_before"

    /// A recorder for the load of `table` in `mode` from `loaded` (a full's staging table, an incremental's
    /// incoming rows).
    init?(_ connection: PostgresConnection, target: PostgresTarget, table: String, mode: ExportMode, loaded: String,
          feedDate: String?, enabled: Bool) throws {
        guard enabled, let tracked = PriceHistory.tracked[table] else { return nil }
        self.target = target
        self.table = table
        self.mode = mode
        self.loaded = loaded
        self.feedDate = feedDate
        kind = tracked.kind
        key = tracked.key
        existed = try Self.hasColumns(connection, target: target, table: table, key: tracked.key)
    }

    /// Nothing to do: the history is found from the loaded rows as a whole.
    func began(_ connection: PostgresConnection) throws {}

    /// Nothing to do per row.
    func rowWritten(_ connection: PostgresConnection, exportDate: Int64?) throws {}

    /// Every part's end is committed anyway (`PostgresTableLoad.checkpointsPartEnds`).
    var commitsPartEnds: Bool { false }

    /// Before an incremental's upsert: keeps what the keys it touches hold now.
    func willPublish(_ connection: PostgresConnection) throws {
        if mode == .incremental { try beginIncremental(connection, incoming: loaded) }
    }

    /// Records the full's changes (before the swap's rename) or the incremental's (after its upsert).
    func publish(_ connection: PostgresConnection, exportDate: Int64?) throws {
        switch mode {
        case .full: try recordFull(connection, staging: loaded, exportDate: exportDate, feedDate: feedDate)
        case .incremental:
            try finishIncremental(connection, incoming: loaded, exportDate: exportDate, feedDate: feedDate)
        }
    }

    /// Nothing to undo: what was recorded is in the transaction the load rolls back.
    func abort(_ connection: PostgresConnection) {}

    private static func hasColumns(_ connection: PostgresConnection, target: PostgresTarget, table: String,
                                   key: String) throws -> Bool {
        let columns = [key] + PriceRecording.columns
        let found = try connection.scalar("""
            SELECT count(*) FROM information_schema.columns
            WHERE table_schema = $1 AND table_name = $2 AND column_name = ANY($3::text[])
            """, [target.schema, table, "{" + columns.joined(separator: ",") + "}"])
        return found.flatMap { Int($0) } == columns.count
    }

    private func quoted(_ name: String) -> String { PostgresTarget.quote(name) }
    private var history: String { target.qualified(PriceHistory.table) }

    private func createTable(_ connection: PostgresConnection) throws {
        try connection.execute(PriceHistory.schema(qualifiedTable: history, serial: "bigserial PRIMARY KEY"))
    }

    /// `ON CONFLICT DO NOTHING` when the history already holds changes of this kind for `exportDate` (an export
    /// applied again, or a full after an incremental of the same date), else nothing: a change is then new by
    /// construction, and the speculative insertion cost a quarter of a 1/64 full's history (4.3 of 18.1 s for
    /// 1.46 M changes).
    private func conflictClause(_ connection: PostgresConnection, exportDate: String) throws -> String {
        let recorded = try connection.scalar("""
            SELECT 1 FROM \(history) WHERE export_date = $1::bigint AND kind = $2 LIMIT 1
            """, [exportDate, kind])
        return recorded == nil ? "" : "ON CONFLICT DO NOTHING"
    }

    /// Records what replacing the table with `staging` changes; call in the swap transaction, before the rename.
    private func recordFull(_ connection: PostgresConnection, staging: String, exportDate: Int64?,
                            feedDate: String?) throws {
        guard existed, try Self.hasColumns(connection, target: target, table: staging, key: key) else { return }
        try createTable(connection)
        let item = quoted(key)
        let date = String(ChangeLog.exportDate(exportDate, feedDate: feedDate))
        try connection.execute("""
            INSERT INTO \(history) (export_date, kind, id, storefront_id, change, old_price, new_price, currency)
            SELECT $1::bigint, $2, coalesce(n.\(item), o.\(item)), coalesce(n.storefront_id, o.storefront_id),
                CASE WHEN o.\(item) IS NULL THEN 'appeared' WHEN n.\(item) IS NULL THEN 'disappeared'
                    ELSE 'changed' END,
                o.retail_price::text, n.retail_price::text,
                CASE WHEN n.\(item) IS NULL THEN o.currency_code ELSE n.currency_code END
            FROM \(target.qualified(table)) AS o
            FULL JOIN \(target.qualified(staging)) AS n
                ON n.\(item) = o.\(item) AND n.storefront_id = o.storefront_id
            WHERE o.\(item) IS NULL OR n.\(item) IS NULL
                OR o.retail_price::numeric IS DISTINCT FROM n.retail_price::numeric
                OR o.currency_code IS DISTINCT FROM n.currency_code
            \(try conflictClause(connection, exportDate: date))
            """, [date, kind])
    }

    /// Before an incremental's upsert: keeps the current price and currency of every key the incoming rows
    /// (table `incoming`) touch, in a temporary table dropped at commit.
    private func beginIncremental(_ connection: PostgresConnection, incoming: String) throws {
        guard existed else { return }
        let item = quoted(key)
        try connection.execute("""
            DROP TABLE IF EXISTS pg_temp.\(Self.before);
            CREATE TEMP TABLE \(Self.before) ON COMMIT DROP AS
            SELECT t.\(item) AS id, t.storefront_id, t.retail_price::text AS price, t.currency_code AS currency
            FROM \(target.qualified(table)) AS t
            WHERE (t.\(item), t.storefront_id) IN (SELECT \(item), storefront_id FROM \(quoted(incoming)))
            """)
    }

    /// After the upsert: records each touched key that is new to the table (`appeared`) or whose price or
    /// currency now differs from before (`changed`).
    private func finishIncremental(_ connection: PostgresConnection, incoming: String, exportDate: Int64?,
                           feedDate: String?) throws {
        guard existed else { return }
        try createTable(connection)
        let item = quoted(key)
        let date = String(ChangeLog.exportDate(exportDate, feedDate: feedDate))
        try connection.execute("""
            INSERT INTO \(history) (export_date, kind, id, storefront_id, change, old_price, new_price, currency)
            SELECT $1::bigint, $2, t.\(item), t.storefront_id,
                CASE WHEN b.id IS NULL THEN 'appeared' ELSE 'changed' END,
                b.price, t.retail_price::text, t.currency_code
            FROM (SELECT DISTINCT \(item), storefront_id FROM \(quoted(incoming))) AS k
            JOIN \(target.qualified(table)) AS t ON t.\(item) = k.\(item) AND t.storefront_id = k.storefront_id
            LEFT JOIN pg_temp.\(Self.before) AS b ON b.id = k.\(item) AND b.storefront_id = k.storefront_id
            WHERE b.id IS NULL OR b.price::numeric IS DISTINCT FROM t.retail_price::numeric
                OR b.currency IS DISTINCT FROM t.currency_code
            ORDER BY 3, 4
            \(try conflictClause(connection, exportDate: date))
            """, [date, kind])
        try connection.execute("DROP TABLE IF EXISTS pg_temp.\(Self.before)")
    }
}
