import EPFStore
import Foundation

/// The small catalogue (`CatalogueFixture`'s SQL, in the importer's contract schema) as a database in a temporary
/// directory of its own: the one database fixture of the query and server tests.
public struct CatalogueDatabase {
    /// The directory holding the database; `remove()` deletes it.
    public let directory: URL
    /// The database file.
    public let path: String

    /// Creates the directory and the database (see `create(at:...)` for the options).
    public init(rows: Bool = true, index: Bool = true, extraSQL: String = "", walMode: Bool = false) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("epf-catalogue-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("epf.sqlite").path
        try Self.create(at: path, rows: rows, index: index, extraSQL: extraSQL, walMode: walMode)
    }

    /// Writes the catalogue at `path`: the schema, then the rows unless `rows` is false, `titleSuffix` appended to
    /// every app title, `extraSQL` run, and the search index built when `index`. `walMode` leaves the file in WAL
    /// mode, as the importer does.
    public static func create(at path: String, rows: Bool = true, index: Bool = true, extraSQL: String = "",
                              walMode: Bool = false, titleSuffix: String = "") throws {
        let connection = try SQLiteConnection(path: path, mode: .readWriteCreate)
        if walMode { try connection.execute("PRAGMA journal_mode=WAL") }
        try connection.execute(CatalogueFixture.schema)
        if rows { try connection.execute(CatalogueFixture.rows) }
        if !titleSuffix.isEmpty {
            try connection.execute("UPDATE application SET title = title || '\(titleSuffix)'")
        }
        if !extraSQL.isEmpty { try connection.execute(extraSQL) }
        if index { try connection.transaction { try SearchIndex.rebuild(connection) } }
    }

    /// Removes the directory and the database in it.
    public func remove() {
        try? FileManager.default.removeItem(at: directory)
    }
}
