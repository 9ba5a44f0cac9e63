import EPFFormat
import EPFImport
import EPFSchema
import EPFSQLite

/// The rank history of one SQLite table load (`RankHistoryRead`), through the load's lifecycle (`LoadRecorder`):
/// a full load of a popularity table is the whole day, recorded from the new table inside the transaction that
/// swaps it into place (`RankDayRecorder`), so a refused or interrupted load records nothing. Nil for other
/// tables, incremental loads (a day's popularity ships whole) and imports that do not record ranks.
final class RankRecorder: LoadRecorder {
    private let chart: RankChart
    private let staging: String
    private let feedDate: String?

    init?(table: String, mode: ExportMode, staging: String, feedDate: String?, enabled: Bool) {
        guard enabled, mode == .full, let chart = RankChart(table: table) else { return nil }
        self.chart = chart
        self.staging = staging
        self.feedDate = feedDate
    }

    func began(_ connection: SQLiteConnection) throws {}

    @inline(__always)
    func rowWritten(_ connection: SQLiteConnection, exportDate: Int64?) throws {}

    var commitsPartEnds: Bool { false }

    func willPublish(_ connection: SQLiteConnection) throws {}

    /// Records the day (the rows' export date, else the feed's date) from the staging table, before it is renamed.
    func publish(_ connection: SQLiteConnection, exportDate: Int64?) throws {
        let day = ChangeLog.exportDate(exportDate, feedDate: feedDate)
        try RankDayRecorder(connection, chart: chart, day: day).record(from: staging)
    }

    func abort(_ connection: SQLiteConnection) {}
}
