/// The changes table, `epf_changes`: which catalogue ids left the store, appeared or were updated, by export.
///
/// EPF never says an item left the store; it is only missing from the next full export. So when a full export
/// replaces a catalogue table (`application`, `collection`, `song`, `video`, `artist`), the ids of the old table
/// missing from the new one are recorded as `removed` and those new to it as `added`; an incremental records each
/// id it inserted (`added`) or updated (`updated`). The rows are written in the same transaction that makes the
/// data visible, so readers see the changes exactly when they see the data.
///
/// The first load of a table (into a database that does not have it yet) is the baseline, not a change: it
/// records nothing. A row is recorded once per (id, kind, export date, change): importing the same export again
/// adds nothing.
///
/// The names here are what readers (the query engine, the export) need; the store writes the table
/// (EPFStore's `ChangeLog` extension and `ChangeTracking`).
package enum ChangeLog {
    /// The table's name.
    package static let table = "epf_changes"

    /// The catalogue tables whose ids are tracked, with the kind word each has in the changes table.
    package static let kinds: [String: String] = [
        "application": "app", "collection": "collection", "song": "song", "video": "video", "artist": "artist",
    ]

    /// The kind words, in the order the catalogue tables are looked up.
    package static let kindWords = ["app", "collection", "song", "video", "artist"]
}
