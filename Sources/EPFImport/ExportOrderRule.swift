import EPFFormat

/// One export applied to a table, as the ledger remembers it: its day and whether it was a full export.
package struct AppliedExport: Equatable, Sendable {
    /// `YYYYMMDD`: the feed date of its directory, else the UTC day of its `export_date`.
    package var day: String
    package var full: Bool

    package init(day: String, full: Bool) {
        self.day = day
        self.full = full
    }

    /// The order of exports: by day, a full before the incremental of the same day.
    fileprivate var key: (String, Int) { (day, full ? 0 : 1) }
}

/// What an import does with one table file given what its table already holds, so that no order in which a user
/// applies exports loses data silently (docs/import.md, "Exports out of order"). The result is always either the
/// rows that applying the same exports in date order gives, or a refusal that says what to do:
///
/// - a full export replaces the table, unless it is older than an export the table already holds. A full older
///   than the table's last full (or the same full with incrementals applied after it) is *superseded*: in date
///   order it would have been replaced anyway, so it is skipped. A full older than an incremental applied after the
///   table's last full would undo that incremental: it is refused.
/// - an incremental updates a table loaded from a full. One older than the table's last full is superseded (the full
///   already holds what it held); one for a table that holds nothing is refused (an incremental alone is not the
///   table). Incrementals of any order after the full apply: a row is replaced only by a row dated the same or
///   later, so their order does not change the rows.
/// - `--force` applies the file whatever the order (the table then holds what the file says).
package enum ExportOrderRule {
    /// The decision for one table file.
    package enum Decision: Equatable, Sendable {
        case apply
        /// Already held: skipped, with the reason (the import succeeds).
        case superseded(String)
        /// Not applied: the reason and what to do (the import fails).
        case refused(String)
    }

    /// Decides for a file of `table` in `mode` dated `day` (`YYYYMMDD`; nil when the path names no date: then
    /// only the incremental-without-full rule applies), given the table's applied exports since its last full
    /// (`history`, oldest first; the last full first when there is one).
    package static func decide(table: String, mode: ExportMode?, day: String?, history: [AppliedExport],
                               force: Bool) -> Decision {
        guard !force, let mode else { return .apply }
        let lastFull = history.last(where: \.full)
        let newest = history.max { $0.key < $1.key }
        switch mode {
        case .incremental:
            if history.isEmpty {
                return .refused("an incremental export updates a table loaded from a full export, and \(table) "
                                + "holds none: import a full export of \(table) first, then this incremental "
                                + "(or --force to create the table from the incremental alone)")
            }
            if let day, let lastFull, day < lastFull.day {
                return .superseded("superseded: the table holds the full export of \(Self.iso(lastFull.day)), "
                                   + "newer than this incremental of \(Self.iso(day))")
            }
            return .apply
        case .full:
            guard let day, let newest else { return .apply }
            let key = (day, 0)
            if key >= newest.key { return .apply }
            if let lastFull, day <= lastFull.day {
                let since = newest.full ? "" : " and the incrementals after it (newest \(Self.iso(newest.day)))"
                let what = day == lastFull.day ? "already holds this full export" : "holds the newer full export of "
                    + Self.iso(lastFull.day)
                return .superseded("superseded: the table \(what)\(since)")
            }
            return .refused("this full export of \(Self.iso(day)) is older than the incremental of "
                            + "\(Self.iso(newest.day)) that \(table) already holds: applying it now would undo that "
                            + "incremental. Apply exports in date order: this full, then every incremental after it, "
                            + "all with --force (epf import FULL INCREMENTAL... --force)")
        }
    }

    /// `20260105` as `2026-01-05`.
    package static func iso(_ day: String) -> String {
        guard day.count == 8 else { return day }
        let characters = Array(day)
        return "\(String(characters[0..<4]))-\(String(characters[4..<6]))-\(String(characters[6..<8]))"
    }

    /// The SQL (SQLite and PostgreSQL alike) of a table's applied exports since its last full (all of them when
    /// it has none), oldest first, from a ledger named `ledger`: feed_date, export_date, mode. The table name is
    /// the first parameter (`?1` in SQLite, `$1` in PostgreSQL: `parameter`).
    package static func historySQL(ledger: String, parameter: String) -> String {
        """
        SELECT feed_date, export_date, mode FROM \(ledger)
        WHERE table_name = \(parameter) AND outcome = 'applied'
          AND id >= coalesce((SELECT max(id) FROM \(ledger) WHERE table_name = \(parameter) AND outcome = 'applied'
                              AND mode = 'FULL'), 0)
        ORDER BY id
        """
    }

    /// A ledger row as an applied export; nil when it has neither a feed date nor an export date.
    package static func entry(feedDate: String?, exportDate: Int64?, mode: String?) -> AppliedExport? {
        guard let day = MixedExports.fullDate(feedDate: feedDate, exportDate: exportDate) else { return nil }
        return AppliedExport(day: day, full: mode == ExportMode.full.rawValue)
    }
}
