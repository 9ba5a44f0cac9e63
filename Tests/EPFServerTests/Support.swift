import HTTPTransport
import EPFServer
import EPFStore
import EPFTestSupport
import Foundation
import Glibc
import Testing

/// An in-process server on 127.0.0.1, port 0, over its own fixture database.
final class TestServer {
    let fixture: CatalogueDatabase
    let server: HTTPServer
    let port: Int

    init(threads: Int = 2, configure: (inout HTTPServerConfiguration) -> Void = { _ in }) throws {
        fixture = try CatalogueDatabase(walMode: true)
        var http = HTTPServerConfiguration()
        http.host = "127.0.0.1"
        http.port = 0
        http.threads = threads
        http.idleTimeout = 10
        http.drainTimeout = 5
        configure(&http)
        server = EPFAPI.makeServer(EPFServerConfiguration(databasePath: fixture.path, http: http,
                                                           status: StoreStatusReader()))
        port = try server.start()
    }

    func stop() {
        server.shutdown()
        server.waitUntilStopped()
        fixture.remove()
    }

    func client(timeout: Double = 5) throws -> Client {
        try Client(port: port, timeout: timeout)
    }

    /// One GET on a fresh connection.
    func get(_ target: String, headers: [String] = []) throws -> Response {
        let client = try client()
        try client.send(request(target, headers: headers))
        return try client.readResponse()
    }
}

func request(_ target: String, method: String = "GET", headers: [String] = [],
             version: String = "HTTP/1.1") -> String {
    var text = "\(method) \(target) \(version)\r\nHost: test\r\n"
    for header in headers { text += header + "\r\n" }
    return text + "\r\n"
}

struct ClientError: Error, CustomStringConvertible {
    let description: String
}

/// A parsed response.
struct Response {
    let status: Int
    let headers: [String: String]
    let body: [UInt8]

    var text: String { String(decoding: body, as: UTF8.self) }

    func json() throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            throw ClientError(description: "not a JSON object: \(text.prefix(200))")
        }
        return object
    }

    func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// A blocking HTTP/1.1 client over a POSIX socket with receive and send timeouts.
final class Client {
    let fd: Int32
    private var buffer: [UInt8] = []

    init(port: Int, timeout: Double = 5) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ClientError(description: "socket: errno \(errno)") }
        var time = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard rc == 0 else {
            let code = errno
            close(fd)
            throw ClientError(description: "connect: errno \(code)")
        }
    }

    deinit { close(fd) }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw ClientError(description: "send: errno \(errno)") }
            offset += count
        }
    }

    /// Shuts the write side (the server sees EOF).
    func finishSending() { shutdown(fd, Int32(SHUT_WR)) }

    /// Reads more bytes; false on EOF. Throws on timeout or error.
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer.append(contentsOf: chunk[0..<count])
                return true
            }
            if count == 0 { return false }
            if errno == EINTR { continue }
            throw ClientError(description: errno == EAGAIN ? "timed out reading" : "recv: errno \(errno)")
        }
    }

    /// Reads one response; `noBody` for HEAD (and 304 is always bodiless).
    func readResponse(noBody: Bool = false) throws -> Response {
        var headEnd: Int?
        while headEnd == nil {
            if let range = findHeadEnd() {
                headEnd = range
                break
            }
            guard try fill() else { throw ClientError(description: "connection closed before a response") }
        }
        guard let headEnd else { throw ClientError(description: "no head") }
        let head = String(decoding: buffer[0..<headEnd], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        guard !lines.isEmpty else { throw ClientError(description: "empty head") }
        let statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: " ")
        guard parts.count >= 2, parts[0] == "HTTP/1.1", let status = Int(parts[1]) else {
            throw ClientError(description: "bad status line: \(statusLine)")
        }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { throw ClientError(description: "bad header \(line)") }
            let name = line[..<colon].lowercased()
            if headers[name] != nil { throw ClientError(description: "duplicate header \(name)") }
            headers[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        buffer.removeFirst(headEnd)
        guard let lengthText = headers["content-length"], let length = Int(lengthText) else {
            throw ClientError(description: "no Content-Length in \(statusLine)")
        }
        var body: [UInt8] = []
        if !noBody && status != 304 {
            while buffer.count < length {
                guard try fill() else { throw ClientError(description: "connection closed inside a body") }
            }
            body = Array(buffer[0..<length])
            buffer.removeFirst(length)
        }
        return Response(status: status, headers: headers, body: body)
    }

    private func findHeadEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 3..<buffer.count where buffer[index] == 10 && buffer[index - 1] == 13
            && buffer[index - 2] == 10 && buffer[index - 3] == 13 {
            return index + 1
        }
        return nil
    }

    /// Reads until the server closes; returns everything not yet consumed. Throws on timeout.
    func readToEnd() throws -> [UInt8] {
        while try fill() {}
        defer { buffer = [] }
        return buffer
    }

    /// True when the server closed the connection (EOF or reset) within the timeout.
    func waitForClose() -> Bool {
        do {
            while try fill() {}
            return true
        } catch let error as ClientError {
            return !error.description.contains("timed out")
        } catch {
            return true
        }
    }
}

/// Runs `body` on `count` threads at once and waits for all of them.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        Thread.detachNewThread {
            body(index)
            group.leave()
        }
    }
    group.wait()
}

/// A thread-safe list of failures collected from helper threads.
final class Failures: @unchecked Sendable {  // `items` is only touched under `lock`.
    private let lock = NSLock()
    private var items: [String] = []

    func add(_ text: String) { lock.withLock { items.append(text) } }
    var all: [String] { lock.withLock { items } }
}
