import EPFSchema
import EPFSQLite
import EPFStore
import Foundation

/// The small catalogue (`CatalogueFixture`'s SQL, in the importer's contract schema) as a database in a temporary
/// directory of its own: the one database fixture of the query and server tests.
public struct CatalogueDatabase {
    /// The temporary directory holding the database, removed by `remove()` or when the last copy goes away.
    private let scratch: TemporaryDirectory
    /// The directory holding the database.
    public var directory: URL { scratch.url }
    /// The database file.
    public let path: String

    /// Creates the directory and the database (see `create(at:...)` for the options).
    public init(rows: Bool = true, index: Bool = true, extraSQL: String = "", walMode: Bool = false) throws {
        scratch = try TemporaryDirectory(prefix: "epf-catalogue")
        path = scratch.file("epf.sqlite")
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
