import EPFQuery
import EPFServer
import EPFStore
import HTTPTransport
import Foundation

/// `epf serve`: the HTTP API over an imported database.
enum ServeCommand: Command {
    static let name = "serve"
    static let summary = "Serve lookups, search and prices over HTTP (JSON API)"
    static let help = """
    USAGE: epf serve [--db PATH] [--host ADDR] [--port N] [options]

    Serves the database read-only over HTTP/1.1 until SIGTERM or SIGINT, then finishes in-flight requests
    and exits 0. Keeps serving while 'epf import' updates the same database; a database file that is
    replaced or removed is reopened (503 until it is back).

    ENDPOINTS (GET and HEAD, JSON; docs/http-api.md says more):
      /v1/lookup?id=1,2,3[&country=us][&lang=en]   /v1/lookup?url=<store link>   (at most 200 ids)
      /v1/apps/{id}  /v1/collections/{id}  /v1/songs/{id}  /v1/videos/{id}  /v1/artists/{id}
      /v1/{apps|collections|songs|videos}/{id}/prices   /v1/resolve?url=...
      /v1/search?term=...&entity=...&country=...&limit=...
      /v1/apps/{id}/ranks[?country=&chart=&genre=&history=1&since=]   an app's places in the charts
      /v1/charts/{cc}/{chart}[?genre=&date=&limit=]   a chart (free, paid, free-ipad, paid-ipad)
      /v1/changes?since=YYYY-MM-DD[&kind=app|...|price|rank]   what left, changed or moved
      /v1/storefronts  /v1/genres  /v1/status  /healthz  /metrics (Prometheus text)
      /lookup  /search   Apple's iTunes Search API paths and parameters (id, upc, isrc, amg*Id, entity,
                         limit, sort, country, lang, media, term, attribute, explicit, offset, callback)
      /api/v2/{cc}/apps/{top-free|top-paid}/{limit}/apps.json   Apple's marketing-tools chart feed
      /{cc}/rss/{feed}/[limit={n}/][genre={g}/]json   Apple's legacy chart feed (feed: topfreeapplications,
                         toppaidapplications, topfreeipadapplications, toppaidipadapplications; limit
                         default 10), also as /rss/{feed}/...json (us, or ?cc=) and as Apple's
                         /WebObjects/MZStoreServices.woa/ws/RSS/{feed}/...json?s={storefront id}
                         (there a bare number segment is the genre: .../RSS/{feed}/6014/limit=5/json)

    OPTIONS:
    \(optionsHelp(declaredOptions))

    Prints 'listening on http://HOST:PORT' on standard output once ready.

    EXAMPLES:
      epf serve --db epf.sqlite --port 8080
      epf serve --port 0 --threads 4 --access-log
      curl 'http://127.0.0.1:8080/v1/lookup?id=293406864&country=gb'
    """

    /// Every option of `epf serve`, declared once.
    enum Options {
        /// The server's defaults, which the declarations show.
        private static let defaults = EPFServerConfiguration(databasePath: "")

        static let database = TextOption("db", "PATH", default: CommonOptions.database.defaultValue,
                                         "Database file; must exist.",
                                         shownDefault: CommonOptions.database.help.shownDefault)
        static let host = TextOption("host", "ADDR", default: defaults.http.host,
                                     "Address to listen on (IPv4, IPv6 or localhost).")
        static let port = IntOption("port", default: defaults.http.port, range: 0...65535,
                                    "Port; 0 picks a free one, printed on start.")
        static let threads = IntOption("threads", default: defaults.http.threads, range: 1...256,
                                       "Worker threads, each with its own database connection.",
                                       shownDefault: "one per core")
        static let maxAge = IntOption("max-age", "SECONDS", default: defaults.http.maxAge, range: 0...31_536_000,
                                      "Cache-Control max-age of successful responses.")
        static let idleTimeout = IntOption("idle-timeout", "SECONDS", default: Int(defaults.http.idleTimeout),
                                           range: 1...86_400,
                                           "Close connections idle, or slow to send a request, this long.")
        static let maxConnections = IntOption("max-connections", default: defaults.http.maxConnections,
                                              range: 1...1_000_000,
                                              "Beyond this many open connections, answer 503 and close.")
        static let drainTimeout = IntOption("drain-timeout", "SECONDS", default: Int(defaults.http.drainTimeout),
                                            range: 0...3600, "Longest wait for in-flight requests on shutdown.")
        static let cacheEntries = IntOption("cache-entries", default: defaults.responseCacheEntries,
                                            range: 0...10_000_000,
                                            "Rendered responses kept per worker for repeated requests, dropped "
                                                + "whenever the database changes; 0 turns the cache off.")
        static let accessLog = Flag("access-log", "Write one line per request to standard error.")

        /// In the order `--help` lists them.
        static let listed: [any DeclaredOption] = [
            database, host, port, threads, maxAge, idleTimeout, maxConnections, drainTimeout, cacheEntries, accessLog,
        ]
    }

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let path = try databasePath(&arguments)
        var http = HTTPServerConfiguration()
        http.host = try arguments.read(Options.host) ?? http.host
        http.port = try arguments.read(Options.port)
        http.threads = try arguments.read(Options.threads)
        http.maxAge = try arguments.read(Options.maxAge)
        http.idleTimeout = Double(try arguments.read(Options.idleTimeout))
        http.maxConnections = try arguments.read(Options.maxConnections)
        http.drainTimeout = Double(try arguments.read(Options.drainTimeout))
        let cacheEntries = try arguments.read(Options.cacheEntries)
        if arguments.read(Options.accessLog) {
            http.accessLog = { line in
                var bytes = Array(line.utf8)
                bytes.append(UInt8(ascii: "\n"))
                bytes.withUnsafeBytes { raw in
                    var offset = 0
                    while offset < raw.count, let base = raw.baseAddress {
                        let written = write(STDERR_FILENO, base + offset, raw.count - offset)
                        if written < 0 && errno == EINTR { continue }
                        if written <= 0 { return }
                        offset += written
                    }
                }
            }
        }
        let positionals = try arguments.finish()
        guard positionals.isEmpty else { throw UsageError("unexpected argument '\(positionals[0])'") }

        // Block SIGTERM and SIGINT before the workers start so they inherit the mask and only sigwait sees them.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGTERM)
        sigaddset(&signals, SIGINT)
        pthread_sigmask(SIG_BLOCK, &signals, nil)

        var configuration = EPFServerConfiguration(databasePath: path, http: http, status: StoreStatusReader())
        configuration.responseCacheEntries = cacheEntries
        let server = EPFAPI.makeServer(configuration)
        let port: Int
        do {
            port = try server.start()
        } catch let error as QueryError {
            throw QueryCLI.failure(error)
        } catch let error as HTTPServerError {
            throw CommandFailure(.software, error.description)
        }
        let shownHost = http.host.contains(":") ? "[\(http.host)]" : http.host
        say("listening on http://\(shownHost):\(port)")
        Output.shared.flush()

        var received: Int32 = 0
        while sigwait(&signals, &received) != 0 {}
        printError("epf serve: received \(received == SIGTERM ? "SIGTERM" : "SIGINT"), finishing in-flight requests")
        server.shutdown()
        server.waitUntilStopped()
        return .ok
    }
}
