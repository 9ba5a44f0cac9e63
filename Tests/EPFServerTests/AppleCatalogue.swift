import EPFGenerator
import EPFImport
import EPFQuery
@testable import EPFServer
import EPFSQLite
import EPFStore
import EPFTestSupport
import Foundation
import HTTPTransport
import Testing

/// A generated catalogue with the match feed, imported with lookup documents: made once per test process (it is
/// only read), removed when the process exits.
struct AppleCatalogue: Sendable {
    let directory: String
    let database: String
    let model: FeedModel

    static let shared: Result<AppleCatalogue, any Error> = Result { try AppleCatalogue() }

    private init() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("epf-apple-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        appleCatalogueDirectory = directory
        atexit { if let directory = appleCatalogueDirectory { try? FileManager.default.removeItem(atPath: directory) } }
        var options = GeneratorOptions()
        options.apps = 120
        options.priceStorefronts = 6
        options.match = true
        let feed = try FeedGenerator.write(options, to: URL(fileURLWithPath: directory).appendingPathComponent("feed"))
        database = directory + "/epf.sqlite"
        let importer = try Importer(databasePath: database, options: ImportOptions(), derived: [LookupDocuments()])
        let report = try importer.run(paths: feed.feedPaths.values.map(\.path).sorted())
        guard report.succeeded else { throw ClientError(description: "the import of the Apple catalogue failed") }
        self.directory = directory
        model = FeedModel(options)
    }

    /// Fresh routes over the shared database.
    static func routes() throws -> AppleHarness {
        let catalogue = try shared.get()
        let configuration = EPFServerConfiguration(databasePath: catalogue.database)
        return AppleHarness(catalogue: catalogue, routes: try EPFRoutes(configuration: configuration))
    }

    /// The texts of the first column of a query.
    func texts(_ sql: String) throws -> [String] {
        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        return try connection.query(sql).compactMap { row in
            if case .text(let text) = row.first { return text }
            return nil
        }
    }

    /// The integers of the first column of a query.
    func ids(_ sql: String) throws -> [Int64] {
        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        return try connection.query(sql).compactMap { row in
            if case .integer(let id) = row.first { return id }
            return nil
        }
    }
}

nonisolated(unsafe) private var appleCatalogueDirectory: String?

/// Routes over the shared catalogue, called without a socket.
struct AppleHarness {
    let catalogue: AppleCatalogue
    let routes: EPFRoutes

    func get(_ target: String) throws -> RouteAnswer {
        let request = try #require(HTTPRequest(method: .get, target: target))
        return RouteAnswer(response: routes.respond(to: request))
    }

    /// The `results` of a 200 answer.
    func results(_ target: String) throws -> [[String: Any]] {
        let answer = try get(target)
        #expect(answer.status == 200, "\(target): \(answer.text.prefix(300))")
        let object = try answer.json()
        let results = try #require(object["results"] as? [[String: Any]])
        #expect(object["resultCount"] as? Int == results.count)
        return results
    }
}
