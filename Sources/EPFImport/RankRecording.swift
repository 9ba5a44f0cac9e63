import EPFFormat

/// What an import settles about recording rank history (`--history ranks`; EPFSchema's `RankHistoryRead` says what
/// it records and where): which tables are charts, and when a file is read only for its day's ranks.
package enum RankRecording {
    /// The popularity tables, whose full loads are days of ranks: v3's and v5's app charts, the old music charts.
    package static let tables = Set(EPFTable.appCharts + ["song_popularity_per_genre", "album_popularity_per_genre"])

    /// Whether a file the export order skips as superseded because the table holds a newer day is loaded all the
    /// same, only to record its day's ranks in their place: a full of a chart table, with ranks recorded (the
    /// caller checks the day is older than the table's last full, not the same day again). The table keeps its
    /// newer day.
    package static func recordsOnly(table: String, mode: ExportMode?, options: ImportOptions) -> Bool {
        options.recordsRankHistory && mode != .incremental && tables.contains(table)
    }
}
