import EPFFormat
import EPFQuery
import EPFSchema
import EPFSQLite
import Glibc
import HTTPTransport
import JSONText

/// The API's routes for one worker thread, over its own read-only `QueryEngine`.
///
/// Not thread-safe (like `QueryEngine`); `HTTPServer` creates one per worker. When the database file
/// disappears or is replaced, the engine is dropped and reopened within `fileCheckInterval`; meanwhile
/// data routes and `/healthz` answer 503.
package final class EPFRoutes: HTTPResponder {
    let configuration: EPFServerConfiguration
    private let metrics: ServerMetrics
    private let startedAt: Int64
    private let database: ServedDatabase
    /// `/v1/status` counts rows, so its answer is kept for two seconds.
    private var statusCache: (at: UInt64, value: JSONValue)?
    /// `/healthz`'s claims, read at most every 2 s: a load balancer may ask many times a second.
    private var claimsCache: (at: UInt64, exportDate: Int64?, mixed: Bool, failures: Int)?

    /// Opens the database; throws `QueryError.databaseMissing` or `.databaseEmpty` when it cannot.
    package init(configuration: EPFServerConfiguration, metrics: ServerMetrics = ServerMetrics(),
                startedAt: Int64 = Int64(time(nil))) throws {
        self.configuration = configuration
        self.metrics = metrics
        self.startedAt = startedAt
        database = try ServedDatabase(configuration: configuration)
    }

    /// Checks the database file once per interval (see `ServedDatabase`).
    package func tick() {
        database.tick()
    }

    /// The data's export date, or the server's start time when unknown.
    package var defaultLastModified: Int64 { database.exportDateSeconds ?? startedAt }

    // MARK: The request in flight

    /// The engine of the request being answered, fetched once per request (`requestEngine()`): a reopen in the
    /// middle of a request replaces it here and marks the request, so its answer is not put in the old cache.
    private var inFlight: (engine: QueryEngine?, fetched: Bool, reopened: Bool, bounded: Bool) =
        (nil, false, false, false)

    /// The engine of the request in flight, fetched from the database (reopening it when it is gone, at most once
    /// per check interval) on first use.
    func requestEngine() -> QueryEngine? {
        if !inFlight.fetched {
            inFlight.engine = database.currentEngine()
            inFlight.fetched = true
        }
        return inFlight.engine
    }

    /// Runs a query on the request's engine, retrying once on a fresh one when SQLite reports busy, a schema change
    /// or any failure. On a bounded route the query runs under the time limit, and a query stopped by it is a 503.
    func withEngine<T>(_ body: (QueryEngine) throws -> T) throws -> T {
        guard let engine = requestEngine() else { throw unavailable() }
        do {
            return try bounded(engine, body)
        } catch let error as QueryError {
            switch error {
            case .badArgument(let name, let message):
                throw RouteError.badParameter(name, message)
            case .sqlite(let failure) where failure.isInterrupt:
                throw tookTooLong()
            case .refused, .databaseMissing, .databaseEmpty, .sqlite:
                guard database.reopen(), let fresh = database.engine else {
                    throw unavailable()
                }
                inFlight.engine = fresh
                inFlight.reopened = true
                do {
                    return try bounded(fresh, body)
                } catch QueryError.badArgument(let name, let message) {
                    throw RouteError.badParameter(name, message)
                } catch {
                    if Self.isInterrupt(error) { throw tookTooLong() }
                    throw RouteError(status: 503, message: "the database is not readable right now: \(error)",
                                     headers: [("Retry-After", "1")])
                }
            }
        } catch let error as SQLiteError where error.isInterrupt {
            throw tookTooLong()
        }
    }

    /// Runs `body` under the time limit when the route in flight is bounded.
    private func bounded<T>(_ engine: QueryEngine, _ body: (QueryEngine) throws -> T) throws -> T {
        guard inFlight.bounded else { return try body(engine) }
        return try engine.withTimeLimit(milliseconds: configuration.queryTimeLimitMilliseconds) { try body(engine) }
    }

    private static func isInterrupt(_ error: any Error) -> Bool {
        if let error = error as? SQLiteError { return error.isInterrupt }
        if case .sqlite(let failure)? = error as? QueryError { return failure.isInterrupt }
        return false
    }

    private func tookTooLong() -> RouteError {
        RouteError(status: 503, message: "the query took longer than \(configuration.queryTimeLimitMilliseconds) ms "
                       + "and was stopped; narrow it (a longer term, a smaller limit, a later date)",
                   headers: [("Retry-After", "1")])
    }

    private func unavailable() -> RouteError {
        let reason = database.lastOpenError.isEmpty ? "the database is not available" : database.lastOpenError
        return RouteError(status: 503, message: "\(reason); retry shortly", headers: [("Retry-After", "1")])
    }

    // MARK: Routing

    /// Routes a request; every failure becomes an error response in the route's shape with the right status.
    package func respond(to request: HTTPRequest) -> HTTPResponse {
        guard request.path.hasPrefix("/") else {
            return errorResponse(404, "no route for \(request.path)", route: "not_found")
        }
        guard let (route, captures) = Self.routes.match(request.path) else { return notFound(request) }
        switch request.method {
        case .get, .head: break
        case .other:
            return errorResponse(405, "method \(request.method) not allowed; use GET or HEAD", route: route.name)
        }
        if let parameter = request.malformedQueryParameter {
            switch route.family {
            case .apple: return appleRefusal(request, malformed: parameter)
            case .epf:
                return errorResponse(400, "malformed percent-encoding or UTF-8 in query parameter '\(parameter)'",
                                     route: route.name)
            }
        }
        inFlight = (nil, false, false, route.isBounded)
        defer { inFlight = (nil, false, false, false) }
        let routed = RouteRequest(http: request, captures: captures)
        if route.isCacheable, database.cache != nil, let engine = requestEngine(), let cache = database.cache {
            // One read transaction for the cache check and the query: the snapshot's data version says
            // whether cached answers are still those of the data, at no extra cost.
            if let response = try? engine.withSnapshot({ version -> HTTPResponse in
                if cache.validate(dataVersion: version) { database.refreshExportDate() }
                if let hit = cache.get(request.target) { return hit }
                let started = monotonicNanoseconds()
                let response = run(route, routed)
                // Only answers that took a while are worth a place: an app read from its stored lookup
                // document costs less than keeping it would. An answer read after a reopen is not the old cache's.
                if response.status == 200, !self.inFlight.reopened,
                   monotonicNanoseconds() &- started >= Self.cacheWorthyNanoseconds {
                    cache.put(request.target, response)
                }
                return response
            }) {
                return response
            }
            // The snapshot could not start: answer without the cache (the handler reopens the engine if it must).
        }
        return run(route, routed)
    }

    /// Runs a route's handler; every failure becomes an error response in the route's shape.
    private func run(_ route: Route, _ request: RouteRequest) -> HTTPResponse {
        do {
            var response = try route.handler(self, request)
            response.route = route.name
            return response
        } catch let error as RouteError {
            return errorResponse(error.status, error.message, route: route.name, headers: error.headers,
                                 details: error.details)
        } catch {
            return errorResponse(500, "internal error: \(error)", route: route.name)
        }
    }

    /// Answers computed faster than this are not cached.
    static let cacheWorthyNanoseconds: UInt64 = 20_000

    private func notFound(_ request: HTTPRequest) -> HTTPResponse {
        errorResponse(404, "no route for \(request.path); see /v1/lookup, /v1/search, /v1/apps/{id}[/prices|/ranks], "
                      + "/v1/charts/{cc}/{chart}, /v1/changes, /v1/status, /lookup, /search, Apple's chart feeds "
                      + "/api/v2/{cc}/apps/{chart}/{n}/apps.json and /{cc}/rss/{feed}/limit={n}/json, "
                      + "or epf serve --help", route: "not_found")
    }

    func json(_ value: JSONValue, cache: CachePolicy = .public) -> HTTPResponse {
        var body = value.serialized()
        body.append(UInt8(ascii: "\n"))
        return HTTPResponse(status: 200, body: body, lastModified: defaultLastModified, cache: cache)
    }

    static func positiveID(_ text: String, name: String = "id") throws -> Int64 {
        guard !text.isEmpty, text.utf8.count <= 19, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              let id = Int64(text), id > 0 else {
            throw RouteError.badParameter(name, "must be a positive integer Apple ID, got '\(text.prefix(40))'")
        }
        return id
    }

    static func optional(_ request: HTTPRequest, _ name: String) throws -> String? {
        guard let value = request.parameter(name) else { return nil }
        if value.isEmpty { throw RouteError.badParameter(name, "must not be empty") }
        return value
    }

    // MARK: Handlers

    func entity(_ kind: EntityKind, _ idText: String, _ request: HTTPRequest) throws -> HTTPResponse {
        let id = try Self.positiveID(idText)
        let country = try Self.optional(request, "country")
        let language = try Self.optional(request, "lang")
        guard var body = try withEngine({
            try $0.lookups.entityJSON(kind: kind, id: id, country: country, language: language)
        }) else {
            throw try notFound(kind, id)
        }
        body.append(UInt8(ascii: "\n"))
        return HTTPResponse(status: 200, body: body, lastModified: defaultLastModified, cache: .public)
    }

    /// The 404 of an entity not in the database; when a full export dropped it, the error names the export
    /// (`"removed": {"id", "kind", "removedInExport"}`, the facts `/v1/lookup` gives in `removedIds`). Still a 404,
    /// not a 410: the item may come back in a later export, and clients already read 404 as "not here".
    private func notFound(_ kind: EntityKind, _ id: Int64) throws -> RouteError {
        guard let removed = try withEngine({ try $0.changes.removal(of: id, kind: kind) }) else {
            return RouteError(status: 404, message: "no \(kind.word) with id \(id)")
        }
        return RouteError(status: 404,
                          message: "\(removed.kind) \(id) was removed from the store in the export of "
                              + EPFValues.isoDate(milliseconds: removed.exportDate),
                          details: [("removed", removed.json)])
    }

    func lookup(_ request: HTTPRequest) throws -> HTTPResponse {
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
        let unreadable = StoreLink.unreadable(arguments)
        guard unreadable.isEmpty else {
            let name = request.parameter("id") == nil ? "url" : "id"
            throw RouteError.badParameter(name, StoreLink.notAnIDMessage(unreadable))
        }
        let country = try Self.optional(request, "country")
        let language = try Self.optional(request, "lang")
        let result = try withEngine {
            try $0.lookups.lookup(arguments, country: country, language: language, storedDocuments: true)
        }
        return json(result.json)
    }

    func resolve(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let link = request.parameter("url") ?? request.parameter("id"), !link.isEmpty else {
            throw RouteError(status: 400, message: "missing parameter 'url'")
        }
        guard StoreLink.parse(link) != nil else {
            throw RouteError.badParameter("url", StoreLink.notAnIDMessage([link]))
        }
        guard let value = try withEngine({ try $0.lookups.resolve(link) }) else {
            throw RouteError(status: 404, message: "no entry for '\(link.prefix(200))'")
        }
        return json(value)
    }

    static let searchEntities: [String: EntityKind] = [
        "software": .software, "app": .software, "apps": .software, "iPadSoftware": .software,
        "macSoftware": .software, "album": .album, "collection": .album, "song": .song, "musicTrack": .song,
        "ebook": .ebook, "book": .ebook, "video": .video, "movie": .video, "musicVideo": .video,
        "tvEpisode": .video, "artist": .artist, "allArtist": .artist, "musicArtist": .artist,
        "softwareDeveloper": .artist,
    ]

    func search(_ request: HTTPRequest) throws -> HTTPResponse {
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
        let result = try withEngine { try $0.search.matches(term: term, entity: entity, country: country, limit: limit) }
        return json(result.searchJSON)
    }

    /// The prices of an item of `kind` in every storefront; with `history=1` its recorded price changes
    /// (`country`, `since` narrow them), `{"id", "kind", "resultCount", "changes": [...]}`.
    func prices(_ kind: EntityKind, _ idText: String, _ request: HTTPRequest) throws -> HTTPResponse {
        let id = try Self.positiveID(idText)
        let history = try Self.optional(request, "history")
        guard history == nil || history == "1" || history == "0" else {
            throw RouteError.badParameter("history", "must be 1 or 0, got '\(history?.prefix(40) ?? "")'")
        }
        let country = try Self.optional(request, "country")
        let since = try Self.optional(request, "since")
        guard history == "1" else {
            guard country == nil, since == nil else {
                throw RouteError(status: 400, message: "'country' and 'since' go with history=1")
            }
            guard let list = try withEngine({ try $0.catalogue.prices(id: id) }), list.kind.table == kind.table
            else {
                throw try notFound(kind, id)
            }
            return json(list.json)
        }
        guard let word = PriceHistory.tracked.values.first(where: { $0.key == kind.table + "_id" })?.kind else {
            throw RouteError(status: 404, message: "no price history for \(kind.word)")
        }
        let changes = try withEngine {
            try $0.changes.priceHistory(id: id, kind: word, country: country, since: since)
        }
        return json(.object([("id", .int(id)), ("kind", .string(word)), ("resultCount", .int(Int64(changes.count))),
                             ("changes", .array(changes.map(\.json)))]))
    }

    func storefronts() throws -> HTTPResponse {
        let rows = try withEngine { try $0.catalogue.storefronts() }
        return json(.object([("resultCount", .int(Int64(rows.count))), ("results", .array(rows.map(\.json)))]))
    }

    func genres() throws -> HTTPResponse {
        let rows = try withEngine { try $0.catalogue.genres() }
        return json(.object([("resultCount", .int(Int64(rows.count))), ("results", .array(rows.map(\.json)))]))
    }

    func health() throws -> HTTPResponse {
        guard requestEngine() != nil, let side = database.side else { throw unavailable() }
        do {
            _ = try side.scalar("SELECT count(*) FROM sqlite_schema")
        } catch {
            throw RouteError(status: 503, message: "the database is not readable: \(error)",
                             headers: [("Retry-After", "1")])
        }
        // The claims of `epf status` (the configuration's `DatabaseStatusReader`): the date the data is complete
        // as of, whether the tables mix exports, and how many failed files nothing made up for; from the data
        // itself without bookkeeping.
        let now = monotonicNanoseconds()
        if claimsCache.map({ now &- $0.at >= 2_000_000_000 }) ?? true {
            var claims = (at: now, exportDate: database.newestExportDate(), mixed: false, failures: 0)
            if let reader = configuration.status, try side.tableExists("epf_tables"),
               let status = try? reader.read(side, databasePath: configuration.databasePath, lastImports: 0) {
                claims.exportDate = status.dataAsOf ?? claims.exportDate
                claims.mixed = status.mixed
                claims.failures = status.failureCount
            }
            claimsCache = claims
        }
        let exportDate = claimsCache?.exportDate
        let mixed = claimsCache?.mixed ?? false
        let failures = claimsCache?.failures ?? 0
        return json(.object([
            ("status", .string("ok")),
            ("exportDate", exportDate.map { .string(EPFValues.isoTimestamp(milliseconds: $0)) } ?? .null),
            ("mixed", .bool(mixed)),
            ("failures", .int(Int64(failures))),
        ]), cache: .noStore)
    }

    func metricsText() throws -> HTTPResponse {
        var text = metrics.prometheusText()
        text += "# HELP epf_database_available Whether this worker can read the database (1) or not (0).\n"
        text += "# TYPE epf_database_available gauge\n"
        text += "epf_database_available \(database.engine == nil ? 0 : 1)\n"
        if let exportDateSeconds = database.exportDateSeconds {
            text += "# HELP epf_database_export_date_seconds Newest export_date in the data, seconds since 1970.\n"
            text += "# TYPE epf_database_export_date_seconds gauge\n"
            text += "epf_database_export_date_seconds \(exportDateSeconds)\n"
        }
        return HTTPResponse(status: 200, body: Array(text.utf8),
                            contentType: "text/plain; version=0.0.4; charset=utf-8",
                            lastModified: defaultLastModified, cache: .noStore)
    }

    func status() throws -> HTTPResponse {
        let now = monotonicNanoseconds()
        if let cached = statusCache, now &- cached.at < 2_000_000_000, database.engine != nil {
            return json(cached.value, cache: .noStore)
        }
        guard requestEngine() != nil else { throw unavailable() }
        guard let reader = configuration.status else {
            throw RouteError(status: 503, message: "this server was started without a reader of the database status")
        }
        let value: JSONValue
        do {
            value = try StatusReport.build(reader, databasePath: configuration.databasePath,
                                           dataExportDate: database.newestExportDate(),
                                           startedAt: startedAt, threads: configuration.http.threads,
                                           timeLimitMilliseconds: configuration.queryTimeLimitMilliseconds)
        } catch let error as SQLiteError where error.isInterrupt {
            throw tookTooLong()
        } catch {
            throw RouteError(status: 503, message: "cannot read the database status right now: \(error)",
                             headers: [("Retry-After", "1")])
        }
        statusCache = (now, value)
        return json(value, cache: .noStore)
    }
}
