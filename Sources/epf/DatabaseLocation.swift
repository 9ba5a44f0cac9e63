import EPFPostgres
import Foundation

/// What is wrong with the place a `--db` path points to, said before SQLite or `statvfs` would say it less
/// clearly ("cannot read the free space (statvfs)", "unable to open database file").
enum DatabaseLocation {
    /// The directory that would hold the database file at `path` when it does not exist, else nil (also for a
    /// PostgreSQL URL, and for a bare file name, whose directory is the current one).
    static func missingDirectory(of path: String) -> String? {
        guard !PostgresURL.isPostgres(path) else { return nil }
        let directory = (path as NSString).deletingLastPathComponent
        guard !directory.isEmpty else { return nil }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue {
            return nil
        }
        return directory
    }

    /// Refuses a database an import would create in a directory that does not exist (exit 73, as for any
    /// database that cannot be created): the message names the directory and how to make it.
    static func requireDirectory(forImportInto path: String) throws {
        guard let directory = missingDirectory(of: path) else { return }
        throw CommandFailure(.cannotCreate, "\(path): cannot create the database: the directory '\(directory)' "
                                 + "does not exist (or is not a directory). Create it (mkdir -p '\(directory)') or "
                                 + "give --db a path in an existing directory. Nothing was changed.")
    }

    /// The reason a reader found no database at `path`, said about the directory when that is what is missing:
    /// nil when the directory exists.
    static func readerReason(for path: String) -> String? {
        missingDirectory(of: path).map { "the directory '\($0)' does not exist" }
    }
}
