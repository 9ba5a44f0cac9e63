import EPFSchema
import EPFSQLite

/// SQLite's tables of the rank history (see `RankHistoryRead` for what they hold), made by the first load that
/// records ranks, in its transaction.
///
/// Chart-major: one row per (chart table, storefront, genre, day) holding the day's ids in rank order
/// (`RankListCodec`), so a chart on a date is the rows of its chain (the day's back to its keyframe's, at most two
/// weeks of a chart's rows, side by side), and an item's history reads, for each chart the item index names
/// (`RankItemIndex`), the rows of the days asked and of their chains. `WITHOUT ROWID` tables, clustered on their
/// keys: a chart's days sit together, a day's index rows together. The lists of the days since a chart table's
/// newest keyframe day wait in a table of their own (`newLists`): a day adds a row to every chart, and in `lists`,
/// where a chart's days sit together, that dirtied every page holding a chart's newest row (984 of 1,057 pages on
/// the 45th generated day), where in `newLists` it dirties the few pages of the days since the keyframe.
/// Databases recorded before the item index also hold spans (`RankHistoryRead.spansTable`), kept for their days.
enum RankHistoryLayout {
    static let days = RankHistoryRead.daysTable
    static let lists = RankHistoryRead.listsTable
    static let newLists = RankHistoryRead.newListsTable
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
        \(RankItemIndex.schema)
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

    /// Makes the tables where they are missing.
    static func prepare(_ connection: SQLiteConnection) throws {
        try connection.execute(schema)
    }
}
