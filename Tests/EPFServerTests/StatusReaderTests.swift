import EPFServer
import EPFStore
import EPFTestSupport
import Foundation
import HTTPTransport
import Testing

/// The server reports the importer's status only through the reader its configuration gives (`epf serve` passes
/// EPFStore's `StoreStatusReader`); without one it says so instead of guessing.
@Suite("The database status reader")
struct StatusReaderTests {
    static func get(_ routes: EPFRoutes, _ target: String) throws -> (status: Int, body: [String: Any]) {
        let response = routes.respond(to: try #require(HTTPRequest(method: .get, target: target)))
        let body = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        return (response.status, try #require(body, "\(target): not a JSON object"))
    }

    @Test func withoutAReaderStatusIsUnavailableAndHealthClaimsWhatTheDataSays() throws {
        let fixture = try CatalogueDatabase(walMode: true)
        defer { fixture.remove() }
        let bare = try EPFRoutes(configuration: EPFServerConfiguration(databasePath: fixture.path))
        let read = try EPFRoutes(configuration: EPFServerConfiguration(databasePath: fixture.path,
                                                                       status: StoreStatusReader()))

        let unavailable = try Self.get(bare, "/v1/status")
        #expect(unavailable.status == 503)
        let message = (unavailable.body["error"] as? [String: Any])?["message"] as? String
        #expect(message?.contains("without a reader of the database status") == true, "\(unavailable.body)")
        let status = try Self.get(read, "/v1/status")
        #expect(status.status == 200 && status.body["tables"] is [Any], "\(status.body)")

        let health = try Self.get(bare, "/healthz")
        #expect(health.status == 200)
        #expect(health.body["mixed"] as? Bool == false && health.body["failures"] as? Int == 0, "\(health.body)")
        #expect(health.body["exportDate"] as? String != nil, "the data's newest export date: \(health.body)")
    }
}
