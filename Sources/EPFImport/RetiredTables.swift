import EPFFormat
import JSONText

/// A table the newest full export of its feed did not contain: Apple stopped shipping it (music left EPF on
/// 2025-03-17: `song`, `collection`, `song_popularity_per_genre`, ...), or a chart had no file that day. The
/// database keeps it as of its last full; no import can bring it up to date, so it is not behind
/// (`MixedExports`) and `epf status` says it is no longer shipped instead.
package struct RetiredTable: Sendable, Equatable {
    package var table: String
    package var feed: String?
    /// `YYYYMMDD` of the last full the table was loaded from: its data is kept as of it.
    package var lastFull: String
    /// `YYYYMMDD` of the newest full of its feed, which did not contain it.
    package var notIn: String

    /// The entry of `retired` in `epf status --json` and `/v1/status`.
    package var json: JSONValue {
        .object([("table", .string(table)), ("feed", feed.map { .string($0) } ?? .null),
                 ("keptAsOf", .string(EPFValues.isoTimestamp(feedDay: lastFull))),
                 ("notInFull", .string(EPFValues.isoTimestamp(feedDay: notIn)))])
    }
}

/// Which tables a full export contained, and which tables that makes retired.
///
/// An import that reads a whole full export of a feed (a feed directory, a mirror, a feed's archive: every file of
/// it listed, see `ExportListing`) records the names of its tables in the store's settings
/// (`exportTablesSetting`). A table is retired when the newest full of its feed the database applied (the newest
/// last full of any table of that feed) is newer than its own last full and its recorded listing lacks it; a full
/// whose listing was never recorded (its files imported one by one) retires nothing.
package enum RetiredTables {
    /// The settings row holding the tables of the full export of `feed` dated `date` (`YYYYMMDD`), comma-separated.
    package static func exportTablesSetting(feed: String, date: String) -> String {
        "export_tables:\(feed)/\(date)"
    }

    /// The retired tables among `fulls` (each table's last full, `MixedExports.lastFullsSQL`), by name; `listing`
    /// reads a full export's recorded tables (nil when none were recorded).
    package static func find(fulls: [MixedExports.TableFull],
                             listing: (_ feed: String, _ date: String) throws -> Set<String>?) rethrows
        -> [RetiredTable] {
        var newest: [String: String] = [:]
        for full in fulls where !full.date.isEmpty {
            guard let feed = full.feed else { continue }
            newest[feed] = max(newest[feed] ?? full.date, full.date)
        }
        var listings: [String: Set<String>?] = [:]
        var retired: [RetiredTable] = []
        for full in fulls {
            guard let feed = full.feed, let date = newest[feed], date > full.date else { continue }
            if listings[feed] == nil { listings[feed] = .some(try listing(feed, date)) }
            guard let tables = listings[feed] ?? nil, !tables.contains(full.table) else { continue }
            retired.append(RetiredTable(table: full.table, feed: feed, lastFull: full.date, notIn: date))
        }
        return retired.sorted { $0.table < $1.table }
    }

    /// A recorded listing as a set of table names.
    package static func tables(fromSetting value: String?) -> Set<String>? {
        value.map { Set($0.split(separator: ",").map(String.init)) }
    }
}
