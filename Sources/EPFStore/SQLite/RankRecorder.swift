import EPFFormat
import EPFImport
import EPFSchema
import EPFSQLite

/// The rank history of one SQLite table load (`RankHistoryRead`), through the load's lifecycle (`LoadRecorder`):
/// a full load of a popularity table is the whole day, recorded inside the transaction that swaps the new table
/// into place (`RankDayRecorder`), so a refused or interrupted load records nothing. The day comes from the rows as
/// the load writes them (`RankRows`), or from the new table when those are not what it holds (`stagingChanged`).
/// Nil for other tables, incremental loads (a day's popularity ships whole) and imports that do not record ranks.
final class RankRecorder: LoadRecorder {
    private let chart: RankChart
    private let staging: String
    private let feedDate: String?
    /// The rows written, gathered; nil when the day is read from the staging table.
    private var rows: RankRows?

    /// A recorder for the load of `table` in `mode` into `staging`, its records of `schema`'s columns (the first
    /// `fileColumns` in the file); nil when there is nothing to record.
    init?(table: String, mode: ExportMode, staging: String, feedDate: String?, enabled: Bool, schema: TableSchema,
          fileColumns: Int) {
        guard enabled, mode == .full, let chart = RankChart(table: table) else { return nil }
        self.chart = chart
        self.staging = staging
        self.feedDate = feedDate
        rows = RankRows(chart: chart, schema: schema, fileColumns: fileColumns)
    }

    /// A record the load writes to the staging table, as `RowBinder` bound it.
    @inline(__always)
    func rowAccepted(_ record: EPFRecord) {
        rows?.add(record)
    }

    /// The staging table holds rows the load did not write in this process (a resumed load) or lost some it
    /// wrote (duplicate keys removed): the day is read from the table.
    func stagingChanged() {
        rows = nil
    }

    func began(_ connection: SQLiteConnection) throws {}

    @inline(__always)
    func rowWritten(_ connection: SQLiteConnection, exportDate: Int64?) throws {}

    var commitsPartEnds: Bool { false }

    func willPublish(_ connection: SQLiteConnection) throws {}

    /// Records the day (the rows' export date, else the feed's date) from the rows written, or from the staging
    /// table before it is renamed.
    func publish(_ connection: SQLiteConnection, exportDate: Int64?) throws {
        let day = ChangeLog.exportDate(exportDate, feedDate: feedDate)
        let recorder = try RankDayRecorder(connection, chart: chart, day: day)
        if var rows {
            self.rows = nil
            try recorder.record(rows.finish())
        } else {
            try recorder.record(from: staging)
        }
    }

    func abort(_ connection: SQLiteConnection) {}
}
