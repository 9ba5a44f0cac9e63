import EPFFormat
import JSONText

/// A table file (or a whole input file) an import did not apply, and that nothing applied since has made up for:
/// what `epf status`, `/v1/status` and `/healthz` report as failed, and why the data is older than the newest
/// export. Found from the ledger (`ImportFailures.open`).
package struct ImportFailure: Sendable, Equatable {
    /// The table, nil when the file failed before a table could be named (a whole archive whose `.md5` does not
    /// match, a file that is not EPF).
    package var table: String?
    package var location: String
    package var feed: String?
    /// `YYYYMMDD` of the export the file belongs to, when known.
    package var day: String?
    /// FULL or INCREMENTAL, when known.
    package var mode: String?
    /// When the import failed (ISO 8601 UTC).
    package var when: String?
    package var reason: String

    package init(table: String?, location: String, feed: String?, day: String?, mode: String?, when: String?,
                 reason: String) {
        self.table = table
        self.location = location
        self.feed = feed
        self.day = day
        self.mode = mode
        self.when = when
        self.reason = reason
    }

    /// The `failures` entry of `epf status --json` and `/v1/status`.
    package var json: JSONValue {
        .object([
            ("table", table.map { .string($0) } ?? .null),
            ("location", .string(location)),
            ("feed", feed.map { .string($0) } ?? .null),
            ("export", day.map { .string(EPFValues.isoTimestamp(feedDay: $0)) } ?? .null),
            ("mode", mode.map { .string($0) } ?? .null),
            ("failed", when.map { .string($0) } ?? .null),
            ("reason", .string(reason)),
        ])
    }

    /// True for a file refused for the order of exports (`ExportOrderRule`): the file is fine, another export must
    /// come first.
    package var isOrderRefusal: Bool { reason.hasPrefix(ImportFailures.orderRefusalPrefix) }

    /// True for a file that failed while the database was written (no room, an I/O error of the disk), not for
    /// anything in the file: the reason is a store's write error (SQLite's and PostgreSQL's words for them).
    package var isStorageFailure: Bool {
        let text = reason.lowercased()
        return ["disk i/o error", "database or disk is full", "no space left", "could not extend file",
                "could not write", "disk quota"].contains { text.contains($0) }
    }

    /// The line of `epf status`.
    package var line: String {
        let export = [feed, day.map(ExportOrderRule.iso), mode].compactMap { $0 }.joined(separator: " ")
        return "  \(table ?? location)\(export.isEmpty ? "" : " (\(export))")\(when.map { ", \($0)" } ?? ""): "
            + reason
    }
}

/// The failures the ledger shows that nothing applied since made up for.
package enum ImportFailures {
    /// How the reason of a file refused by `ExportOrderRule` begins.
    package static let orderRefusalPrefix = "refused: "

    /// One ledger row, as read for this.
    package struct Entry: Sendable {
        package var id: Int64
        package var table: String
        package var location: String
        package var source: String
        package var feed: String?
        package var day: String?
        package var mode: String?
        package var applied: Bool
        package var finished: String?
        package var message: String?
        /// A chart table's older day whose ranks were recorded, the table keeping its newer day
        /// (`RankRecording.recordsOnly`): it makes up only for a failure of the same day of the same table.
        package var ranksOnly: Bool

        package init(id: Int64, table: String, location: String, source: String, feed: String?, feedDate: String?,
                     exportDate: Int64?, mode: String?, outcome: String, finished: String?, message: String?) {
            self.id = id
            self.table = table
            self.location = location
            self.source = source
            self.feed = feed
            self.day = MixedExports.fullDate(feedDate: feedDate, exportDate: exportDate)
            self.mode = mode
            // An incremental a later full superseded was applied all the same: what it made up for stays made up.
            // A FULL marked superseded is a chart table's older day loaded only for its ranks: not applied.
            self.applied = outcome == "applied" || outcome == "superseded" && mode != ExportMode.full.rawValue
            self.ranksOnly = outcome == "superseded" && mode == ExportMode.full.rawValue
            self.finished = finished
            self.message = message
        }
    }

    /// The SQL (SQLite and PostgreSQL alike) of the ledger rows from the first failure on, in order: id,
    /// table_name, location, source, feed, feed_date, export_date, mode, outcome, finished, message.
    package static func ledgerSQL(ledger: String) -> String {
        """
        SELECT id, table_name, location, source, feed, feed_date, export_date, mode, outcome, finished, message
        FROM \(ledger)
        WHERE id >= coalesce((SELECT min(id) FROM \(ledger) WHERE outcome = 'failed'), 1 + (SELECT max(id) FROM \(ledger)))
        ORDER BY id
        """
    }

    /// The failures not made up for, oldest first. A failed file is made up for by a later applied file of the same
    /// table (or, for a file that failed before a table was named, of the same feed, else the same input) that is
    /// of the same export, or a full export at least as new; or by any table of a newer full export of its feed,
    /// which replaces the feed whole (a table the newer full no longer ships, or a stray file, is not waited for).
    /// A chart table's older day loaded for its ranks only makes up for a failure of that day only.
    package static func open(_ entries: [Entry]) -> [ImportFailure] {
        var open: [ImportFailure] = []
        for (index, failure) in entries.enumerated() where !failure.applied && !failure.ranksOnly {
            let madeUp = entries[(index + 1)...].contains { later in
                if later.ranksOnly {
                    return later.day == failure.day
                        && (failure.table.isEmpty ? later.feed == failure.feed : later.table == failure.table)
                }
                guard later.applied else { return false }
                if later.mode == ExportMode.full.rawValue, let feed = failure.feed, later.feed == feed,
                   let day = failure.day, let laterDay = later.day, laterDay > day {
                    return true
                }
                let same = failure.table.isEmpty
                    ? (failure.feed.map { $0 == later.feed } ?? (later.source == failure.source))
                    : later.table == failure.table
                guard same else { return false }
                guard let day = failure.day, let laterDay = later.day else { return true }
                if later.mode == ExportMode.full.rawValue { return laterDay >= day }
                return laterDay == day && failure.mode != ExportMode.full.rawValue
            }
            guard !madeUp else { continue }
            // One entry per file: a retried failure replaces the earlier one, also from a moved mirror.
            let name = SourceIdentity.exportName(of: failure.location) ?? failure.location
            open.removeAll { entry in
                entry.table == (failure.table.isEmpty ? nil : failure.table)
                    && (SourceIdentity.exportName(of: entry.location) ?? entry.location) == name
            }
            open.append(ImportFailure(table: failure.table.isEmpty ? nil : failure.table, location: failure.location,
                                      feed: failure.feed, day: failure.day, mode: failure.mode,
                                      when: failure.finished, reason: failure.message ?? "failed"))
        }
        return open
    }

    /// The SQL (SQLite and PostgreSQL alike) of the feed each table's last applied file came from: table_name, feed.
    package static func lastFeedsSQL(ledger: String) -> String {
        """
        SELECT table_name, feed FROM \(ledger)
        WHERE id IN (SELECT max(id) FROM \(ledger) WHERE outcome = 'applied' GROUP BY table_name)
        """
    }

    /// The tables a failure holds back: its table, or for a file that failed before a table was named, the tables
    /// whose last applied file came from the same feed (`lastFeeds`, from `lastFeedsSQL`).
    static func affectedTables(_ failure: ImportFailure, lastFeeds: [String: String?]) -> Set<String> {
        if let table = failure.table { return [table] }
        guard let feed = failure.feed else { return [] }
        return Set(lastFeeds.compactMap { $0.value == feed ? $0.key : nil })
    }

    /// Midnight UTC of `YYYYMMDD`, in milliseconds since 1970; nil for anything else.
    package static func midnight(_ day: String) -> Int64? {
        guard day.count == 8, let number = Int(day) else { return nil }
        let year = number / 10000
        let month = (number / 100) % 100
        let dayOfMonth = number % 100
        guard (1...12).contains(month), (1...31).contains(dayOfMonth) else { return nil }
        // Days from civil (Howard Hinnant's algorithm).
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + dayOfMonth - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Int64(days) * 86_400_000
    }
}
