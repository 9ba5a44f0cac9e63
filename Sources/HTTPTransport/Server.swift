import EPFConcurrency
import Glibc

/// Answers requests on one worker thread.
///
/// Each worker thread gets its own responder from the factory given to `HTTPServer`, so a responder may
/// hold state that is not thread-safe (a SQLite connection, prepared statements, caches).
package protocol HTTPResponder: AnyObject {
    /// Builds the response to one request. Must not block for long: it runs on the event loop.
    func respond(to request: HTTPRequest) -> HTTPResponse
    /// Renders the response to a request the transport refuses itself (bad bytes, overload, timeout). The
    /// transport sends it with `Connection: close`, records it under `failure.route`, and adds nothing else.
    func respond(to failure: HTTPFailure) -> HTTPResponse
    /// `Last-Modified` (seconds since 1970) when a response does not set its own.
    var defaultLastModified: Int64 { get }
    /// Called on the worker thread about once a second, for housekeeping such as reopening a database.
    func tick()
}

/// Settings of the HTTP transport.
package struct HTTPServerConfiguration: Sendable {
    /// Address to bind: an IPv4 or IPv6 literal, or `localhost`.
    package var host = "127.0.0.1"
    /// Port to bind; 0 picks a free port (read it back from `HTTPServer.port`).
    package var port = 8080
    /// Worker threads, each with its own epoll set and responder.
    package var threads = HTTPServerConfiguration.processorCount
    /// `max-age` of `Cache-Control: public` responses, in seconds.
    package var maxAge = 60
    /// Seconds a connection may idle between requests, or take to send one request, or stall a write.
    package var idleTimeout = 30.0
    /// Open connections beyond this get a 503 and are closed.
    package var maxConnections = 4096
    /// Seconds to finish in-flight requests after `shutdown()` before closing what is left.
    package var drainTimeout = 10.0
    /// Seconds to keep reading (and discarding) after sending a final response, so it is not lost to a reset.
    package var lingerTimeout = 2.0
    /// Receives one access-log line per request when set; called on worker threads.
    package var accessLog: (@Sendable (String) -> Void)?

    /// The defaults above.
    package init() {}

    /// Online processors (`sysconf(_SC_NPROCESSORS_ONLN)`), at least 1.
    package static var processorCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }
}

/// Errors from starting the server.
package enum HTTPServerError: Error, CustomStringConvertible, Sendable {
    /// `host` is not an IP literal or `localhost`.
    case badHost(String)
    /// A system call failed while binding or starting threads.
    case system(SystemError)
    /// `start()` was called twice.
    case alreadyStarted

    package var description: String {
        switch self {
        case .badHost(let host): return "cannot listen on '\(host)': give an IPv4 or IPv6 address, or localhost"
        case .system(let error):
            if error.code == EADDRINUSE { return "\(error); another process is using the port: choose --port" }
            return error.description
        case .alreadyStarted: return "the server was already started"
        }
    }
}

/// An HTTP/1.1 server: one listening socket shared by N worker threads, each running an epoll loop.
///
/// Thread-safe: `start`, `shutdown` and `waitUntilStopped` may be called from any thread.
package final class HTTPServer: Sendable {
    /// The settings it was created with.
    package let configuration: HTTPServerConfiguration
    /// Request and connection metrics, shared with whoever renders `/metrics`.
    package let metrics: ServerMetrics
    private let makeResponder: @Sendable (Int) throws -> any HTTPResponder
    /// The server's mutable state, behind `state`.
    private struct State {
        var listener: Int32 = -1
        /// How to wake each worker's event loop (the workers themselves belong to their threads).
        var wakes: [WakeSignal] = []
        var threads: [pthread_t] = []
        var boundPort = 0
        var started = false
        var joined = false
    }

    private let state = Mutex(State())
    let stopFlag = StopFlag()

    /// Creates a server; `makeResponder(i)` is called once per worker thread by `start()`.
    package init(configuration: HTTPServerConfiguration, metrics: ServerMetrics = ServerMetrics(),
                makeResponder: @escaping @Sendable (Int) throws -> any HTTPResponder) {
        self.configuration = configuration
        self.metrics = metrics
        self.makeResponder = makeResponder
    }

    /// The bound port (useful after binding port 0); 0 before `start()`.
    package var port: Int { state.withLock { $0.boundPort } }

    /// Binds, creates the responders and starts the worker threads; returns the bound port.
    ///
    /// Throws `HTTPServerError` for a bad host or a failed syscall, or whatever `makeResponder` throws.
    @discardableResult
    package func start() throws -> Int {
        try state.withLock { state in
            guard !state.started else { throw HTTPServerError.alreadyStarted }
            state.started = true
        }
        let socket = try Self.listen(host: configuration.host, port: configuration.port)
        var created: [Worker] = []
        do {
            let port = try Self.localPort(socket)
            Self.raiseDescriptorLimit(wanted: configuration.maxConnections + 64)
            for index in 0..<max(1, configuration.threads) {
                let responder = try makeResponder(index)
                created.append(try Worker(index: index, listener: socket, server: self, responder: responder))
            }
            var spawned: [pthread_t] = []
            for worker in created {
                var thread = pthread_t()
                let context = Unmanaged.passRetained(worker).toOpaque()
                let rc = pthread_create(&thread, nil, { raw in
                    guard let raw else { return nil }
                    let worker = Unmanaged<Worker>.fromOpaque(raw).takeRetainedValue()
                    worker.run()
                    return nil
                }, context)
                guard rc == 0 else {
                    Unmanaged<Worker>.fromOpaque(context).release()
                    stopFlag.set()
                    for worker in created { worker.wakeSignal.wake() }
                    for thread in spawned { pthread_join(thread, nil) }
                    throw HTTPServerError.system(SystemError(call: "pthread_create", code: rc))
                }
                spawned.append(thread)
            }
            state.withLock { state in
                state.listener = socket
                state.wakes = created.map(\.wakeSignal)
                state.threads = spawned
                state.boundPort = port
            }
            return port
        } catch {
            close(socket)
            throw error
        }
    }

    /// Stops accepting, lets in-flight requests finish (up to `drainTimeout`), then the workers exit.
    ///
    /// Returns at once; call `waitUntilStopped()` to wait. Safe to call more than once.
    package func shutdown() {
        stopFlag.set()
        for wake in state.withLock({ $0.wakes }) { wake.wake() }
    }

    /// Blocks until every worker thread has exited, then closes the listening socket.
    package func waitUntilStopped() {
        let toJoin: [pthread_t] = state.withLock { state in
            guard !state.joined else { return [] }
            state.joined = true
            return state.threads
        }
        for thread in toJoin { pthread_join(thread, nil) }
        state.withLock { state in
            if state.listener >= 0 { close(state.listener) }
            state.listener = -1
            state.wakes = []
        }
    }

    private static func listen(host: String, port: Int) throws -> Int32 {
        var storage = sockaddr_storage()
        let length: socklen_t
        let family: Int32
        let literal = host == "localhost" ? "127.0.0.1" : host
        guard (0...65535).contains(port) else { throw HTTPServerError.badHost("\(host):\(port)") }
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, literal, &v4) == 1 {
            family = AF_INET
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
            withUnsafeMutableBytes(of: &storage) { raw in
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = in_port_t(UInt16(port).bigEndian)
                address.sin_addr = v4
                raw.storeBytes(of: address, as: sockaddr_in.self)
            }
        } else if inet_pton(AF_INET6, literal, &v6) == 1 {
            family = AF_INET6
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
            withUnsafeMutableBytes(of: &storage) { raw in
                var address = sockaddr_in6()
                address.sin6_family = sa_family_t(AF_INET6)
                address.sin6_port = in_port_t(UInt16(port).bigEndian)
                address.sin6_addr = v6
                raw.storeBytes(of: address, as: sockaddr_in6.self)
            }
        } else {
            throw HTTPServerError.badHost(host)
        }
        do {
            let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
            let fd = try systemCall("socket") { Glibc.socket(family, type, 0) }
            do {
                try setSocketOption(fd, SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR")
                _ = try withUnsafePointer(to: &storage) { pointer throws(SystemError) in
                    try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address throws(SystemError) in
                        try systemCall("bind(\(host):\(port))") { bind(fd, address, length) }
                    }
                }
                _ = try systemCall("listen") { Glibc.listen(fd, 4096) }
                return fd
            } catch {
                close(fd)
                throw error
            }
        } catch let error as SystemError {
            throw HTTPServerError.system(error)
        }
    }

    private static func localPort(_ fd: Int32) throws -> Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        do {
            _ = try withUnsafeMutablePointer(to: &storage) { pointer throws(SystemError) in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address throws(SystemError) in
                    try systemCall("getsockname") { getsockname(fd, address, &length) }
                }
            }
        } catch {
            throw HTTPServerError.system(error)
        }
        return withUnsafeBytes(of: &storage) { raw in
            // sin_port and sin6_port are both at offset 2.
            Int(UInt16(bigEndian: raw.load(fromByteOffset: 2, as: UInt16.self)))
        }
    }

    /// Raises the soft `RLIMIT_NOFILE` toward `wanted` (never above the hard limit); failures are ignored.
    private static func raiseDescriptorLimit(wanted: Int) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        let target = min(rlim_t(wanted), limit.rlim_max)
        if limit.rlim_cur < target {
            limit.rlim_cur = target
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
    }
}

/// A one-way flag set by `shutdown()` and read by the workers.
final class StopFlag: Sendable {
    private let value = Mutex(false)

    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}
