import EPFQuery
import EPFServer
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

    ENDPOINTS (GET and HEAD, JSON):
      /v1/lookup?id=1,2,3[&country=us][&lang=en]   /v1/lookup?url=<store link>   (at most 200 ids)
      /v1/apps/{id}  /v1/apps/{id}/prices  /v1/collections/{id}  /v1/songs/{id}  /v1/videos/{id}
      /v1/artists/{id}  /v1/resolve?url=...  /v1/search?term=...&entity=...&country=...&limit=...
      /v1/storefronts  /v1/genres  /v1/status  /healthz  /metrics (Prometheus text)
      /lookup  /search   Apple's iTunes Search API paths and parameters (id, upc, isrc, amg*Id, entity,
                         limit, sort, country, lang, media, term, attribute, explicit, offset, callback)

    OPTIONS:
      --db PATH               Database file (default: $EPF_DB or ./epf.sqlite); must exist.
      --host ADDR             Address to listen on (default: 127.0.0.1; IPv4, IPv6 or localhost).
      --port N                Port (default: 8080; 0 picks a free one, printed on start).
      --threads N             Worker threads, each with its own database connection (default: cores).
      --max-age SECONDS       Cache-Control max-age of successful responses (default: 60).
      --idle-timeout SECONDS  Close connections idle, or slow to send a request, this long (default: 30).
      --max-connections N     Beyond this many open connections, answer 503 and close (default: 4096).
      --drain-timeout SECONDS Longest wait for in-flight requests on shutdown (default: 10).
      --cache-entries N       Rendered responses kept per worker for repeated requests, dropped whenever
                              the database changes (default: 10000; 0 turns the cache off).
      --access-log            Write one line per request to standard error.

    Prints 'listening on http://HOST:PORT' on standard output once ready.

    EXAMPLES:
      epf serve --db epf.sqlite --port 8080
      epf serve --port 0 --threads 4 --access-log
      curl 'http://127.0.0.1:8080/v1/lookup?id=364709193&country=gb'
    """

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let path = try databasePath(&arguments)
        var http = HTTPServerConfiguration()
        http.host = try arguments.option("host") ?? "127.0.0.1"
        http.port = try arguments.intOption("port", default: 8080, range: 0...65535)
        http.threads = try arguments.intOption("threads", default: HTTPServerConfiguration.processorCount,
                                               range: 1...256)
        http.maxAge = try arguments.intOption("max-age", default: 60, range: 0...31_536_000)
        http.idleTimeout = Double(try arguments.intOption("idle-timeout", default: 30, range: 1...86_400))
        http.maxConnections = try arguments.intOption("max-connections", default: 4096, range: 1...1_000_000)
        http.drainTimeout = Double(try arguments.intOption("drain-timeout", default: 10, range: 0...3600))
        let cacheEntries = try arguments.intOption("cache-entries", default: 10_000, range: 0...10_000_000)
        if arguments.flag("access-log") {
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

        var configuration = EPFServerConfiguration(databasePath: path, http: http)
        configuration.responseCacheEntries = cacheEntries
        let server = EPFAPI.makeServer(configuration)
        let port: Int
        do {
            port = try server.start()
        } catch let error as QueryError {
            switch error {
            case .databaseMissing:
                throw CommandFailure(.noInput, QueryCLI.message(error))
            default:
                throw CommandFailure(.dataError, QueryCLI.message(error))
            }
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
