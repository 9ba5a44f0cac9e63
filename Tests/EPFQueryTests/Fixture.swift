import EPFStore
import EPFTestSupport
import Foundation

/// A small database in the importer's contract schema, in its own temporary directory.
struct Fixture {
    let directory: URL
    let path: String

    static let schema = CatalogueFixture.schema
    static let rows = CatalogueFixture.rows

    /// Creates the directory and the database; `schemaOnly` leaves the tables empty, `index` builds epf_search.
    init(rows: Bool = true, index: Bool = true, extraSQL: String = "") throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("epf-query-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("epf.sqlite").path
        let connection = try SQLiteConnection(path: path, mode: .readWriteCreate)
        try connection.execute(Fixture.schema)
        if rows { try connection.execute(Fixture.rows) }
        if !extraSQL.isEmpty { try connection.execute(extraSQL) }
        if index {
            try connection.transaction { try SearchIndex.rebuild(connection) }
        }
    }

    /// Removes the directory.
    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }

    /// Parses JSON bytes with Foundation, as clients would.
    static func parse(_ bytes: [UInt8]) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
    }
}
