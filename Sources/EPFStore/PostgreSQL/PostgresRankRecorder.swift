import EPFFormat
import EPFImport
import EPFPostgres
import EPFSchema
import EPFStore
import Foundation

/// The rank history of one PostgreSQL table load (`--history ranks`, see `RankHistoryRead` for the rules): a full
/// load of a popularity table is the day, recorded from the staging table by set-based statements in the swap's
/// transaction, so a refused load records nothing. Nil for other tables, incrementals and imports without ranks.
///
/// Packed for SQL users rather than for epf's reader: `epf_rank_lists` holds one row per chart (chart table,
/// storefront, genre) and day with `ids bigint[]` in rank order and `ranks integer[]` only when the ranks are not
/// 1...n; `epf_rank_days` the recorded days of each chart table; the view `epf_rank_history` unnests it WITH
/// ORDINALITY into (export_date, chart, storefront_id, genre_id, rank, id), `chart` named as `--chart` names it
/// (`RankChart`). A day recorded again replaces its rows; days land wherever their date puts them.
final class PostgresRankRecorder: LoadRecorder {
    private let target: PostgresTarget
    private let chart: RankChart
    private let staging: String
    private let feedDate: String?

    init?(target: PostgresTarget, table: String, mode: ExportMode, staging: String, feedDate: String?,
          enabled: Bool) {
        guard enabled, mode == .full, let chart = RankChart(table: table) else { return nil }
        self.target = target
        self.chart = chart
        self.staging = staging
        self.feedDate = feedDate
    }

    func began(_ connection: PostgresConnection) throws {}

    func rowWritten(_ connection: PostgresConnection, exportDate: Int64?) throws {}

    var commitsPartEnds: Bool { false }

    func willPublish(_ connection: PostgresConnection) throws {}

    /// The tables and view (`IF NOT EXISTS`, the view replaced).
    static func schema(_ target: PostgresTarget) -> String {
        let names = RankChart.allCases.map { "WHEN \($0.code) THEN '\($0.rawValue)'" }.joined(separator: " ")
        return """
            CREATE TABLE IF NOT EXISTS \(target.qualified(RankHistoryRead.daysTable)) (
                chart smallint NOT NULL, export_date bigint NOT NULL, charts integer NOT NULL,
                entries bigint NOT NULL, recorded text NOT NULL, PRIMARY KEY (chart, export_date));
            CREATE TABLE IF NOT EXISTS \(target.qualified(RankHistoryRead.listsTable)) (
                chart smallint NOT NULL, storefront_id bigint NOT NULL, genre_id bigint NOT NULL,
                export_date bigint NOT NULL, ids bigint[] NOT NULL, ranks integer[],
                PRIMARY KEY (chart, storefront_id, genre_id, export_date));
            CREATE OR REPLACE VIEW \(target.qualified(Self.view)) AS
                SELECT l.export_date, CASE l.chart \(names) END AS chart, l.storefront_id, l.genre_id,
                    coalesce(l.ranks[u.position], u.position)::integer AS rank, u.id
                FROM \(target.qualified(RankHistoryRead.listsTable)) AS l,
                    unnest(l.ids) WITH ORDINALITY AS u(id, position);
            """
    }

    /// The one-row-per-rank view.
    static let view = "epf_rank_history"

    /// Records the day from the staging table, before it is renamed.
    func publish(_ connection: PostgresConnection, exportDate: Int64?) throws {
        let day = ChangeLog.exportDate(exportDate, feedDate: feedDate)
        let lists = target.qualified(RankHistoryRead.listsTable)
        let rank = PostgresTarget.quote(chart.rankColumn)
        let id = PostgresTarget.quote(chart.idColumn)
        try connection.execute(Self.schema(target))
        try connection.execute("DELETE FROM \(lists) WHERE chart = \(chart.code) AND export_date = \(day)")
        try connection.execute("""
            INSERT INTO \(lists) (chart, storefront_id, genre_id, export_date, ids, ranks)
            SELECT \(chart.code), storefront_id, genre_id, \(day), array_agg(id ORDER BY position),
                CASE WHEN bool_and(rank = position) THEN NULL ELSE array_agg(rank ORDER BY position) END
            FROM (SELECT storefront_id, genre_id, \(id) AS id, \(rank) AS rank,
                      row_number() OVER (PARTITION BY storefront_id, genre_id ORDER BY \(rank), \(id)) AS position
                  FROM \(target.qualified(staging))
                  WHERE storefront_id IS NOT NULL AND genre_id IS NOT NULL AND \(rank) IS NOT NULL
                      AND \(id) IS NOT NULL) AS ranked
            GROUP BY storefront_id, genre_id
            """)
        try connection.execute("""
            INSERT INTO \(target.qualified(RankHistoryRead.daysTable)) (chart, export_date, charts, entries, recorded)
            SELECT \(chart.code), \(day), count(*), coalesce(sum(cardinality(ids)), 0), $1 FROM \(lists)
            WHERE chart = \(chart.code) AND export_date = \(day)
            ON CONFLICT (chart, export_date) DO UPDATE SET charts = excluded.charts, entries = excluded.entries,
                recorded = excluded.recorded
            """, [ISO8601DateFormatter().string(from: Date())])
    }

    func abort(_ connection: PostgresConnection) {}
}
