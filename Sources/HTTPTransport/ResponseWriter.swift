import Glibc

/// Serializes responses into a connection's output buffer with pre-rendered header lines.
///
/// One per worker thread: it caches the `Date` line per second, `Last-Modified` per value and the status lines.
final class ResponseWriter {
    private let dateCache = DateHeaderCache()
    private var statusLines: [Int: [UInt8]] = [:]
    private var lastModifiedValue: Int64 = .min
    private var lastModifiedLine: [UInt8] = []
    private let publicCacheLine: [UInt8]
    private let noStoreLine = Array("Cache-Control: no-store\r\n".utf8)
    private let fixedLines = Array("Access-Control-Allow-Origin: *\r\n".utf8)
    private let keepAliveLine = Array("Connection: keep-alive\r\n".utf8)
    private let closeLine = Array("Connection: close\r\n".utf8)
    private let startTime = Int64(time(nil))
    private var contentTypeText = HTTPResponse.jsonType
    private var contentTypeLine = Array("Content-Type: \(HTTPResponse.jsonType)\r\n".utf8)

    init(maxAge: Int) {
        publicCacheLine = Array("Cache-Control: public, max-age=\(max(0, maxAge))\r\n".utf8)
    }

    /// The current IMF-fixdate, for access logs.
    var dateText: String { dateCache.text }

    /// Appends the status line, headers and (unless HEAD or 304) the body; returns what was sent.
    func write(_ response: HTTPResponse, for request: HTTPRequest?, keepAlive: Bool,
               into output: inout [UInt8]) -> (status: Int, bodyBytes: Int) {
        dateCache.refresh()
        let tag = Self.entityTag(response.body)
        let lastModified = response.lastModified ?? startTime
        var status = response.status
        if status == 200, let request, request.method == .get || request.method == .head,
           Self.notModified(request, tag: tag, lastModified: lastModified) {
            status = 304
        }
        let sendBody = status != 304 && request?.method != .head

        output.reserveCapacity(output.count + 400 + (sendBody ? response.body.count : 0))
        output.append(contentsOf: statusLine(status))
        output.append(contentsOf: dateCache.line)
        if status != 304 {
            if response.contentType != contentTypeText {
                contentTypeText = response.contentType
                contentTypeLine = Array("Content-Type: \(response.contentType)\r\n".utf8)
            }
            output.append(contentsOf: contentTypeLine)
        }
        output.append(contentsOf: "Content-Length: ".utf8)
        Self.appendDecimal(response.body.count, to: &output)
        output.append(contentsOf: "\r\nETag: ".utf8)
        output.append(contentsOf: tag)
        output.append(contentsOf: "\r\n".utf8)
        if lastModified != lastModifiedValue {
            lastModifiedValue = lastModified
            lastModifiedLine = Array("Last-Modified: \(HTTPDate.format(lastModified))\r\n".utf8)
        }
        output.append(contentsOf: lastModifiedLine)
        output.append(contentsOf: response.cache == .public ? publicCacheLine : noStoreLine)
        output.append(contentsOf: fixedLines)
        output.append(contentsOf: keepAlive ? keepAliveLine : closeLine)
        for header in response.headers {
            output.append(contentsOf: header.name.utf8)
            output.append(contentsOf: ": ".utf8)
            output.append(contentsOf: header.value.utf8)
            output.append(contentsOf: "\r\n".utf8)
        }
        output.append(contentsOf: "\r\n".utf8)
        if sendBody { output.append(contentsOf: response.body) }
        return (status, sendBody ? response.body.count : 0)
    }

    private func statusLine(_ status: Int) -> [UInt8] {
        if let line = statusLines[status] { return line }
        let line = Array("HTTP/1.1 \(status) \(HTTPStatus.reason(status))\r\n".utf8)
        statusLines[status] = line
        return line
    }

    /// A strong entity tag: a quoted 64-bit hash of the body (and its length) in hex.
    ///
    /// Eight bytes per multiply-and-fold step, so a 3 KB body costs well under a microsecond (a byte-wise
    /// FNV-1a took several); the tail bytes are folded in one at a time.
    static func entityTag(_ body: [UInt8]) -> [UInt8] {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(body.count)
        body.withUnsafeBytes { raw in
            var offset = 0
            while offset + 8 <= raw.count {
                hash = (hash ^ raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* 0x9E37_79B9_7F4A_7C15
                hash ^= hash >> 29
                offset += 8
            }
            while offset < raw.count {
                hash = (hash ^ UInt64(raw[offset])) &* 0x100_0000_01b3
                offset += 1
            }
        }
        hash ^= hash >> 32
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var tag = [UInt8](repeating: UInt8(ascii: "\""), count: 18)
        for index in 0..<16 {
            tag[16 - index] = digits[Int(hash & 0xF)]
            hash >>= 4
        }
        return tag
    }

    /// RFC 9110 section 13.1.2 and 13.1.3: `If-None-Match` wins; `If-Modified-Since` only without it.
    static func notModified(_ request: HTTPRequest, tag: [UInt8], lastModified: Int64) -> Bool {
        if let list = request.ifNoneMatch {
            for candidate in list.split(separator: ",") {
                var value = Substring(candidate.drop(while: { $0 == " " || $0 == "\t" }))
                while value.last == " " || value.last == "\t" { value = value.dropLast() }
                if value == "*" { return true }
                if value.hasPrefix("W/") { value = value.dropFirst(2) }
                if value.utf8.elementsEqual(tag) { return true }
            }
            return false
        }
        if let since = request.ifModifiedSince, let date = HTTPDate.parse(since) {
            return lastModified <= date
        }
        return false
    }

    static func appendDecimal(_ value: Int, to output: inout [UInt8]) {
        if value == 0 {
            output.append(UInt8(ascii: "0"))
            return
        }
        var digits: [UInt8] = []
        var rest = value
        while rest > 0 {
            digits.append(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        }
        output.append(contentsOf: digits.reversed())
    }
}
