import EPFFormat
import EPFSchema
import EPFSQLite
import Foundation

/// Writing the changes table (see EPFSchema's `ChangeLog` for what it records and its names).
extension ChangeLog {
    /// Set `EPF_TRACK_CHANGES=0` to import without recording changes (the benchmark's baseline).
    static var enabled: Bool { ProcessInfo.processInfo.environment["EPF_TRACK_CHANGES"] != "0" }

    /// The table and its indexes (`CREATE ... IF NOT EXISTS`). `seq` orders the changes as they were recorded;
    /// the indexes serve listing by date (optionally by kind) and the lookup of one id, and make each change
    /// unique.
    package static let schema = """
        CREATE TABLE IF NOT EXISTS epf_changes (
            seq INTEGER PRIMARY KEY,
            export_date INTEGER NOT NULL,
            kind TEXT NOT NULL,
            id INTEGER NOT NULL,
            change TEXT NOT NULL
        );
        CREATE UNIQUE INDEX IF NOT EXISTS epf_changes_item ON epf_changes (id, kind, export_date, change);
        CREATE INDEX IF NOT EXISTS epf_changes_date ON epf_changes (export_date, seq);
        CREATE INDEX IF NOT EXISTS epf_changes_kind ON epf_changes (kind, export_date, seq);
        """

    /// The date changes are recorded under: the file's `export_date`, else midnight of its feed date
    /// (`itunes20261120`), else now.
    package static func exportDate(_ exportDate: Int64?, feedDate: String?) -> Int64 {
        if let exportDate { return exportDate }
        if let feedDate, feedDate.utf8.count == 8 {
            let text = "\(feedDate.prefix(4))-\(feedDate.dropFirst(4).prefix(2))-\(feedDate.suffix(2))"
            if let milliseconds = EPFValues.milliseconds(isoDate: text) { return milliseconds }
        }
        return Int64(Date().timeIntervalSince1970 * 1000)
    }
}
