import EPFSQLite

/// One row of an app chart table as `ChartAppLists` keeps it: where the app ranks, its rank and the row's export
/// date (ms since 1970 UTC).
package struct ChartAppEntry: Hashable, Sendable {
    package let storefrontID: Int64
    package let genreID: Int64
    package let rank: Int64
    package let exportDate: Int64

    package init(storefrontID: Int64, genreID: Int64, rank: Int64, exportDate: Int64) {
        self.storefrontID = storefrontID
        self.genreID = genreID
        self.rank = rank
        self.exportDate = exportDate
    }
}

/// Today's app chart tables read by app: every row of each table (v3's `application_popularity_per_genre`, v5's
/// four) gathered by `application_id` when a full load writes the table, so an app's ranks in every storefront and
/// genre read one short list instead of scanning millions of rows. The tables' primary key starts with the
/// storefront; an index on the app would do the same but cost about 40 % of the popularity import (a sort of every
/// row), where gathering the rows the load writes anyway costs a few percent (docs/performance.md).
///
/// Tables (SQLite; absent from databases no full load of a chart table wrote since):
/// - `listsTable` (`id`, `list`): a table's apps in id order, cut into lists of at most `listBytes` bytes (an app
///   with more rows makes a list of its own), each keyed by `key(table:firstID:)`: the table's chart code and the
///   list's first app in one integer, so a list is a row of the rowid tree, stored whole in its page (a blob
///   beyond a quarter page in a WITHOUT ROWID tree spills to an overflow page of its own);
/// - `stampsTable` (`table_name`, `ledger_id`, `entries`): the `epf_ledger` entry of the load the lists were made
///   from, and how many rows they hold. A later applied entry of the table (an incremental, a load by an epf
///   that does not make lists) means the lists are not the table's rows: readers then read the table.
///
/// A list, every number an unsigned LEB128 varint, `zigzag` for signed values: for each app in id order,
/// `zigzag(id - previous id)` (the first against `first_id`), the number of rows `n`, then `n` rows of
/// `zigzag(storefront - previous storefront)`, `zigzag(genre)`, `zigzag(rank)` and
/// `zigzag(export date - previous export date)` (the previous values run across the list, from 0).
/// Rows with a NULL storefront, genre, rank, app or export date are not listed (a reading of the table skips them).
package struct ChartAppLists {
    package static let listsTable = "epf_chart_app_lists"
    package static let stampsTable = "epf_chart_app_stamps"
    /// The size a list stays under (unless one app is larger): it fits a 4 KB page whole, decodes in microseconds.
    package static let listBytes = 3500
    /// Bits of a list's key below the chart code: app ids are below 2^40.
    package static let idBits: Int64 = 40

    /// The tables, created by the first full load of a chart table.
    package static let schema = """
        CREATE TABLE IF NOT EXISTS \(listsTable) (id INTEGER PRIMARY KEY, list BLOB NOT NULL);
        CREATE TABLE IF NOT EXISTS \(stampsTable) (
            table_name TEXT PRIMARY KEY, ledger_id INTEGER NOT NULL, entries INTEGER NOT NULL
        );
        """

    /// A row when the lists of table `?1` are those of the table as it is now: no applied ledger entry of the table
    /// after the one they were made from (a search of the ledger's newest rows only).
    package static let currentSQL = """
        SELECT 1 FROM \(stampsTable) s WHERE s.table_name = ?1 AND NOT EXISTS (
            SELECT 1 FROM epf_ledger l WHERE l.id > s.ledger_id AND l.table_name = ?1 AND l.outcome = 'applied')
        """
    /// The list that holds the app of key `?2` if any list does: the last one of the table (keys from `?1`)
    /// starting at or before it.
    package static let listSQL = """
        SELECT id, list FROM \(listsTable) WHERE id BETWEEN ?1 AND ?2 ORDER BY id DESC LIMIT 1
        """

    /// The key of `table`'s list whose first app is `firstID` (0 ..< 2^40); nil for a table that is not an app
    /// chart.
    package static func key(table: String, firstID: Int64) -> Int64? {
        guard let chart = RankChart(table: table), chart.ranksApps, (0..<1 << idBits).contains(firstID) else {
            return nil
        }
        return chart.code << idBits | firstID
    }

    private let connection: SQLiteConnection

    /// A reader of the lists on `connection`; nil when the database has none (`tables` are its tables).
    package init?(_ connection: SQLiteConnection, tables: Set<String>) {
        guard tables.contains(Self.listsTable), tables.contains(Self.stampsTable), tables.contains("epf_ledger")
        else { return nil }
        self.connection = connection
    }

    /// The rows of `table` whose app is `id`, in the order the load met them; nil when the lists are not those of
    /// the table as it is now (never made, or an applied load of the table came after them). Throws
    /// `RankListCodec.Malformed` for a list that does not decode, and SQLite's errors.
    package func entries(of id: Int64, table: String) throws -> [ChartAppEntry]? {
        let current = try connection.prepare(Self.currentSQL)
        try current.bind([.text(table)])
        guard try current.step() else { return nil }
        guard let low = Self.key(table: table, firstID: 0), let high = Self.key(table: table, firstID: id) else {
            return []
        }
        let list = try connection.prepare(Self.listSQL)
        try list.bind([.integer(low), .integer(high)])
        guard try list.step(), let key = list.int64(at: 0) else { return [] }
        return try list.withBlob(at: 1) { bytes throws(RankListCodec.Malformed) in
            try Self.entries(of: id, in: bytes, firstID: key - low)
        } ?? []
    }

    /// The rows of `id` in one list whose first app is `firstID`; [] when the list does not hold `id`.
    package static func entries(of id: Int64, in bytes: UnsafeRawBufferPointer, firstID: Int64)
        throws(RankListCodec.Malformed) -> [ChartAppEntry] {
        var reader = RankListCodec.Reader(bytes: bytes)
        var app = firstID
        var storefront: Int64 = 0
        var date: Int64 = 0
        while reader.offset < bytes.count {
            app &+= RankListCodec.unzigzag(try reader.varint())
            let count = try reader.count()
            guard app <= id else { return [] }
            var found: [ChartAppEntry] = []
            if app == id { found.reserveCapacity(count) }
            for _ in 0..<count {
                storefront &+= RankListCodec.unzigzag(try reader.varint())
                let genre = RankListCodec.unzigzag(try reader.varint())
                let rank = RankListCodec.unzigzag(try reader.varint())
                date &+= RankListCodec.unzigzag(try reader.varint())
                if app == id {
                    found.append(ChartAppEntry(storefrontID: storefront, genreID: genre, rank: rank, exportDate: date))
                }
            }
            if app == id { return found }
        }
        return []
    }

    /// Cuts apps, met in increasing id order, into lists: `startApp`, its rows (`appendRow`), `endApp`, ...
    package struct Encoder {
        /// The lists made so far: each one's first app and bytes.
        package private(set) var lists: [(firstID: Int64, bytes: [UInt8])] = []
        private var bytes: [UInt8] = []
        private var firstID: Int64 = 0
        private var previousID: Int64 = 0
        private var storefront: Int64 = 0
        private var date: Int64 = 0
        /// The app being added: where its bytes start, its id and rows (to code it again at the head of a list).
        private var appStart = 0
        private var appID: Int64 = 0
        private var appRows: [ChartAppEntry] = []

        package init() {}

        /// Starts app `id` (above every id before) of `count` rows.
        package mutating func startApp(id: Int64, count: Int) {
            appStart = bytes.count
            appID = id
            appRows.removeAll(keepingCapacity: true)
            if bytes.isEmpty {
                firstID = id
                previousID = id
                storefront = 0
                date = 0
                bytes.reserveCapacity(ChartAppLists.listBytes + 256)
            }
            RankListCodec.appendVarint(RankListCodec.zigzag(id &- previousID), to: &bytes)
            RankListCodec.appendVarint(UInt64(count), to: &bytes)
            previousID = id
        }

        /// A row of the app started last (as many as it said).
        package mutating func appendRow(_ entry: ChartAppEntry) {
            appRows.append(entry)
            RankListCodec.appendVarint(RankListCodec.zigzag(entry.storefrontID &- storefront), to: &bytes)
            RankListCodec.appendVarint(RankListCodec.zigzag(entry.genreID), to: &bytes)
            RankListCodec.appendVarint(RankListCodec.zigzag(entry.rank), to: &bytes)
            RankListCodec.appendVarint(RankListCodec.zigzag(entry.exportDate &- date), to: &bytes)
            storefront = entry.storefrontID
            date = entry.exportDate
        }

        /// Ends the app started last: an app that takes its list past `listBytes` starts the next one, coded again
        /// from there (an app larger than that alone is a list of its own).
        package mutating func endApp() {
            guard bytes.count > ChartAppLists.listBytes else { return }
            if appStart > 0 {
                bytes.removeSubrange(appStart...)
                flush()
                let rows = appRows
                startApp(id: appID, count: rows.count)
                for row in rows { appendRow(row) }
            }
            if bytes.count > ChartAppLists.listBytes { flush() }
        }

        /// Ends the last list; returns every list.
        package mutating func finish() -> [(firstID: Int64, bytes: [UInt8])] {
            flush()
            defer { lists = [] }
            return lists
        }

        private mutating func flush() {
            guard !bytes.isEmpty else { return }
            lists.append((firstID, bytes))
            bytes = []
        }
    }
}
