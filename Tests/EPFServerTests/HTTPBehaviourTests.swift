import HTTPTransport
import EPFServer
import Foundation
import Testing

@Suite("HTTP behaviour")
struct HTTPBehaviourTests {
    @Test func everyResponseHasTheFramingHeaders() throws {
        let server = try TestServer(configure: { $0.maxAge = 123 })
        defer { server.stop() }
        for path in ["/v1/apps/364709193", "/v1/apps/1", "/nope", "/healthz", "/v1/apps/x"] {
            let response = try server.get(path)
            for name in ["Date", "Content-Length", "ETag", "Last-Modified", "Cache-Control", "Connection"] {
                #expect(response.header(name) != nil, "\(path) lacks \(name)")
            }
            #expect(response.header("Access-Control-Allow-Origin") == "*")
            #expect(Int(response.header("Content-Length") ?? "") == response.body.count)
        }
        let ok = try server.get("/v1/apps/364709193")
        #expect(ok.header("Cache-Control") == "public, max-age=123")
        #expect(ok.header("Last-Modified") == "Wed, 06 Jan 2016 10:00:01 GMT")
    }

    @Test func keepAliveServesManyRequestsOnOneConnection() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try server.client()
        for index in 0..<50 {
            try client.send(request(index.isMultiple(of: 2) ? "/v1/apps/364709193" : "/v1/apps/1"))
            let response = try client.readResponse()
            #expect(response.status == (index.isMultiple(of: 2) ? 200 : 404))
            #expect(response.header("Connection") == "keep-alive")
        }
    }

    /// A query parameter that does not decode is the request's fault, not the connection's: a 400, and the
    /// connection serves the next request.
    @Test func malformedQueryParameterKeepsTheConnection() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try server.client()
        for target in ["/v1/apps/364709193?country=%G1", "/v1/search?term=%C3"] {
            try client.send(request(target))
            let refused = try client.readResponse()
            #expect(refused.status == 400, "\(target)")
            #expect(refused.header("Connection") == "keep-alive")
            #expect((try refused.json()["error"] as? [String: Any])?["status"] as? Int == 400)
        }
        try client.send(request("/v1/apps/364709193"))
        #expect(try client.readResponse().status == 200)
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try server.client()
        let ids = [364709193, 562148264, 700000001, 700000002, 700000003]
        var batch = ""
        for round in 0..<40 {
            batch += request("/v1/apps/\(ids[round % ids.count])")
        }
        try client.send(batch)
        for round in 0..<40 {
            let response = try client.readResponse()
            #expect(try response.json()["trackId"] as? Int == ids[round % ids.count])
        }
        // A pipeline split mid-request in odd places.
        let text = Array((request("/v1/apps/364709193") + request("/healthz")).utf8)
        for chunk in stride(from: 0, to: text.count, by: 7) {
            try client.send(Array(text[chunk..<min(chunk + 7, text.count)]))
        }
        #expect(try client.readResponse().status == 200)
        #expect(try client.readResponse().status == 200)
    }

    @Test func http10ClosesAndConnectionCloseIsHonoured() throws {
        let server = try TestServer()
        defer { server.stop() }
        let old = try server.client()
        try old.send("GET /healthz HTTP/1.0\r\n\r\n")
        let response = try old.readResponse()
        #expect(response.status == 200)
        #expect(response.header("Connection") == "close")
        #expect(old.waitForClose())

        let keep = try server.client()
        try keep.send("GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        #expect(try keep.readResponse().header("Connection") == "keep-alive")
        try keep.send("GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        #expect(try keep.readResponse().status == 200)

        let closing = try server.client()
        try closing.send(request("/healthz", headers: ["Connection: close"]) + request("/healthz"))
        #expect(try closing.readResponse().header("Connection") == "close")
        #expect(closing.waitForClose())
    }

    @Test func headHasLengthButNoBody() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try server.client()
        let full = try server.get("/v1/apps/364709193")
        try client.send(request("/v1/apps/364709193", method: "HEAD") + request("/healthz"))
        let head = try client.readResponse(noBody: true)
        #expect(head.status == 200)
        #expect(head.header("Content-Length") == String(full.body.count))
        #expect(head.header("ETag") == full.header("ETag"))
        // The next response starts right after the head: no body bytes were sent.
        #expect(try client.readResponse().status == 200)
    }

    @Test func conditionalRequestsGive304() throws {
        let server = try TestServer()
        defer { server.stop() }
        let full = try server.get("/v1/apps/364709193")
        let tag = try #require(full.header("ETag"))
        let lastModified = try #require(full.header("Last-Modified"))
        let client = try server.client()
        let cases: [([String], Int)] = [
            (["If-None-Match: \(tag)"], 304),
            (["If-None-Match: \"other\", W/\(tag)"], 304),
            (["If-None-Match: *"], 304),
            (["If-None-Match: \"other\""], 200),
            (["If-Modified-Since: \(lastModified)"], 304),
            (["If-Modified-Since: Thu, 01 Jan 2015 00:00:00 GMT"], 200),
            (["If-Modified-Since: garbage"], 200),
            (["If-None-Match: \"other\"", "If-Modified-Since: \(lastModified)"], 200),
        ]
        for (headers, status) in cases {
            try client.send(request("/v1/apps/364709193", headers: headers))
            let response = try client.readResponse()
            #expect(response.status == status, "\(headers)")
            #expect(response.header("ETag") == tag)
            if status == 304 { #expect(response.header("Content-Type") == nil) }
        }
        // The connection is still in step: a 304 sent no body.
        try client.send(request("/v1/apps/1"))
        #expect(try client.readResponse().status == 404)
    }

    @Test(arguments: [
        ("GET /\(String(repeating: "a", count: 9000)) HTTP/1.1\r\nHost: x\r\n\r\n", 414),
        ("GET / HTTP/1.1\r\nHost: x\r\n" + String(repeating: "X-Filler: \(String(repeating: "b", count: 90))\r\n",
                                                 count: 200) + "\r\n", 431),
        ("GET / HTTP/1.1\r\nHost: x\r\n" + (0..<120).map { "X-\($0): 1\r\n" }.joined() + "\r\n", 431),
        ("POST /v1/apps/1 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello", 413),
        ("POST /v1/apps/1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 501),
        ("GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505),
        ("GET / HTTP/1.1\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400),
        ("GET /%zz HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("GARBAGE\r\n\r\n", 400),
        ("GET nothing HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("G(T / HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    ])
    func limitsAndMalformedRequests(text: String, status: Int) throws {
        let server = try TestServer(threads: 1)
        defer { server.stop() }
        let client = try server.client()
        try client.send(text)
        let response = try client.readResponse()
        #expect(response.status == status)
        #expect(response.header("Connection") == "close")
        #expect((try response.json()["error"] as? [String: Any])?["status"] as? Int == status)
        #expect(client.waitForClose())
    }

    @Test func emptyContentLengthAndAbsoluteFormAreAccepted() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try server.client()
        try client.send("\r\nGET http://example.com/v1/apps/364709193?x=1 HTTP/1.1\r\nHost: x\r\n"
                        + "Content-Length: 0\r\n\r\n")
        #expect(try client.readResponse().status == 200)
        try client.send("GET /v1/apps/364709193 HTTP/1.1\nHost: x\n\n")
        #expect(try client.readResponse().status == 200)
    }

    @Test func metricsCountRequestsByRouteAndStatus() throws {
        let server = try TestServer()
        defer { server.stop() }
        _ = try server.get("/v1/apps/1")
        let metrics = try server.get("/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
        #expect(metrics.text.contains("epf_http_requests_total{route=\"apps\",status=\"404\"} 1"))
        #expect(metrics.text.contains("epf_http_request_duration_seconds_bucket{le=\"+Inf\"}"))
        #expect(metrics.text.contains("epf_http_open_connections "))
        #expect(metrics.text.contains("epf_database_export_date_seconds 1452074401"))
    }
}
