import EPFSchema
import EPFSQLite

/// SQLite's tables of the rank history (see `RankHistoryRead` for what they hold), made by the first load that
/// records ranks, in its transaction.
///
/// Chart-major: one row per (chart table, storefront, genre, day) holding the day's ids in rank order
/// (`RankListCodec`), so a chart on a date is the rows of its chain (the day's back to its keyframe's, at most two
/// weeks of a chart's rows, side by side), and an item's history reads, for each chart its spans name, the rows of
/// the days asked and of their chains. `WITHOUT ROWID` tables, clustered on their
/// keys: a chart's days sit together, an item's spans together. The spans opened since a chart table's last
/// keyframe day wait in a small table of their own (`newSpans`) until the next one moves them, so a day's new
/// spans dirty its pages rather than every page of the spans (an item's spans are all over the index). So do the
/// lists of the days since a chart table's newest keyframe day (`newLists`): a day adds a row to every chart, and in
/// `lists`, where a chart's days sit together, that dirtied every page holding a chart's newest row (984 of 1,057
/// pages on the 45th generated day), where in `newLists` it dirties the few pages of the days since the keyframe.
enum RankHistoryLayout {
    static let days = RankHistoryRead.daysTable
    static let lists = RankHistoryRead.listsTable
    static let newLists = RankHistoryRead.newListsTable
    static let spans = RankHistoryRead.spansTable
    static let newSpans = RankHistoryRead.newSpansTable
    /// The index of a day's rows (the recorder reads and replaces a day's rows by it, `depths` reads it), and that
    /// of `newLists`.
    static let dayIndex = RankHistoryRead.listsDayIndex
    static let newDayIndex = RankHistoryRead.newListsDayIndex

    /// A day's lists are deltas (against the day before) while a keyframe day lies at most this long before it.
    static let keyframeSpan = RankHistoryRead.keyframeSpan

    static let schema = """
        CREATE TABLE IF NOT EXISTS \(days) (
            chart INTEGER NOT NULL,
            export_date INTEGER NOT NULL,
            keyframe INTEGER NOT NULL,
            charts INTEGER NOT NULL,
            entries INTEGER NOT NULL,
            recorded TEXT NOT NULL,
            PRIMARY KEY (chart, export_date)
        ) WITHOUT ROWID;
        \(listsSchema(lists, dayIndex: dayIndex))
        \(listsSchema(newLists, dayIndex: newDayIndex))
        \(spansSchema(spans))
        \(spansSchema(newSpans))
        """

    /// The DDL of a lists table and its day index: the settled lists and the new lists' table have the same columns
    /// and key.
    private static func listsSchema(_ name: String, dayIndex: String) -> String {
        """
        CREATE TABLE IF NOT EXISTS \(name) (
            chart INTEGER NOT NULL,
            storefront_id INTEGER NOT NULL,
            genre_id INTEGER NOT NULL,
            export_date INTEGER NOT NULL,
            base_date INTEGER,
            depth INTEGER NOT NULL,
            list BLOB NOT NULL,
            PRIMARY KEY (chart, storefront_id, genre_id, export_date)
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS \(dayIndex) ON \(name) (chart, export_date);
        """
    }

    /// The DDL of a spans table: the settled spans and the new spans' table have the same columns and key.
    private static func spansSchema(_ name: String) -> String {
        """
        CREATE TABLE IF NOT EXISTS \(name) (
            id INTEGER NOT NULL,
            chart INTEGER NOT NULL,
            storefront_id INTEGER NOT NULL,
            genre_id INTEGER NOT NULL,
            entered_day INTEGER NOT NULL,
            left_day INTEGER,
            PRIMARY KEY (id, chart, storefront_id, genre_id, entered_day)
        ) WITHOUT ROWID;
        """
    }

    /// Makes the tables where they are missing.
    static func prepare(_ connection: SQLiteConnection) throws {
        try connection.execute(schema)
    }
}
