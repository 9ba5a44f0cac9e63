import EPFStore
import EPFTestSupport
import Foundation

/// A small database in the importer's contract schema (the EPFQuery tests' fixture), in WAL mode like the
/// importer leaves it, inside its own temporary directory.
struct Fixture {
    let directory: URL
    let path: String

    static let schema = CatalogueFixture.schema
    static let rows = CatalogueFixture.rows

    /// Creates the directory and the database with the search index.
    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("epf-server-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("epf.sqlite").path
        try Fixture.create(at: path)
    }

    /// Writes a fixture database at `path`; `titleSuffix` is appended to every app title.
    static func create(at path: String, titleSuffix: String = "") throws {
        let connection = try SQLiteConnection(path: path, mode: .readWriteCreate)
        try connection.execute("PRAGMA journal_mode=WAL")
        try connection.execute(schema)
        try connection.execute(rows)
        if !titleSuffix.isEmpty {
            try connection.execute("UPDATE application SET title = title || '\(titleSuffix)'")
        }
        try connection.transaction { try SearchIndex.rebuild(connection) }
    }

    /// Removes the directory.
    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }
}
