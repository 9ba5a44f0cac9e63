import EPFFormat
import Foundation
import JSONText

/// A database whose tables come from more than one full export: an import that stopped halfway (a full disk,
/// a refused table, `--only`) replaced some tables and left the others from an earlier full.
///
/// Found from the ledger: for every table, the newest full export it was loaded from (the feed date of its
/// directory, `itunes20260112`, or else the day of its `export_date`) and the directory it was read from. The
/// newest full is the one with the latest date (of two with the same date, the one applied last); tables whose
/// last full is another are behind. Incrementals do not count: they update a full, they do not replace it. Nor does
/// a chart (`*_popularity_per_genre`) newer than that full: Apple ships the charts as a FULL export every day, the
/// weekly full's day and each incremental's alike, so it is that day's chart, not a mix.
package struct MixedExports: Sendable, Equatable {
    /// One table's last full export.
    package struct TableFull: Sendable, Equatable {
        package var table: String
        package var feed: String?
        /// `YYYYMMDD`.
        package var date: String
        /// The directory holding the export's feeds (`/srv/mirror` for `/srv/mirror/itunes20260105/...`): two
        /// exports of the same date read from different directories are different exports.
        package var root: String
        /// The ledger row's id: of two exports of the same date, the one applied last is the newer.
        package var order: Int64

        package init(table: String, feed: String?, date: String, root: String, order: Int64) {
            self.table = table
            self.feed = feed
            self.date = date
            self.root = root
            self.order = order
        }

        /// The ledger row of a table's last full: its source file, feed, feed date, export date and id.
        package init(table: String, source: String, feed: String?, feedDate: String?, exportDate: Int64?, order: Int64) {
            self.init(table: table, feed: feed, date: MixedExports.fullDate(feedDate: feedDate, exportDate: exportDate)
                      ?? "", root: MixedExports.exportRoot(of: source), order: order)
        }
    }

    /// The newest full export (`YYYYMMDD`) any table was loaded from.
    package var newestFull: String
    /// The directory it was read from.
    var newestRoot: String
    /// Tables loaded from that full.
    package var current: [String]
    /// Tables whose last full is another (older, or of the same date from another directory, applied before).
    package var behind: [TableFull]

    /// Whether a table is one Apple ships as a FULL snapshot every day (the popularity feed's charts).
    static func isDailySnapshot(_ table: String) -> Bool { table.hasSuffix("_popularity_per_genre") }

    /// What to run about it, in words: a sync of the directory the newest full was read from applies it (the
    /// tables applied from it already are skipped); a sync of another mirror applies nothing until that mirror
    /// holds the full (or a newer one), so the sentence names the directory, not "the mirror".
    package var nextSync: String {
        "epf sync \(newestRoot) applies the \(behind.count) tables behind from the full export of "
            + "\(Self.day(newestFull)) there; a sync of another mirror, only once it holds that full or a newer one"
    }

    /// The finding from each table's last full, or nil when all tables come from the same full export.
    /// The key of a full is the feed date, else the day of the export date (ms since 1970, UTC).
    /// A chart (`isDailySnapshot`) newer than the newest full of the other tables is the day's chart, not behind.
    package static func find(_ fulls: [TableFull]) -> MixedExports? {
        let catalogue = fulls.filter { !isDailySnapshot($0.table) }
        guard var newest = catalogue.first else { return nil }
        for entry in catalogue where (entry.date, entry.order) > (newest.date, newest.order) { newest = entry }
        var current: [String] = []
        var behind: [TableFull] = []
        for entry in fulls {
            if entry.date == newest.date && entry.root == newest.root
                || isDailySnapshot(entry.table) && entry.date > newest.date {
                current.append(entry.table)
            } else if !replaced(entry, in: fulls) {
                behind.append(entry)
            }
        }
        guard !behind.isEmpty else { return nil }
        behind.sort { left, right in left.date != right.date ? left.date < right.date : left.table < right.table }
        return MixedExports(newestFull: newest.date, newestRoot: newest.root, current: current.sorted(),
                            behind: behind)
    }

    /// Whether a later layout of the feed replaced `entry`'s table with others (`EPFTable.successors(of:)`) and one
    /// of them has a newer full: the old table is then as it last was, not behind.
    static func replaced(_ entry: TableFull, in fulls: [TableFull]) -> Bool {
        let successors = EPFTable.successors(of: entry.table)
        return fulls.contains { successors.contains($0.table) && ($0.date, $0.order) > (entry.date, entry.order) }
    }

    /// The directory holding the feeds of the export a source file belongs to: the parent of its `<feed>YYYYMMDD`
    /// component (`/m/itunes20260105/application.tbz` and `/m/itunes20260105.tbz` are both from `/m`), else the
    /// file's own directory.
    static func exportRoot(of source: String) -> String {
        let components = source.split(separator: "/", omittingEmptySubsequences: false)
        let prefix = components.dropLast().lastIndex { FeedInput.feedAndDate(in: String($0)) != nil }
            ?? components.count - 1
        let root = components[..<prefix].joined(separator: "/")
        return root.isEmpty ? (source.hasPrefix("/") ? "/" : ".") : root
    }

    /// The key of a full export: its feed date, or the UTC day of its export date.
    package static func fullDate(feedDate: String?, exportDate: Int64?) -> String? {
        if let feedDate, !feedDate.isEmpty { return feedDate }
        guard let exportDate else { return nil }
        return String(EPFValues.isoTimestamp(milliseconds: exportDate).prefix(10).filter { $0 != "-" })
    }

    /// `20260112` as `2026-01-12`.
    static func day(_ date: String) -> String {
        guard date.count == 8 else { return date }
        let characters = Array(date)
        return "\(String(characters[0..<4]))-\(String(characters[4..<6]))-\(String(characters[6..<8]))"
    }

    /// The warning lines of `epf status`.
    package var lines: [String] {
        var lines = ["warning: the tables come from more than one full export: \(current.count) from the full of "
                     + "\(Self.day(newestFull)) in \(newestRoot), \(behind.count) behind:"]
        for entry in behind {
            lines.append("  \(entry.table) (full of \(Self.day(entry.date)) from \(entry.root))")
        }
        lines.append("Next: " + nextSync + ".")
        return lines
    }

    /// The `mixedExports` object of `epf status --json` and `/v1/status`.
    package var json: JSONValue {
        .object([
            ("newestFull", .string(EPFValues.isoTimestamp(feedDay: newestFull))),
            ("newestFrom", .string(newestRoot)),
            ("current", .array(current.map { .string($0) })),
            ("behind", .array(behind.map { entry in
                .object([("table", .string(entry.table)), ("feed", entry.feed.map { .string($0) } ?? .null),
                         ("full", .string(EPFValues.isoTimestamp(feedDay: entry.date))),
                         ("from", .string(entry.root))])
            })),
            ("nextSync", .string(nextSync)),
        ])
    }
}

extension MixedExports {
    /// The SQL (SQLite and PostgreSQL alike) of each table's newest applied full in a ledger named `ledger`:
    /// table_name, source, feed, feed_date, export_date, id.
    package static func lastFullsSQL(ledger: String) -> String {
        """
        SELECT l.table_name, l.source, l.feed, l.feed_date, l.export_date, l.id FROM \(ledger) l
        WHERE l.id = (SELECT max(m.id) FROM \(ledger) m WHERE m.table_name = l.table_name
                      AND m.outcome = 'applied' AND m.mode = 'FULL')
        """
    }
}
