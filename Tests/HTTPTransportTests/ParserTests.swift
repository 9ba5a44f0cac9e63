@testable import HTTPTransport
import JSONText
import Testing

@Suite("HTTP parser and dates")
struct ParserTests {
    func parse(_ text: String, scanFrom: Int = 0) -> HeadParse {
        Array(text.utf8).withUnsafeBytes { HTTPParser.parse($0, scanFrom: scanFrom) }
    }

    @Test func completeRequest() throws {
        guard case .request(let request, let consumed) = parse(
            "GET /v1/lookup?id=1%2C2&term=a+b&x&=v HTTP/1.1\r\nHost: h\r\nIf-None-Match: \"a\"\r\n\r\nNEXT") else {
            Issue.record("not parsed")
            return
        }
        #expect(consumed == 79)
        #expect(request.method == .get)
        #expect(request.path == "/v1/lookup")
        #expect(request.parameter("id") == "1,2")
        #expect(request.parameter("term") == "a b")
        #expect(request.parameter("x") == "")
        #expect(request.ifNoneMatch == "\"a\"")
        #expect(request.keepAlive)
    }

    /// Empty pieces (`&&`, a leading or trailing `&`) are skipped; the order and repeats of the rest are kept.
    @Test func queryPieces() throws {
        let request = try #require(HTTPRequest(method: .get, target: "/p?&a=1&&b=x+y&a=2&c&=v&d=&"))
        #expect(request.query.map(\.name) == ["a", "b", "a", "c", "", "d"])
        #expect(request.query.map(\.value) == ["1", "x y", "2", "", "v", ""])
        #expect(request.parameter("a") == "2")
        #expect(try #require(HTTPRequest(method: .get, target: "/p?")).query.isEmpty)
        #expect(try #require(HTTPRequest(method: .get, target: "/p?&&&")).query.isEmpty)
        #expect(try #require(HTTPRequest(method: .get, target: "/p")).query.isEmpty)
        #expect(HTTPRequest(method: .get, target: "/p%zz?a=1") == nil)
    }

    /// A query parameter that does not decode is named and the query stops before it: a well-formed request the
    /// route answers with a 400 in its own shape. Only a path that does not decode is refused by the parser.
    @Test func malformedQueryParameterIsNamedNotRefused() throws {
        let value = try #require(HTTPRequest(method: .get, target: "/p?a=1&id=%G1&b=2"))
        #expect(value.malformedQueryParameter == "id")
        #expect(value.query.map(\.name) == ["a"])
        #expect(try #require(HTTPRequest(method: .get, target: "/p?x%ZZ=1")).malformedQueryParameter == "x%ZZ")
        #expect(try #require(HTTPRequest(method: .get, target: "/p?term=%C3%28")).malformedQueryParameter == "term")
        #expect(try #require(HTTPRequest(method: .get, target: "/p?a=%41")).malformedQueryParameter == nil)
        guard case .request(let request, _) = parse("GET /lookup?id=%G1 HTTP/1.1\r\nHost: h\r\n\r\n") else {
            Issue.record("not parsed")
            return
        }
        #expect(request.malformedQueryParameter == "id")
        #expect(request.keepAlive)
        guard case .failure(let status, _) = parse("GET /p%zz?a=1 HTTP/1.1\r\nHost: h\r\n\r\n") else {
            Issue.record("a path that does not decode was accepted")
            return
        }
        #expect(status == 400)
    }

    @Test(arguments: ["", "GET", "GET / HTTP/1.1\r\n", "GET / HTTP/1.1\r\nHost: x\r\n", "\r\n\r\n"])
    func incomplete(text: String) {
        guard case .incomplete = parse(text) else {
            Issue.record("expected incomplete for \(text.debugDescription)")
            return
        }
    }

    @Test func incrementalScanFindsTheEndAcrossCalls() {
        let text = "GET / HTTP/1.1\r\nHost: x\r\n\r\n"
        var scanned = 0
        for end in 1...text.utf8.count {
            let prefix = String(decoding: Array(text.utf8)[0..<end], as: UTF8.self)
            switch parse(prefix, scanFrom: scanned) {
            case .incomplete(let next): scanned = next
            case .request(_, let consumed): #expect(end == text.utf8.count && consumed == end)
            case .failure(let status, let message): Issue.record("\(status) \(message)")
            }
        }
    }

    /// The header limit is the same whether the head arrives whole or a byte at a time: headers of exactly
    /// `maxHeaderBytes` bytes are accepted, one byte more is 431 (found by reading the fuzz harness's oracle).
    @Test(arguments: [0, 1])
    func headerLimitDoesNotDependOnHowTheBytesArrive(over: Int) {
        let name = "X-Padding: "
        let host = "Host: x\r\n"
        let value = String(repeating: "a", count: HTTPParser.maxHeaderBytes - host.utf8.count - name.utf8.count - 2
                           + over)
        let text = "GET / HTTP/1.1\r\n\(host)\(name)\(value)\r\n\r\n"
        func verdict(_ parse: HeadParse) -> Int? {
            switch parse {
            case .request: return 200
            case .failure(let status, _): return status
            case .incomplete: return nil
            }
        }
        let whole = verdict(self.parse(text))
        var pieces: Int?
        var scanned = 0
        for end in 1...text.utf8.count where pieces == nil {
            let prefix = String(decoding: Array(text.utf8)[0..<end], as: UTF8.self)
            let result = self.parse(prefix, scanFrom: scanned)
            if case .incomplete(let next) = result { scanned = next } else { pieces = verdict(result) }
        }
        #expect(whole == (over == 0 ? 200 : 431))
        #expect(pieces == whole)
    }

    @Test func dates() {
        #expect(HTTPDate.format(784111777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == 784111777)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == nil)
        #expect(HTTPDate.parse("Sun, 06 Foo 1994 08:49:37 GMT") == nil)
    }
}
