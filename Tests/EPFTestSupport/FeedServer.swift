import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Faults a `FeedServer` injects, switchable while it runs.
public struct FeedFaults: Sendable {
    /// The next N file downloads are cut (connection closed) after half their bytes.
    public var dropMidFile = 0
    /// The next N file downloads send half their bytes, then nothing for `stallSeconds`.
    public var stallMidFile = 0
    /// How long a stall lasts.
    public var stallSeconds = 30.0
    /// Answer 200 with the whole file to every Range request.
    public var ignoreRange = false
    /// Paths (relative to the root) whose bytes are served with one byte changed, N more times each.
    public var corrupt: [String: Int] = [:]
    /// Path prefixes answered 404 although the listing shows them (an incremental not published yet).
    public var notFound: [String] = []
    /// Bytes per second per connection for file bodies (0: no limit).
    public var bytesPerSecond = 0
    /// Answer 503 to the next N requests.
    public var unavailable = 0

    /// No faults.
    public init() {}
}

/// A real HTTP/1.1 server on 127.0.0.1 (port 0) serving a directory like Apple's feed server: Apache "Index of"
/// listings (long names cut in the link text, sort links), Basic auth, HEAD, byte ranges, keep-alive, and faults.
/// One thread per connection, blocking sockets.
public final class FeedServer: @unchecked Sendable {
    /// The directory served at `/`.
    public let root: String
    /// The port it listens on.
    public private(set) var port = 0
    /// `user:password` required (Basic), or nil for none.
    public let credentials: String?

    private let lock = NSLock()
    private var listener: Int32 = -1
    private var faultState = FeedFaults()
    private var sent: [String: Int64] = [:]
    private var requests: [String] = []
    private var connections: Set<Int32> = []
    private var stopped = false

    /// Serves `root`; `credentials` as `user:password`.
    public init(root: String, credentials: String? = nil) {
        self.root = root
        self.credentials = credentials
    }

    /// The faults in force; change them at any time.
    public var faults: FeedFaults {
        get { lock.lock(); defer { lock.unlock() }; return faultState }
        set { lock.lock(); faultState = newValue; lock.unlock() }
    }

    /// Body bytes sent for `path` (relative, e.g. `current/itunes20260105/application.tbz`) so far.
    public func bytesSent(_ path: String) -> Int64 {
        lock.lock()
        defer { lock.unlock() }
        return sent[path] ?? 0
    }

    /// Body bytes sent for every file whose path ends in `.tbz`.
    public var archiveBytesSent: Int64 {
        lock.lock()
        defer { lock.unlock() }
        return sent.filter { $0.key.hasSuffix(".tbz") }.values.reduce(0, +)
    }

    /// Every request line seen, e.g. `GET /current/ range=-`.
    public var requestLog: [String] {
        lock.lock()
        defer { lock.unlock() }
        return requests
    }

    /// The base URL of `relative`, e.g. `url("current/")`.
    public func url(_ relative: String = "") -> String { "http://127.0.0.1:\(port)/\(relative)" }

    /// Binds 127.0.0.1 port 0 and starts accepting. Returns the port.
    @discardableResult
    public func start() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ServerError("socket: errno \(errno)") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 128) == 0 else { close(fd); throw ServerError("bind/listen: errno \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        listener = fd
        let thread = Thread { [self] in acceptLoop(fd) }
        thread.start()
        return port
    }

    /// Stops accepting and closes every connection.
    public func stop() {
        lock.lock()
        stopped = true
        let open = connections
        let fd = listener
        listener = -1
        lock.unlock()
        if fd >= 0 { shutdown(fd, Int32(SHUT_RDWR)); close(fd) }
        for connection in open { shutdown(connection, Int32(SHUT_RDWR)) }
    }

    deinit { stop() }

    private func acceptLoop(_ fd: Int32) {
        while true {
            let client = accept(fd, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            lock.lock()
            if stopped { lock.unlock(); close(client); return }
            connections.insert(client)
            lock.unlock()
            var one: Int32 = 1
            setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let thread = Thread { [self] in
                serve(client)
                lock.lock()
                connections.remove(client)
                lock.unlock()
                close(client)
            }
            thread.start()
        }
    }

    private struct Request {
        var method: String
        var path: String
        var headers: [String: String]
    }

    private func readRequest(_ fd: Int32, buffer: inout [UInt8]) -> Request? {
        var chunk = [UInt8](repeating: 0, count: 8192)
        while true {
            if let end = find(buffer, Array("\r\n\r\n".utf8)) {
                let head = String(decoding: buffer[0..<end], as: UTF8.self)
                buffer.removeFirst(end + 4)
                var lines = head.components(separatedBy: "\r\n")
                let requestLine = lines.removeFirst().split(separator: " ")
                guard requestLine.count >= 2 else { return nil }
                var headers: [String: String] = [:]
                for line in lines {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...]
                        .trimmingCharacters(in: .whitespaces)
                }
                return Request(method: String(requestLine[0]), path: String(requestLine[1]), headers: headers)
            }
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return nil }
            buffer += chunk[0..<count]
        }
    }

    private func find(_ haystack: [UInt8], _ needle: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for index in 0...(haystack.count - needle.count) where haystack[index] == needle[0] {
            if Array(haystack[index..<index + needle.count]) == needle { return index }
        }
        return nil
    }

    private func serve(_ fd: Int32) {
        var buffer: [UInt8] = []
        while let request = readRequest(fd, buffer: &buffer) {
            guard respond(fd, request) else { return }
            if request.headers["connection"]?.lowercased() == "close" { return }
        }
    }

    /// Answers one request; false when the connection must close.
    private func respond(_ fd: Int32, _ request: Request) -> Bool {
        var faults = self.faults
        let rawPath = String(request.path.split(separator: "?", maxSplits: 1).first ?? "")
        let relative = (rawPath.removingPercentEncoding ?? rawPath)
            .trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        lock.lock()
        requests.append("\(request.method) /\(relative) range=\(request.headers["range"] ?? "-")")
        faults.unavailable = faultState.unavailable > 0 ? 1 : 0
        if faultState.unavailable > 0 { faultState.unavailable -= 1 }
        lock.unlock()
        if faults.unavailable > 0 { return send(fd, status: "503 Service Unavailable", body: Array("busy\n".utf8)) }
        if let credentials {
            let expected = "Basic " + Data(credentials.utf8).base64EncodedString()
            guard request.headers["authorization"] == expected else {
                return send(fd, status: "401 Unauthorized", headers: ["WWW-Authenticate: Basic realm=\"EPF\""],
                            body: Array("Authorization Required\n".utf8))
            }
        }
        if relative.contains("..") || faults.notFound.contains(where: { !$0.isEmpty && relative.hasPrefix($0) }) {
            return send(fd, status: "404 Not Found", body: Array("Not Found\n".utf8))
        }
        let path = relative.isEmpty ? root : (root as NSString).appendingPathComponent(relative)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            return send(fd, status: "404 Not Found", body: Array("Not Found\n".utf8))
        }
        if isDirectory.boolValue {
            guard rawPath.hasSuffix("/") else {
                return send(fd, status: "301 Moved Permanently", headers: ["Location: \(rawPath)/"], body: [])
            }
            return send(fd, status: "200 OK", headers: ["Content-Type: text/html;charset=UTF-8"],
                        body: Array(listing(path, title: "/" + relative).utf8), head: request.method == "HEAD")
        }
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
              let size = (attributes[.size] as? NSNumber)?.intValue else {
            return send(fd, status: "403 Forbidden", body: [])
        }
        var status = "200 OK"
        var headers = ["Accept-Ranges: bytes", "Content-Type: application/octet-stream"]
        var first = 0
        var count = size
        if let range = request.headers["range"], !faults.ignoreRange, let (start, last) = parseRange(range, size) {
            guard start <= last else {
                return send(fd, status: "416 Range Not Satisfiable", headers: ["Content-Range: bytes */\(size)"],
                            body: [])
            }
            status = "206 Partial Content"
            headers.append("Content-Range: bytes \(start)-\(last)/\(size)")
            first = start
            count = last - start + 1
        }
        if request.method == "HEAD" {
            return writeAll(fd, Array(head(status: status, length: count, headers: headers).utf8))
        }
        lock.lock()
        var cut: Int?
        var stall = false
        var corruptAt: Int?
        if let remaining = faultState.corrupt[relative], remaining > 0, count > 0 {
            // One byte of what this answer carries is changed, so every range sees the fault.
            corruptAt = count / 2
            faultState.corrupt[relative] = remaining == Int.max ? remaining : remaining - 1
        }
        if relative.hasSuffix(".tbz") && count > 1 {
            if faultState.dropMidFile > 0 { faultState.dropMidFile -= 1; cut = count / 2 }
            else if faultState.stallMidFile > 0 { faultState.stallMidFile -= 1; cut = count / 2; stall = true }
        }
        lock.unlock()
        guard writeAll(fd, Array(head(status: status, length: count, headers: headers).utf8)) else { return false }
        let file = open(path, O_RDONLY | O_CLOEXEC)
        guard file >= 0 else { return false }
        defer { close(file) }
        return sendBody(fd, file: file, first: first, count: count, path: relative, cut: cut, stall: stall,
                        corruptAt: corruptAt, stallSeconds: faults.stallSeconds, rate: faults.bytesPerSecond)
    }

    private func head(status: String, length: Int, headers: [String]) -> String {
        var text = "HTTP/1.1 \(status)\r\nServer: Apache\r\nContent-Length: \(length)\r\n"
        for header in headers { text += header + "\r\n" }
        return text + "\r\n"
    }

    private func parseRange(_ header: String, _ size: Int) -> (Int, Int)? {
        guard header.hasPrefix("bytes="), !header.contains(",") else { return nil }
        let parts = header.dropFirst(6).split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let first = Int(parts[0]) else { return nil }
        let last = parts[1].isEmpty ? size - 1 : min(size - 1, Int(parts[1]) ?? (size - 1))
        return (first, first >= size ? -1 : last)
    }

    private func send(_ fd: Int32, status: String, headers: [String] = [], body: [UInt8], head: Bool = false) -> Bool {
        var text = "HTTP/1.1 \(status)\r\nServer: Apache\r\nContent-Length: \(body.count)\r\n"
        for header in headers { text += header + "\r\n" }
        text += "\r\n"
        return writeAll(fd, Array(text.utf8)) && (head || writeAll(fd, body))
    }

    private func sendBody(_ fd: Int32, file: Int32, first: Int, count: Int, path: String, cut: Int?, stall: Bool,
                          corruptAt: Int?, stallSeconds: Double, rate: Int) -> Bool {
        let limit = cut ?? count
        let started = Date()
        var offset = 0
        let chunk = rate > 0 ? max(1024, min(64 * 1024, rate / 50)) : 256 * 1024
        var buffer = [UInt8](repeating: 0, count: chunk)
        while offset < limit {
            let want = min(limit - offset, chunk)
            let got = buffer.withUnsafeMutableBytes { pread(file, $0.baseAddress, want, off_t(first + offset)) }
            guard got > 0 else { return false }
            if let corruptAt, corruptAt >= offset, corruptAt < offset + got { buffer[corruptAt - offset] ^= 0xFF }
            guard writeAll(fd, Array(buffer[0..<got])) else { return false }
            lock.lock()
            sent[path, default: 0] += Int64(got)
            lock.unlock()
            offset += got
            if rate > 0 {
                let due = Double(offset) / Double(rate) - Date().timeIntervalSince(started)
                if due > 0 { Thread.sleep(forTimeInterval: due) }
            }
        }
        if cut != nil {
            if stall {
                let until = Date().addingTimeInterval(stallSeconds)
                while Date() < until && !isStopped { Thread.sleep(forTimeInterval: 0.05) }
            }
            return false
        }
        return true
    }

    private var isStopped: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopped
    }

    private func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return false }
            offset += count
        }
        return true
    }

    /// An Apache 2.4 "Index of" page: sort links, a parent link, names cut to 23 characters in the link text.
    private func listing(_ directory: String, title: String) -> String {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
        var html = """
            <!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 3.2 Final//EN">
            <html>
             <head>
              <title>Index of \(title)</title>
             </head>
             <body>
            <h1>Index of \(title)</h1>
            <pre><img src="/icons/blank.gif" alt="Icon "> <a href="?C=N;O=D">Name</a>                    \
            <a href="?C=M;O=A">Last modified</a>      <a href="?C=S;O=A">Size</a>  \
            <a href="?C=D;O=A">Description</a><hr>\
            <img src="/icons/back.gif" alt="[PARENTDIR]"> <a href="/">Parent Directory</a>                             -

            """
        for name in names where !name.hasPrefix(".") {
            var isDirectory: ObjCBool = false
            let path = (directory as NSString).appendingPathComponent(name)
            _ = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
            let shown = isDirectory.boolValue ? name + "/" : name
            let text = shown.count > 23 ? String(shown.prefix(20)) + "..&gt;" : shown
            let href = (name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? name)
                + (isDirectory.boolValue ? "/" : "")
            html += "<img src=\"/icons/unknown.gif\" alt=\"[   ]\"> <a href=\"\(href)\">\(text)</a>"
                + String(repeating: " ", count: max(1, 25 - min(23, shown.count))) + "2026-01-05 10:00  1.2M\n"
        }
        return html + "<hr></pre>\n<address>Apache Server at 127.0.0.1</address>\n</body></html>\n"
    }
}

/// A failure starting the test server.
public struct ServerError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
