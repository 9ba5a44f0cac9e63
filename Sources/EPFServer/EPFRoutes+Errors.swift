import HTTPTransport
import JSONText

/// The application's error bodies: epf's own shape on its routes, Apple's on Apple's, for handler errors and for
/// the requests the transport refuses alike.
extension EPFRoutes {
    /// The methods every route answers, sent in `Allow` with each 405 and 501.
    static let allowedMethods = "GET, HEAD"

    /// epf's JSON error body `{"error":{"status":N,"message":"...", ...details}}` with `Cache-Control: no-store`;
    /// `details` are members that say more than the message, for programs (e.g. `"removed"` on a 404).
    func errorResponse(_ status: Int, _ message: String, route: String,
                       headers: [(name: String, value: String)] = [],
                       details: [(String, JSONValue)] = []) -> HTTPResponse {
        var body = JSONValue.object([
            ("error", .object([("status", .int(Int64(status))), ("message", .string(message))] + details)),
        ]).serialized()
        body.append(UInt8(ascii: "\n"))
        return HTTPResponse(status: status, body: body, lastModified: defaultLastModified, cache: .noStore,
                            headers: headers + Self.allowHeader(status), route: route)
    }

    /// A request the transport refused, answered in the shape of the API its path belongs to.
    package func respond(to failure: HTTPFailure) -> HTTPResponse {
        if let path = failure.path, Self.routes.match(path)?.route.family == .apple {
            return appleError(failure.status, failure.message,
                              headers: failure.headers + Self.allowHeader(failure.status))
        }
        return errorResponse(failure.status, failure.message, route: failure.route, headers: failure.headers)
    }

    private static func allowHeader(_ status: Int) -> [(name: String, value: String)] {
        status == 405 || status == 501 ? [("Allow", allowedMethods)] : []
    }
}
