import Glibc

/// One client connection, owned by one worker.
final class Connection {
    let fd: Int32
    /// Whether it counts toward `maxConnections` (a refused connection does not).
    let counted: Bool
    /// The client's address, for access logs ("" when logging is off).
    let peer: String
    var input: [UInt8] = []
    /// Where the next scan for the end of the head may start (see `HTTPParser.parse`).
    var scanned = 0
    var output: [UInt8] = []
    var outputSent = 0
    /// Last read or write progress (monotonic nanoseconds).
    var lastActivity: UInt64
    /// When the first byte of the request being received arrived.
    var requestStarted: UInt64 = 0
    /// Close once the output is written (HTTP/1.0, `Connection: close`, errors, draining).
    var closeAfterFlush = false
    /// The client sent FIN: no more requests can arrive.
    var peerClosed = false
    /// After the final response: write side shut, reading and discarding until EOF or the deadline.
    var lingerDeadline: UInt64 = 0
    /// The epoll events currently watched.
    var interest: UInt32

    init(fd: Int32, counted: Bool, peer: String, now: UInt64, interest: UInt32) {
        self.fd = fd
        self.counted = counted
        self.peer = peer
        lastActivity = now
        self.interest = interest
    }

    var pendingOutput: Int { output.count - outputSent }
    var isLingering: Bool { lingerDeadline != 0 }
}

/// Interrupts a worker's `epoll_wait` from any thread: an eventfd, closed when the last holder lets go.
final class WakeSignal: Sendable {
    /// The eventfd, in the worker's epoll set.
    let fd: Int32

    init(calls: LinuxCalls.Table) throws(SystemError) {
        fd = try systemCall("eventfd") { calls.eventfd(0, LinuxCalls.eventfdNonblock | LinuxCalls.eventfdCloexec) }
    }

    deinit { close(fd) }

    /// Wakes the worker so it notices `shutdown()`.
    func wake() {
        var one: UInt64 = 1
        // A full counter (EAGAIN) already wakes the loop; nothing else can fail on a valid eventfd.
        _ = try? nonBlockingCall("write") { write(fd, &one, 8) }
    }

    /// Consumes the wake-ups (the worker's side).
    func drain() {
        var value: UInt64 = 0
        _ = try? nonBlockingCall("read") { read(fd, &value, 8) }
    }
}

/// One event-loop thread: its own epoll set, connections, responder and caches. Made on the starting thread and
/// then used only by its own (handed over by `pthread_create`, not shared); other threads reach it only through
/// its `wakeSignal`.
final class Worker {
    let index: Int
    private let listener: Int32
    /// Wakes this worker's loop; the server keeps it to call from `shutdown()`.
    let wakeSignal: WakeSignal
    private let epoll: EPoll
    private let calls: LinuxCalls.Table
    private unowned let server: HTTPServer
    private let responder: any HTTPResponder
    private let shard: ServerMetrics.Shard
    private let configuration: HTTPServerConfiguration
    private var connections: [Int32: Connection] = [:]
    private var stopping = false
    private var acceptPausedUntil: UInt64 = 0
    private var now: UInt64 = 0
    private let scratch: UnsafeMutableRawBufferPointer
    private let writer: ResponseWriter
    private let idleNanoseconds: UInt64
    private let lingerNanoseconds: UInt64

    /// Stop parsing pipelined requests while this much output waits to be written.
    private static let outputHighWater = 256 * 1024

    init(index: Int, listener: Int32, server: HTTPServer, responder: any HTTPResponder) throws(HTTPServerError) {
        self.index = index
        self.listener = listener
        self.server = server
        self.responder = responder
        configuration = server.configuration
        shard = server.metrics.makeShard()
        idleNanoseconds = UInt64(max(0.001, configuration.idleTimeout) * 1e9)
        lingerNanoseconds = UInt64(max(0.001, configuration.lingerTimeout) * 1e9)
        writer = ResponseWriter(maxAge: configuration.maxAge)
        do {
            calls = try LinuxCalls.resolved()
            epoll = try EPoll()
            wakeSignal = try WakeSignal(calls: calls)
            try epoll.add(wakeSignal.fd, LinuxCalls.epollIn)
            // EPOLLEXCLUSIVE: one idle worker is woken per new connection, not all of them.
            try epoll.add(listener, LinuxCalls.epollIn | (1 << 28))
        } catch {
            throw .system(error)
        }
        scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
    }

    deinit {
        scratch.deallocate()
    }

    /// The event loop; returns after `shutdown()` once connections are drained.
    func run() {
        now = monotonicNanoseconds()
        var nextTick = now + 1_000_000_000
        var drainDeadline: UInt64 = 0
        while true {
            let wait = stopping ? 50 : Int32(clamping: (nextTick &- min(now, nextTick)) / 1_000_000 + 1)
            let count: Int
            do {
                count = try epoll.wait(timeout: min(wait, 1000))
            } catch {
                break  // epoll_wait only fails on programming errors (EBADF, EINVAL); stop this worker.
            }
            now = monotonicNanoseconds()
            for slot in 0..<count {
                let event = epoll.event(at: slot)
                if event.fd == wakeSignal.fd {
                    wakeSignal.drain()
                } else if event.fd == listener {
                    if !stopping { acceptConnections() }
                } else if let connection = connections[event.fd] {
                    service(connection, event.mask)
                }
            }
            if !stopping && server.stopFlag.isSet {
                stopping = true
                drainDeadline = now + UInt64(max(0, configuration.drainTimeout) * 1e9)
                try? epoll.remove(listener)
                for connection in Array(connections.values) where connection.input.isEmpty
                    && connection.pendingOutput == 0 && !connection.isLingering {
                    closeConnection(connection)
                }
            }
            if now >= nextTick || stopping {
                sweep()
                if now >= nextTick {
                    responder.tick()
                    nextTick = now + 1_000_000_000
                }
            }
            if acceptPausedUntil != 0 && now >= acceptPausedUntil && !stopping {
                acceptPausedUntil = 0
                try? epoll.add(listener, LinuxCalls.epollIn | (1 << 28))
            }
            if stopping && (connections.isEmpty || now >= drainDeadline) { break }
        }
        for connection in Array(connections.values) { closeConnection(connection) }
    }

    // MARK: Accepting

    private func acceptConnections() {
        for _ in 0..<16 {
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let flags = Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
            let accepted: NonBlocking<Int32>
            do {
                accepted = try nonBlockingCall("accept4") {
                    withUnsafeMutablePointer(to: &storage) { pointer in
                        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                            calls.accept4(listener, address, &length, flags)
                        }
                    }
                }
            } catch {
                switch error.code {
                case ECONNABORTED, EPROTO: continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    // Out of descriptors: stop watching the listener for a moment instead of spinning.
                    try? epoll.remove(listener)
                    acceptPausedUntil = now + 100_000_000
                    return
                default: return
                }
            }
            guard case .done(let fd) = accepted else { return }  // another worker took it, or the queue is empty
            shard.countAccepted()
            try? setSocketOption(fd, Int32(IPPROTO_TCP), TCP_NODELAY, 1, "TCP_NODELAY")
            let counted = server.metrics.openConnection(limit: configuration.maxConnections)
            let peer = configuration.accessLog == nil ? "" : Self.describe(storage)
            let connection = Connection(fd: fd, counted: counted, peer: peer, now: now, interest: LinuxCalls.epollIn)
            do {
                try epoll.add(fd, LinuxCalls.epollIn)
            } catch {
                if counted { server.metrics.closeConnection() }
                close(fd)
                continue
            }
            connections[fd] = connection
            if !counted {
                shard.countRejected()
                let response = failure(HTTPFailure(status: 503,
                                                   message: "too many open connections; try again shortly",
                                                   route: "overload", headers: [("Retry-After", "1")]))
                send(response, for: nil, keepAlive: false, on: connection, started: now)
                connection.closeAfterFlush = true
                advance(connection)
            }
        }
    }

    private static func describe(_ storage: sockaddr_storage) -> String {
        var storage = storage
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let family = Int32(storage.ss_family)
        return withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: UInt8.self, capacity: MemoryLayout<sockaddr_storage>.size) { raw in
                if family == AF_INET {
                    // sin_addr at offset 4.
                    inet_ntop(AF_INET, raw + 4, &text, socklen_t(text.count))
                } else if family == AF_INET6 {
                    // sin6_addr at offset 8.
                    inet_ntop(AF_INET6, raw + 8, &text, socklen_t(text.count))
                }
                return String(decoding: text.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) },
                              as: UTF8.self)
            }
        }
    }

    // MARK: Connection events

    private func service(_ connection: Connection, _ mask: UInt32) {
        if connection.isLingering {
            discardInput(connection)
            return
        }
        if mask & (LinuxCalls.epollIn | LinuxCalls.epollHup | LinuxCalls.epollErr) != 0
            && connection.interest & LinuxCalls.epollIn != 0 {
            guard readInput(connection) else { return }
        }
        if mask & LinuxCalls.epollErr != 0 && connection.interest & LinuxCalls.epollIn == 0 {
            closeConnection(connection)
            return
        }
        advance(connection)
    }

    /// Reads once; false when the connection was closed because of an error.
    private func readInput(_ connection: Connection) -> Bool {
        switch try? nonBlockingCall("read", { read(connection.fd, scratch.baseAddress, scratch.count) }) {
        case .done(let count) where count > 0:
            if connection.input.isEmpty { connection.requestStarted = now }
            connection.input.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[0..<count]))
            connection.lastActivity = now
            return true
        case .done:
            connection.peerClosed = true
            return true
        case .wouldBlock:
            return true
        case nil:
            closeConnection(connection)
            return false
        }
    }

    private func discardInput(_ connection: Connection) {
        switch try? nonBlockingCall("read", { read(connection.fd, scratch.baseAddress, scratch.count) }) {
        case .done(let count) where count > 0: return
        case .wouldBlock: return
        case .done, nil: closeConnection(connection)
        }
    }

    /// Answers complete requests, writes, and decides what to wait for next.
    private func advance(_ connection: Connection) {
        while true {
            let blocked = processRequests(connection)
            guard flush(connection) else { return }
            if connection.pendingOutput > 0 {
                watch(connection, LinuxCalls.epollOut)
                return
            }
            if blocked && !connection.closeAfterFlush { continue }  // more pipelined requests may be waiting
            break
        }
        if connection.closeAfterFlush {
            beginLinger(connection)
        } else if connection.peerClosed || (stopping && connection.input.isEmpty) {
            closeConnection(connection)
        } else {
            watch(connection, LinuxCalls.epollIn)
        }
    }

    /// Parses and answers buffered requests; true when it stopped because too much output is waiting.
    private func processRequests(_ connection: Connection) -> Bool {
        var consumed = 0
        defer {
            if consumed > 0 {
                connection.input.removeFirst(consumed)
                if !connection.input.isEmpty { connection.requestStarted = now }
            }
        }
        while !connection.closeAfterFlush {
            if connection.pendingOutput >= Self.outputHighWater { return true }
            if consumed >= connection.input.count { break }
            let outcome = connection.input.withUnsafeBytes { raw in
                HTTPParser.parse(UnsafeRawBufferPointer(rebasing: raw[consumed...]), scanFrom: connection.scanned)
            }
            switch outcome {
            case .incomplete(let scanned):
                connection.scanned = scanned
                return false
            case .request(let request, let length):
                consumed += length
                connection.scanned = 0
                let started = monotonicNanoseconds()
                let response = responder.respond(to: request)
                let keepAlive = request.keepAlive && !stopping
                send(response, for: request, keepAlive: keepAlive, on: connection, started: started)
                if !keepAlive { connection.closeAfterFlush = true }
            case .failure(let status, let message):
                let path = connection.input.withUnsafeBytes {
                    HTTPParser.requestPath(in: UnsafeRawBufferPointer(rebasing: $0[consumed...]))
                }
                consumed = connection.input.count
                let response = failure(HTTPFailure(status: status, message: message, route: "invalid", path: path))
                send(response, for: nil, keepAlive: false, on: connection, started: monotonicNanoseconds())
                connection.closeAfterFlush = true
            }
        }
        return false
    }

    /// The responder's rendering of a refusal, named after the failure in metrics and logs.
    private func failure(_ failure: HTTPFailure) -> HTTPResponse {
        var response = responder.respond(to: failure)
        response.route = failure.route
        return response
    }

    private func send(_ response: HTTPResponse, for request: HTTPRequest?, keepAlive: Bool,
                      on connection: Connection, started: UInt64) {
        let result = writer.write(response, for: request, keepAlive: keepAlive, into: &connection.output)
        let finished = monotonicNanoseconds()
        let seconds = Double(finished &- started) / 1e9
        shard.record(route: response.route, status: result.status, seconds: seconds)
        if let log = configuration.accessLog {
            let line: String
            if let request {
                let version = request.version == .http11 ? "HTTP/1.1" : "HTTP/1.0"
                line = "\(connection.peer) - - [\(writer.dateText)] "
                    + "\"\(request.method) \(request.target) \(version)\" "
                    + "\(result.status) \(result.bodyBytes) \(Int(seconds * 1e6))us"
            } else {
                line = "\(connection.peer) - - [\(writer.dateText)] \"-\" \(result.status) \(result.bodyBytes) "
                    + "\(Int(seconds * 1e6))us"
            }
            log(line)
        }
    }

    /// Writes as much output as the socket takes; false when the connection was closed.
    private func flush(_ connection: Connection) -> Bool {
        sending: while connection.pendingOutput > 0 {
            let sent = try? nonBlockingCall("send") {
                connection.output.withUnsafeBytes { raw in
                    Glibc.send(connection.fd, raw.baseAddress.map { $0 + connection.outputSent },
                               connection.pendingOutput, Int32(MSG_NOSIGNAL))
                }
            }
            switch sent {
            case .done(let count) where count > 0:
                connection.outputSent += count
                connection.lastActivity = now
                continue
            case .wouldBlock:
                break sending
            case .done, nil:
                closeConnection(connection)
                return false
            }
        }
        if connection.pendingOutput == 0 {
            if connection.output.count > 64 * 1024 {
                connection.output = []
            } else {
                connection.output.removeAll(keepingCapacity: true)
            }
            connection.outputSent = 0
        }
        return true
    }

    private func watch(_ connection: Connection, _ mask: UInt32) {
        guard connection.interest != mask else { return }
        do {
            try epoll.modify(connection.fd, mask)
            connection.interest = mask
        } catch {
            closeConnection(connection)
        }
    }

    /// Shuts the write side after the final response and keeps reading until EOF, so the client gets it.
    private func beginLinger(_ connection: Connection) {
        if connection.peerClosed {
            closeConnection(connection)
            return
        }
        shutdown(connection.fd, Int32(SHUT_WR))
        connection.lingerDeadline = now + lingerNanoseconds
        connection.input = []
        watch(connection, LinuxCalls.epollIn)
    }

    private func closeConnection(_ connection: Connection) {
        guard connections.removeValue(forKey: connection.fd) != nil else { return }
        close(connection.fd)
        if connection.counted { server.metrics.closeConnection() }
    }

    /// Closes connections that idled, stalled, or took too long to send a request.
    private func sweep() {
        for connection in Array(connections.values) {
            if connection.isLingering {
                if now >= connection.lingerDeadline { closeConnection(connection) }
            } else if connection.pendingOutput > 0 {
                if now &- connection.lastActivity > idleNanoseconds {
                    shard.countTimedOut()
                    closeConnection(connection)
                }
            } else if !connection.input.isEmpty {
                if now &- connection.requestStarted > idleNanoseconds {
                    shard.countTimedOut()
                    let path = connection.input.withUnsafeBytes { HTTPParser.requestPath(in: $0) }
                    let response = failure(HTTPFailure(status: 408, message: "request not received within the idle "
                                                       + "timeout", route: "timeout", path: path))
                    send(response, for: nil, keepAlive: false, on: connection, started: now)
                    connection.closeAfterFlush = true
                    connection.input = []
                    advance(connection)
                }
            } else if stopping || now &- connection.lastActivity > idleNanoseconds {
                if !stopping { shard.countTimedOut() }
                closeConnection(connection)
            }
        }
    }
}
