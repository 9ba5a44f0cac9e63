import Glibc

/// The outcome of looking at the bytes buffered on a connection (package-visible for the fuzz targets).
package enum HeadParse {
    /// No complete head yet; the next call may start scanning for the blank line at `scanned`.
    case incomplete(scanned: Int)
    /// A complete head of `consumed` bytes (including any leading empty lines).
    case request(HTTPRequest, consumed: Int)
    /// A malformed or refused request: answer with `status` and close the connection.
    case failure(status: Int, message: String)
}

/// Incremental HTTP/1.x request-head parser over raw bytes (RFC 9112, section 2-3 and 5).
///
/// It never makes a `String` until a head is complete and within the limits. Every malformed input
/// becomes a `.failure` with a 4xx/5xx status, never a trap. Package-visible for the fuzz targets.
package enum HTTPParser {
    /// Longest request line (method, target, version): longer gets 414.
    static let maxRequestLine = 8192
    /// Largest header section after the request line: larger gets 431.
    static let maxHeaderBytes = 16384
    /// Most header fields: more gets 431.
    static let maxHeaderCount = 100
    /// Most empty lines tolerated before a request line (RFC 9112 section 2.2).
    static let maxLeadingEmptyLines = 64

    private static let lf = UInt8(ascii: "\n")
    private static let cr = UInt8(ascii: "\r")
    private static let space = UInt8(ascii: " ")
    private static let tab = UInt8(ascii: "\t")

    /// The path of the request line at the start of `buffer` as sent (up to `?`, a space or the line's end, at most
    /// 256 bytes, not decoded), for answering a refused request in the shape of the API it called; nil when the
    /// bytes hold no method and no target starting with `/`.
    package static func requestPath(in buffer: UnsafeRawBufferPointer) -> String? {
        let bytes = buffer.prefix(maxRequestLine + maxLeadingEmptyLines * 2)
        guard var index = bytes.firstIndex(where: { $0 != cr && $0 != lf }) else { return nil }
        while index < bytes.endIndex, bytes[index] != space {
            if bytes[index] == cr || bytes[index] == lf { return nil }
            index += 1
        }
        index += 1
        guard index < bytes.endIndex, bytes[index] == UInt8(ascii: "/") else { return nil }
        var end = index
        while end < bytes.endIndex, end - index < 256,
              ![space, cr, lf, UInt8(ascii: "?")].contains(bytes[end]) { end += 1 }
        return String(decoding: bytes[index..<end], as: UTF8.self)
    }

    /// Parses the head at the start of `buffer`; `scanFrom` is a previous `.incomplete(scanned:)`.
    package static func parse(_ buffer: UnsafeRawBufferPointer, scanFrom: Int) -> HeadParse {
        let count = buffer.count
        guard count > 0, let base = buffer.baseAddress else { return .incomplete(scanned: 0) }
        let bytes = base.assumingMemoryBound(to: UInt8.self)

        var start = 0
        while start < count, bytes[start] == cr || bytes[start] == lf { start += 1 }
        if start > maxLeadingEmptyLines * 2 { return .failure(status: 400, message: "too many empty lines") }
        if start == count { return .incomplete(scanned: 0) }

        guard let newline = memchr(base + start, Int32(lf), count - start) else {
            if count - start > maxRequestLine {
                return .failure(status: 414, message: "request line longer than \(maxRequestLine) bytes")
            }
            return .incomplete(scanned: 0)
        }
        let firstLF = base.distance(to: UnsafeRawPointer(newline))
        if firstLF - start > maxRequestLine {
            return .failure(status: 414, message: "request line longer than \(maxRequestLine) bytes")
        }

        // Look for the blank line ending the head: a LF preceded by LF or CR LF.
        var position = max(firstLF + 1, scanFrom)
        var headEnd = -1
        while position < count {
            guard let found = memchr(base + position, Int32(lf), count - position) else { break }
            let index = base.distance(to: UnsafeRawPointer(found))
            if bytes[index - 1] == lf || (bytes[index - 1] == cr && index >= 2 && bytes[index - 2] == lf) {
                headEnd = index + 1
                break
            }
            position = index + 1
        }
        guard headEnd > 0 else {
            // The limit counts the headers without the blank line's CR LF, as below for a complete head: a head
            // accepted whole must not be refused when its last two bytes have not arrived yet.
            if count - (firstLF + 1) > maxHeaderBytes + 2 {
                return .failure(status: 431, message: "request headers larger than \(maxHeaderBytes) bytes")
            }
            return .incomplete(scanned: count)
        }
        if headEnd - (firstLF + 1) > maxHeaderBytes + 2 {
            return .failure(status: 431, message: "request headers larger than \(maxHeaderBytes) bytes")
        }
        let head = UnsafeBufferPointer(start: bytes, count: headEnd)
        switch parseHead(head, requestLine: start..<firstLF, headers: (firstLF + 1)..<headEnd) {
        case .success(let request): return .request(request, consumed: headEnd)
        case .failure(let failure): return .failure(status: failure.status, message: failure.message)
        }
    }

    struct Failure: Error {
        let status: Int
        let message: String
        init(_ status: Int, _ message: String) {
            self.status = status
            self.message = message
        }
    }

    private static func trimCR(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Range<Int> {
        if range.upperBound > range.lowerBound, bytes[range.upperBound - 1] == cr {
            return range.lowerBound..<(range.upperBound - 1)
        }
        return range
    }

    /// tchar from RFC 9110 section 5.6.2.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
             UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
             UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    private static func equalsLowercase(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>,
                                        _ name: StaticString) -> Bool {
        guard range.count == name.utf8CodeUnitCount else { return false }
        let expected = name.utf8Start
        for offset in 0..<range.count where bytes[range.lowerBound + offset] | 0x20 != expected[offset] {
            return false
        }
        return true
    }

    private static func string(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    private static func parseHead(_ bytes: UnsafeBufferPointer<UInt8>, requestLine: Range<Int>,
                                  headers: Range<Int>) -> Result<HTTPRequest, Failure> {
        let line = trimCR(bytes, requestLine)
        // method SP request-target SP HTTP-version
        var index = line.lowerBound
        while index < line.upperBound, bytes[index] != space { index += 1 }
        let methodRange = line.lowerBound..<index
        guard !methodRange.isEmpty, methodRange.count <= 32,
              methodRange.allSatisfy({ isTokenByte(bytes[$0]) }) else {
            return .failure(Failure(400, "malformed request line: bad method"))
        }
        guard index < line.upperBound else { return .failure(Failure(400, "malformed request line")) }
        index += 1
        let targetStart = index
        while index < line.upperBound, bytes[index] != space { index += 1 }
        let targetRange = targetStart..<index
        guard !targetRange.isEmpty, index < line.upperBound else {
            return .failure(Failure(400, "malformed request line: missing target or version"))
        }
        for position in targetRange where bytes[position] <= 0x20 || bytes[position] >= 0x7F {
            return .failure(Failure(400, "request target contains a byte that must be percent-encoded"))
        }
        let versionRange = (index + 1)..<line.upperBound
        let version: HTTPVersion
        switch parseVersion(bytes, versionRange) {
        case .success(let parsed): version = parsed
        case .failure(let failure): return .failure(failure)
        }

        var hostCount = 0
        var wantsClose = false
        var wantsKeepAlive = false
        var contentLength: UInt64?
        var ifNoneMatch: String?
        var ifModifiedSince: String?
        var headerCount = 0
        var position = headers.lowerBound
        while position < headers.upperBound {
            var end = position
            while end < headers.upperBound, bytes[end] != lf { end += 1 }
            let fieldLine = trimCR(bytes, position..<end)
            position = end + 1
            if fieldLine.isEmpty { break }
            headerCount += 1
            if headerCount > maxHeaderCount {
                return .failure(Failure(431, "more than \(maxHeaderCount) request header fields"))
            }
            if bytes[fieldLine.lowerBound] == space || bytes[fieldLine.lowerBound] == tab {
                return .failure(Failure(400, "obsolete header line folding is not accepted"))
            }
            var colon = fieldLine.lowerBound
            while colon < fieldLine.upperBound, bytes[colon] != UInt8(ascii: ":") { colon += 1 }
            guard colon < fieldLine.upperBound else {
                return .failure(Failure(400, "header line without a colon"))
            }
            let name = fieldLine.lowerBound..<colon
            guard !name.isEmpty, name.allSatisfy({ isTokenByte(bytes[$0]) }) else {
                return .failure(Failure(400, "malformed header field name"))
            }
            var valueStart = colon + 1
            var valueEnd = fieldLine.upperBound
            while valueStart < valueEnd, bytes[valueStart] == space || bytes[valueStart] == tab { valueStart += 1 }
            while valueEnd > valueStart, bytes[valueEnd - 1] == space || bytes[valueEnd - 1] == tab { valueEnd -= 1 }
            let value = valueStart..<valueEnd
            for offset in value {
                let byte = bytes[offset]
                if (byte < 0x20 && byte != tab) || byte == 0x7F {
                    return .failure(Failure(400, "header field value contains a control character"))
                }
            }
            switch name.count {
            case 4 where equalsLowercase(bytes, name, "host"):
                hostCount += 1
            case 10 where equalsLowercase(bytes, name, "connection"):
                for token in string(bytes, value).lowercased().split(separator: ",") {
                    let trimmed = token.filter { $0 != " " && $0 != "\t" }
                    if trimmed == "close" { wantsClose = true }
                    if trimmed == "keep-alive" { wantsKeepAlive = true }
                }
            case 14 where equalsLowercase(bytes, name, "content-length"):
                guard !value.isEmpty, value.count <= 18,
                      value.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[$0]) }) else {
                    return .failure(Failure(400, "malformed Content-Length"))
                }
                var length: UInt64 = 0
                for offset in value { length = length * 10 + UInt64(bytes[offset] - UInt8(ascii: "0")) }
                if let previous = contentLength, previous != length {
                    return .failure(Failure(400, "conflicting Content-Length headers"))
                }
                contentLength = length
            case 17 where equalsLowercase(bytes, name, "transfer-encoding"):
                return .failure(Failure(501, "Transfer-Encoding is not supported: requests carry no body"))
            case 13 where equalsLowercase(bytes, name, "if-none-match"):
                let text = string(bytes, value)
                ifNoneMatch = ifNoneMatch.map { $0 + ", " + text } ?? text
            case 17 where equalsLowercase(bytes, name, "if-modified-since"):
                ifModifiedSince = string(bytes, value)
            default:
                break
            }
        }
        if let contentLength, contentLength > 0 {
            return .failure(Failure(413, "request bodies are not accepted"))
        }
        if version == .http11 && hostCount != 1 {
            return .failure(Failure(400, hostCount == 0 ? "missing Host header" : "more than one Host header"))
        }

        let methodBytes = UnsafeBufferPointer(rebasing: bytes[methodRange])
        let method: HTTPMethod
        if methodBytes.elementsEqual("GET".utf8) {
            method = .get
        } else if methodBytes.elementsEqual("HEAD".utf8) {
            method = .head
        } else {
            method = .other(string(bytes, methodRange))
        }
        let target = string(bytes, targetRange)
        let decoded: DecodedTarget
        switch decodeTarget(UnsafeBufferPointer(rebasing: bytes[targetRange])) {
        case .success(let value): decoded = value
        case .failure(let failure): return .failure(failure)
        }
        let keepAlive = version == .http11 ? !wantsClose : (wantsKeepAlive && !wantsClose)
        var request = HTTPRequest(method: method, target: target, path: decoded.path, query: decoded.query,
                                  version: version, keepAlive: keepAlive,
                                  ifNoneMatch: ifNoneMatch, ifModifiedSince: ifModifiedSince)
        request.malformedQueryParameter = decoded.malformed
        return .success(request)
    }

    /// `HTTP/1.1` or `HTTP/1.0`; other well-formed versions get 505, anything else 400.
    private static func parseVersion(_ bytes: UnsafeBufferPointer<UInt8>,
                                     _ range: Range<Int>) -> Result<HTTPVersion, Failure> {
        let digits = UInt8(ascii: "0")...UInt8(ascii: "9")
        guard range.count == 8,
              UnsafeBufferPointer(rebasing: bytes[range.lowerBound..<(range.lowerBound + 5)])
                .elementsEqual("HTTP/".utf8),
              digits.contains(bytes[range.lowerBound + 5]), bytes[range.lowerBound + 6] == UInt8(ascii: "."),
              digits.contains(bytes[range.lowerBound + 7]) else {
            return .failure(Failure(400, "malformed request line: bad HTTP version"))
        }
        let major = bytes[range.lowerBound + 5]
        let minor = bytes[range.lowerBound + 7]
        if major == UInt8(ascii: "1") && minor == UInt8(ascii: "1") { return .success(.http11) }
        if major == UInt8(ascii: "1") && minor == UInt8(ascii: "0") { return .success(.http10) }
        return .failure(Failure(505, "only HTTP/1.0 and HTTP/1.1 are supported"))
    }

    /// A request target's decoded path and query parameters, and the name of the first query parameter that does
    /// not decode (the parameters stop before it).
    typealias DecodedTarget = (path: String, query: [(name: String, value: String)], malformed: String?)

    /// Splits a request target into a decoded path and decoded query parameters. A path that does not decode is a
    /// failure (no route can be chosen); a query parameter that does not decode ends the query and is named in
    /// `malformed`, for the route to answer.
    static func decodeTarget(_ target: UnsafeBufferPointer<UInt8>) -> Result<DecodedTarget, Failure> {
        var start = 0
        if target.count == 1 && target[0] == UInt8(ascii: "*") { return .success(("*", [], nil)) }
        if target.first != UInt8(ascii: "/") {
            // absolute-form: scheme "://" authority [path]
            let text = String(decoding: target.prefix(8), as: UTF8.self).lowercased()
            let schemeLength = text.hasPrefix("http://") ? 7 : (text.hasPrefix("https://") ? 8 : 0)
            guard schemeLength > 0 else {
                return .failure(Failure(400, "request target must start with '/'"))
            }
            start = schemeLength
            while start < target.count, target[start] != UInt8(ascii: "/"), target[start] != UInt8(ascii: "?") {
                start += 1
            }
        }
        if target[start...].contains(UInt8(ascii: "#")) {
            return .failure(Failure(400, "request target must not contain a fragment"))
        }
        var queryStart = start
        while queryStart < target.count, target[queryStart] != UInt8(ascii: "?") { queryStart += 1 }
        let pathBytes = target[start..<queryStart]
        guard let path = percentDecode(pathBytes, plusIsSpace: false) else {
            return .failure(Failure(400, "malformed percent-encoding or UTF-8 in the path"))
        }
        var query: [(name: String, value: String)] = []
        if queryStart < target.count {
            // One pass to size the list, one to decode: no array of pieces, no regrowth.
            let ampersand = UInt8(ascii: "&")
            let queryBytes = target[(queryStart + 1)...]
            query.reserveCapacity(queryBytes.reduce(1) { $1 == ampersand ? $0 + 1 : $0 })
            var pieceStart = queryBytes.startIndex
            while pieceStart < queryBytes.endIndex {
                var pieceEnd = pieceStart
                while pieceEnd < queryBytes.endIndex, queryBytes[pieceEnd] != ampersand { pieceEnd += 1 }
                let piece = queryBytes[pieceStart..<pieceEnd]
                pieceStart = pieceEnd + 1
                if piece.isEmpty { continue }
                let equals = piece.firstIndex(of: UInt8(ascii: "=")) ?? piece.endIndex
                let nameBytes = piece[piece.startIndex..<equals]
                guard let name = percentDecode(nameBytes, plusIsSpace: true) else {
                    return .success((path.isEmpty ? "/" : path, query, String(decoding: nameBytes, as: UTF8.self)))
                }
                let valueBytes = equals < piece.endIndex ? piece[(equals + 1)...] : piece[piece.endIndex...]
                guard let value = percentDecode(valueBytes, plusIsSpace: true) else {
                    return .success((path.isEmpty ? "/" : path, query, name))
                }
                query.append((name, value))
            }
        }
        return .success((path.isEmpty ? "/" : path, query, nil))
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// Percent-decodes bytes (and `+` as space in queries); nil on a bad escape or invalid UTF-8.
    static func percentDecode(_ bytes: Slice<UnsafeBufferPointer<UInt8>>, plusIsSpace: Bool) -> String? {
        if !bytes.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) {
            return String(decoding: UnsafeBufferPointer(rebasing: bytes), as: UTF8.self)  // ASCII-only here
        }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.endIndex, let high = hexValue(bytes[index + 1]),
                      let low = hexValue(bytes[index + 2]) else {
                    return nil
                }
                output.append(high << 4 | low)
                index += 3
            } else if byte == UInt8(ascii: "+") && plusIsSpace {
                output.append(UInt8(ascii: " "))
                index += 1
            } else {
                output.append(byte)
                index += 1
            }
        }
        let text = String(decoding: output, as: UTF8.self)
        guard text.utf8.elementsEqual(output) else { return nil }
        return text
    }
}
