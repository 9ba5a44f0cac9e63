import EPFQuery
import EPFStore
import Glibc

/// Settings of the EPF HTTP API on top of the transport's.
public struct EPFServerConfiguration: Sendable {
    /// The SQLite database written by `epf import`; opened read-only by every worker.
    public var databasePath: String
    /// Transport settings (address, threads, limits, timeouts, access log).
    public var http: HTTPServerConfiguration
    /// Most IDs and links one `/v1/lookup` call may carry; more gets 400.
    public var maxLookupIds = 200
    /// Seconds between checks that the database file is still the same (inode and device).
    public var fileCheckInterval = 1.0
    /// Most rendered responses each worker keeps for repeated requests (0 turns the cache off).
    ///
    /// Entries are dropped whenever the database changes (`PRAGMA data_version`), so answers stay exact.
    public var responseCacheEntries = 10_000
    /// Most body bytes each worker's response cache holds.
    public var responseCacheBytes = 32 * 1024 * 1024

    /// Creates a configuration for a database path with default transport settings.
    public init(databasePath: String, http: HTTPServerConfiguration = HTTPServerConfiguration()) {
        self.databasePath = databasePath
        self.http = http
    }
}

/// The EPF API server: `EPFRoutes` responders (one `QueryEngine` per worker) on an `HTTPServer`.
public enum EPFAPI {
    /// Builds a server over the database; call `start()` on it.
    ///
    /// Throws `QueryError.databaseMissing` / `.databaseEmpty` (from the first worker's engine, when `start()`
    /// runs) if the database is absent or unreadable at start; later disappearances give 503 until it is back.
    public static func makeServer(_ configuration: EPFServerConfiguration) -> HTTPServer {
        let metrics = ServerMetrics()
        let started = Int64(time(nil))
        return HTTPServer(configuration: configuration.http, metrics: metrics) { _ in
            try EPFRoutes(configuration: configuration, metrics: metrics, startedAt: started)
        }
    }
}

/// Why a route answered with an error instead of a body.
struct RouteError: Error {
    let status: Int
    let message: String
    var headers: [(name: String, value: String)] = []

    static func badParameter(_ name: String, _ message: String) -> RouteError {
        RouteError(status: 400, message: "parameter '\(name)': \(message)")
    }
}

/// The API's routes for one worker thread, over its own read-only `QueryEngine`.
///
/// Not thread-safe (like `QueryEngine`); `HTTPServer` creates one per worker. When the database file
/// disappears or is replaced, the engine is dropped and reopened within `fileCheckInterval`; meanwhile
/// data routes and `/healthz` answer 503.
public final class EPFRoutes: HTTPResponder {
    private let configuration: EPFServerConfiguration
    private let metrics: ServerMetrics
    private let startedAt: Int64
    private var engine: QueryEngine?
    private var cache: ResponseCache?
    /// A second read-only connection for cheap facts: `PRAGMA data_version`, the importer's bookkeeping, health.
    private var side: SQLiteConnection?
    /// Device and inode of the file the engine opened.
    private var identity: (device: UInt64, inode: UInt64)?
    private var lastFileCheck: UInt64 = 0
    private var lastOpenAttempt: UInt64 = 0
    private var lastOpenError = ""
    private var exportDateSeconds: Int64?
    /// `/v1/status` counts rows, so its answer is kept for two seconds.
    private var statusCache: (at: UInt64, value: JSONValue)?

    /// Opens the database; throws `QueryError.databaseMissing` or `.databaseEmpty` when it cannot.
    public init(configuration: EPFServerConfiguration, metrics: ServerMetrics = ServerMetrics(),
                startedAt: Int64 = Int64(time(nil))) throws {
        self.configuration = configuration
        self.metrics = metrics
        self.startedAt = startedAt
        try open()
    }

    // MARK: Database lifecycle

    private static func fileIdentity(_ path: String) -> (device: UInt64, inode: UInt64)? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return (UInt64(info.st_dev), UInt64(info.st_ino))
    }

    private func open() throws {
        lastOpenAttempt = monotonicNanoseconds()
        let identity = Self.fileIdentity(configuration.databasePath)
        let engine = try QueryEngine(databasePath: configuration.databasePath)
        self.engine = engine
        self.identity = identity
        side = try? SQLiteConnection(path: configuration.databasePath, mode: .readOnly,
                                     busyTimeoutMilliseconds: 100)
        if configuration.responseCacheEntries > 0 {
            cache = ResponseCache(maxEntries: configuration.responseCacheEntries,
                                  maxBytes: configuration.responseCacheBytes)
        }
        lastOpenError = ""
        refreshExportDate()
    }

    /// Drops the engine and opens a fresh one (new connection, new prepared statements); false on failure.
    @discardableResult
    private func reopen() -> Bool {
        engine = nil
        cache = nil
        side = nil
        identity = nil
        do {
            try open()
            return true
        } catch {
            lastOpenError = "\(error)"
            return false
        }
    }

    /// The engine, reopening it (at most once per check interval) when it is gone.
    private func currentEngine() -> QueryEngine? {
        if let engine { return engine }
        let now = monotonicNanoseconds()
        if now &- lastOpenAttempt >= UInt64(configuration.fileCheckInterval * 1e9) { reopen() }
        return engine
    }

    /// Checks the file's identity once per interval; a vanished or replaced file drops or reopens the engine.
    public func tick() {
        let now = monotonicNanoseconds()
        guard now &- lastFileCheck >= UInt64(configuration.fileCheckInterval * 1e9 * 0.9) else { return }
        lastFileCheck = now
        let current = Self.fileIdentity(configuration.databasePath)
        if current == nil {
            engine = nil
            cache = nil
            side = nil
            identity = nil
            lastOpenError = "the database file \(configuration.databasePath) is missing"
            return
        }
        if engine == nil || identity.map({ $0.device != current?.device || $0.inode != current?.inode }) == true {
            reopen()
            return
        }
        refreshExportDate()
    }

    private func refreshExportDate() {
        if engine != nil, let milliseconds = newestExportDate() { exportDateSeconds = milliseconds / 1000 }
    }

    /// The newest export date (ms): from the importer's `epf_tables` bookkeeping when present (one small
    /// table), else the engine's scan of the catalogue tables (databases made by hand, tests).
    private func newestExportDate() -> Int64? {
        if let side, case .integer(let milliseconds)? = try? side.scalar("SELECT max(export_date) FROM epf_tables") {
            return milliseconds
        }
        return (try? engine?.dataExportDate()) ?? nil
    }

    /// The data's export date, or the server's start time when unknown.
    public var defaultLastModified: Int64 { exportDateSeconds ?? startedAt }

    /// Runs a query, retrying once on a fresh engine when SQLite reports busy, a schema change or any failure.
    private func withEngine<T>(_ body: (QueryEngine) throws -> T) throws -> T {
        guard let engine = currentEngine() else { throw unavailable() }
        do {
            return try body(engine)
        } catch let error as QueryError {
            switch error {
            case .badArgument(let name, let message):
                throw RouteError.badParameter(name, message)
            case .refused, .databaseMissing, .databaseEmpty, .sqlite:
                guard reopen(), let fresh = self.engine else {
                    throw unavailable()
                }
                do {
                    return try body(fresh)
                } catch QueryError.badArgument(let name, let message) {
                    throw RouteError.badParameter(name, message)
                } catch {
                    throw RouteError(status: 503, message: "the database is not readable right now: \(error)",
                                     headers: [("Retry-After", "1")])
                }
            }
        }
    }

    private func unavailable() -> RouteError {
        let reason = lastOpenError.isEmpty ? "the database is not available" : lastOpenError
        return RouteError(status: 503, message: "\(reason); retry shortly", headers: [("Retry-After", "1")])
    }

    // MARK: Routing

    /// Routes a request; every failure becomes a JSON error response with the right status.
    public func respond(to request: HTTPRequest) -> HTTPResponse {
        let segments = request.path.split(separator: "/", omittingEmptySubsequences: false)
        guard segments.count >= 2, segments[0].isEmpty else {
            return .error(404, "no route for \(request.path)", route: "not_found", lastModified: defaultLastModified)
        }
        let route: (name: String, handler: () throws -> HTTPResponse)
        switch (segments.count, segments[1]) {
        case (2, "healthz"): route = ("healthz", health)
        case (2, "metrics"): route = ("metrics", metricsText)
        case (3, "v1"):
            switch segments[2] {
            case "lookup": route = ("lookup", { try self.lookup(request) })
            case "resolve": route = ("resolve", { try self.resolve(request) })
            case "search": route = ("search", { try self.search(request) })
            case "storefronts": route = ("storefronts", storefronts)
            case "genres": route = ("genres", genres)
            case "status": route = ("status", status)
            default: return notFound(request)
            }
        case (4, "v1"), (5, "v1"):
            guard let kind = Self.entityRoutes[String(segments[2])] else { return notFound(request) }
            let idText = String(segments[3])
            if segments.count == 5 {
                guard kind.kind == .software, segments[4] == "prices" else { return notFound(request) }
                route = ("app_prices", { try self.prices(idText) })
            } else {
                route = (kind.route, { try self.entity(kind.kind, idText, request) })
            }
        default:
            return notFound(request)
        }
        switch request.method {
        case .get, .head: break
        case .other:
            return .error(405, "method \(request.method) not allowed; use GET or HEAD", route: route.name,
                          lastModified: defaultLastModified, headers: [("Allow", "GET, HEAD")])
        }
        if Self.cachedRoutes.contains(route.name), let cache, let engine {
            // One read transaction for the cache check and the query: the snapshot's data version says
            // whether cached answers are still those of the data, at no extra cost.
            if let response = try? engine.withSnapshot({ version -> HTTPResponse in
                if cache.validate(dataVersion: version) { refreshExportDate() }
                if let hit = cache.get(request.target) { return hit }
                let started = monotonicNanoseconds()
                let response = run(route)
                // Only answers that took a while are worth a place: an app read from its stored lookup
                // document costs less than keeping it would.
                if response.status == 200, monotonicNanoseconds() &- started >= Self.cacheWorthyNanoseconds {
                    cache.put(request.target, response)
                }
                return response
            }) {
                return response
            }
            // The snapshot could not start: answer without the cache (the handler reopens the engine if it must).
        }
        return run(route)
    }

    /// Runs a route's handler; every failure becomes a JSON error response with the right status.
    private func run(_ route: (name: String, handler: () throws -> HTTPResponse)) -> HTTPResponse {
        do {
            var response = try route.handler()
            response.route = route.name
            return response
        } catch let error as RouteError {
            return .error(error.status, error.message, route: route.name, lastModified: defaultLastModified,
                          headers: error.headers)
        } catch {
            return .error(500, "internal error: \(error)", route: route.name, lastModified: defaultLastModified)
        }
    }

    /// Answers computed faster than this are not cached.
    static let cacheWorthyNanoseconds: UInt64 = 20_000

    /// Routes whose answers depend only on the target and the data, so the response cache may keep them.
    private static let cachedRoutes: Set<String> = [
        "apps", "collections", "songs", "videos", "artists", "app_prices", "lookup", "resolve", "search",
        "storefronts", "genres",
    ]

    private static let entityRoutes: [String: (kind: EntityKind, route: String)] = [
        "apps": (.software, "apps"), "collections": (.album, "collections"), "songs": (.song, "songs"),
        "videos": (.video, "videos"), "artists": (.artist, "artists"),
    ]

    private func notFound(_ request: HTTPRequest) -> HTTPResponse {
        .error(404, "no route for \(request.path); see /v1/lookup, /v1/apps/{id}, /v1/search, /v1/status",
               route: "not_found", lastModified: defaultLastModified)
    }

    private func json(_ value: JSONValue, cache: CachePolicy = .public) -> HTTPResponse {
        var body = value.serialized()
        body.append(UInt8(ascii: "\n"))
        return HTTPResponse(status: 200, body: body, lastModified: defaultLastModified, cache: cache)
    }

    private static func positiveID(_ text: String, name: String = "id") throws -> Int64 {
        guard !text.isEmpty, text.utf8.count <= 19, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              let id = Int64(text), id > 0 else {
            throw RouteError.badParameter(name, "must be a positive integer Apple ID, got '\(text.prefix(40))'")
        }
        return id
    }

    private static func optional(_ request: HTTPRequest, _ name: String) throws -> String? {
        guard let value = request.parameter(name) else { return nil }
        if value.isEmpty { throw RouteError.badParameter(name, "must not be empty") }
        return value
    }

    // MARK: Handlers

    private func entity(_ kind: EntityKind, _ idText: String, _ request: HTTPRequest) throws -> HTTPResponse {
        let id = try Self.positiveID(idText)
        let country = try Self.optional(request, "country")
        let language = try Self.optional(request, "lang")
        guard var body = try withEngine({
            try $0.entityJSON(kind: kind, id: id, country: country, language: language)
        }) else {
            throw RouteError(status: 404, message: "no \(kind.rawValue) with id \(id)")
        }
        body.append(UInt8(ascii: "\n"))
        return HTTPResponse(status: 200, body: body, lastModified: defaultLastModified, cache: .public)
    }

    private func lookup(_ request: HTTPRequest) throws -> HTTPResponse {
        var arguments: [String] = []
        var sawParameter = false
        for (name, value) in request.query {
            switch name {
            case "id":
                sawParameter = true
                for piece in value.split(separator: ",") {
                    let trimmed = piece.utf8.contains(0x20) ? piece.filter { $0 != " " } : String(piece)
                    if !trimmed.isEmpty { arguments.append(trimmed) }
                }
            case "url":
                sawParameter = true
                if !value.isEmpty { arguments.append(value) }
            default:
                continue
            }
            if arguments.count > configuration.maxLookupIds {
                throw RouteError.badParameter(name, "at most \(configuration.maxLookupIds) ids per call")
            }
        }
        guard sawParameter else { throw RouteError(status: 400, message: "missing parameter 'id' or 'url'") }
        guard !arguments.isEmpty else { throw RouteError.badParameter("id", "no ids given") }
        let country = try Self.optional(request, "country")
        let language = try Self.optional(request, "lang")
        let result = try withEngine {
            try $0.lookup(arguments, country: country, language: language, storedDocuments: true)
        }
        return json(result.json)
    }

    private func resolve(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let link = request.parameter("url") ?? request.parameter("id"), !link.isEmpty else {
            throw RouteError(status: 400, message: "missing parameter 'url'")
        }
        guard StoreLink.parse(link) != nil else {
            throw RouteError.badParameter("url", "not a store link or Apple ID: '\(link.prefix(200))'")
        }
        guard let value = try withEngine({ try $0.resolve(link) }) else {
            throw RouteError(status: 404, message: "no entry for '\(link.prefix(200))'")
        }
        return json(value)
    }

    private static let searchEntities: [String: EntityKind] = [
        "software": .software, "app": .software, "apps": .software, "iPadSoftware": .software,
        "macSoftware": .software, "album": .album, "collection": .album, "song": .song, "musicTrack": .song,
        "ebook": .ebook, "book": .ebook, "video": .video, "movie": .video, "musicVideo": .video,
        "tvEpisode": .video, "artist": .artist, "allArtist": .artist, "musicArtist": .artist,
        "softwareDeveloper": .artist,
    ]

    private func search(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let term = request.parameter("term") else {
            throw RouteError(status: 400, message: "missing parameter 'term'")
        }
        guard !term.allSatisfy({ $0 == " " }) else { throw RouteError.badParameter("term", "must not be empty") }
        guard term.utf8.count <= 500 else { throw RouteError.badParameter("term", "longer than 500 bytes") }
        var entity: EntityKind?
        if let name = try Self.optional(request, "entity") {
            guard let kind = Self.searchEntities[name] else {
                throw RouteError.badParameter("entity", "unknown entity '\(name.prefix(40))'; use software, "
                                              + "album, song, ebook, video or artist")
            }
            entity = kind
        }
        var limit = 50
        if let text = request.parameter("limit") {
            guard let number = Int(text), (1...200).contains(number) else {
                throw RouteError.badParameter("limit",
                                              "must be a whole number from 1 to 200, got '\(text.prefix(40))'")
            }
            limit = number
        }
        let country = try Self.optional(request, "country")
        let result = try withEngine { try $0.search(term: term, entity: entity, country: country, limit: limit) }
        return json(result.json)
    }

    private func prices(_ idText: String) throws -> HTTPResponse {
        let id = try Self.positiveID(idText)
        guard let list = try withEngine({ try $0.prices(id: id) }), list.kind == .software else {
            throw RouteError(status: 404, message: "no software with id \(id)")
        }
        return json(list.json)
    }

    private func storefronts() throws -> HTTPResponse {
        let rows = try withEngine { try $0.storefronts() }
        return json(.object([("resultCount", .int(Int64(rows.count))), ("results", .array(rows.map(\.json)))]))
    }

    private func genres() throws -> HTTPResponse {
        let rows = try withEngine { try $0.genres() }
        return json(.object([("resultCount", .int(Int64(rows.count))), ("results", .array(rows.map(\.json)))]))
    }

    private func health() throws -> HTTPResponse {
        guard currentEngine() != nil, let side else { throw unavailable() }
        do {
            _ = try side.scalar("SELECT count(*) FROM sqlite_schema")
        } catch {
            throw RouteError(status: 503, message: "the database is not readable: \(error)",
                             headers: [("Retry-After", "1")])
        }
        let exportDate = newestExportDate()
        return json(.object([
            ("status", .string("ok")),
            ("exportDate", exportDate.map { .string(Self.isoDate(milliseconds: $0)) } ?? .null),
        ]), cache: .noStore)
    }

    private func metricsText() throws -> HTTPResponse {
        var text = metrics.prometheusText()
        text += "# HELP epf_database_available Whether this worker can read the database (1) or not (0).\n"
        text += "# TYPE epf_database_available gauge\n"
        text += "epf_database_available \(engine == nil ? 0 : 1)\n"
        if let exportDateSeconds {
            text += "# HELP epf_database_export_date_seconds Newest export_date in the data, seconds since 1970.\n"
            text += "# TYPE epf_database_export_date_seconds gauge\n"
            text += "epf_database_export_date_seconds \(exportDateSeconds)\n"
        }
        return HTTPResponse(status: 200, body: Array(text.utf8),
                            contentType: "text/plain; version=0.0.4; charset=utf-8",
                            lastModified: defaultLastModified, cache: .noStore)
    }

    private func status() throws -> HTTPResponse {
        let now = monotonicNanoseconds()
        if let cached = statusCache, now &- cached.at < 2_000_000_000, engine != nil {
            return json(cached.value, cache: .noStore)
        }
        guard currentEngine() != nil else { throw unavailable() }
        let value: JSONValue
        do {
            value = try StatusReport.build(databasePath: configuration.databasePath,
                                           dataExportDate: newestExportDate(),
                                           startedAt: startedAt, threads: configuration.http.threads)
        } catch {
            throw RouteError(status: 503, message: "cannot read the database status right now: \(error)",
                             headers: [("Retry-After", "1")])
        }
        statusCache = (now, value)
        return json(value, cache: .noStore)
    }

    /// Milliseconds since 1970 as `2024-05-01T00:00:00Z`.
    static func isoDate(milliseconds: Int64) -> String {
        var time = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&time, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))Z"
    }
}
