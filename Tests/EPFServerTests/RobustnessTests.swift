import EPFSQLite
import HTTPTransport
import EPFServer
import EPFStore
import EPFTestSupport
import Foundation
import Glibc
import Testing

@Suite("Robustness")
struct RobustnessTests {
    static let seeds: [[UInt8]] = [
        request("/v1/apps/364709193"), request("/v1/lookup?id=1,2,364709193&country=us"),
        request("/v1/search?term=caf%C3%A9+ol&limit=3", headers: ["If-None-Match: \"x\""]),
        "GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
        request("/v1/apps/1/prices", method: "HEAD", headers: ["If-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT"]),
    ].map { Array($0.utf8) }

    static func mutate(_ seed: [UInt8], _ random: inout SeededGenerator) -> [UInt8] {
        var bytes = seed
        switch random.below(6) {
        case 0:  // pure noise
            return (0..<random.below(600)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        case 1:  // flip bytes
            for _ in 0..<(1 + random.below(8)) where !bytes.isEmpty {
                bytes[random.below(bytes.count)] = UInt8(truncatingIfNeeded: random.next())
            }
        case 2:  // truncate
            bytes = Array(bytes.prefix(random.below(bytes.count + 1)))
        case 3:  // insert special bytes
            let specials: [UInt8] = [0, 10, 13, 32, 58, 37, 43, 63, 38, 61, 0x7F, 0xFF, 0xC3]
            for _ in 0..<(1 + random.below(6)) {
                bytes.insert(specials[random.below(specials.count)], at: random.below(bytes.count + 1))
            }
        case 4:  // duplicate a slice
            let start = random.below(bytes.count)
            let end = min(bytes.count, start + random.below(64))
            bytes.insert(contentsOf: bytes[start..<end], at: random.below(bytes.count + 1))
        default:  // two requests glued, the second mangled
            var second = seeds[random.below(seeds.count)]
            second[random.below(second.count)] = UInt8(truncatingIfNeeded: random.next())
            bytes += second
        }
        return bytes
    }

    @Test func randomAndMutatedBytesNeverBreakTheServer() throws {
        let server = try TestServer()
        defer { server.stop() }
        var random = SeededGenerator(seed: 0x5EED)
        let deadline = Date().addingTimeInterval(60)
        var answered = 0
        for round in 0..<3000 where Date() < deadline {
            let bytes = Self.mutate(Self.seeds[round % Self.seeds.count], &random)
            let client = try server.client(timeout: 5)
            try? client.send(bytes)  // the server may already have answered and closed
            client.finishSending()
            let reply: [UInt8]
            do {
                reply = try client.readToEnd()
            } catch {
                Issue.record("round \(round): \(error) after sending \(bytes.count) bytes: \(bytes.prefix(80))")
                continue
            }
            if !reply.isEmpty {
                answered += 1
                #expect(reply.starts(with: Array("HTTP/1.1 ".utf8)), "round \(round): \(reply.prefix(40))")
            }
        }
        #expect(answered > 100)
        let after = try server.get("/v1/apps/364709193")
        #expect(after.status == 200)
        #expect(try after.json()["trackId"] as? Int == 364709193)
        #expect(server.server.metrics.openConnections <= 2)
    }

    @Test func concurrentClientsAllSucceed() throws {
        let server = try TestServer()
        defer { server.stop() }
        let failures = Failures()
        let port = server.port
        onThreads(8) { thread in
            do {
                let client = try Client(port: port)
                for index in 0..<150 {
                    let path = index.isMultiple(of: 3) ? "/v1/lookup?id=364709193,562148264" : "/v1/apps/364709193"
                    try client.send(request(path))
                    let response = try client.readResponse()
                    if response.status != 200 { failures.add("thread \(thread): \(response.status)") }
                }
            } catch {
                failures.add("thread \(thread): \(error)")
            }
        }
        #expect(failures.all.isEmpty, "\(failures.all.prefix(5))")
    }

    @Test func idleAndSlowClientsAreDisconnectedWithoutStarvingOthers() throws {
        let server = try TestServer(configure: { $0.idleTimeout = 1 })
        defer { server.stop() }
        // Slowloris: many connections that send half a request, one idle keep-alive connection.
        var slow: [Client] = []
        for _ in 0..<300 {
            let client = try server.client(timeout: 10)
            try client.send("GET /v1/apps/364709193 HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            slow.append(client)
        }
        let idle = try server.client(timeout: 10)
        try idle.send(request("/healthz"))
        #expect(try idle.readResponse().status == 200)
        // Real clients are served at once while the slow ones hang on.
        let started = Date()
        for _ in 0..<20 { #expect(try server.get("/v1/apps/364709193").status == 200) }
        #expect(Date().timeIntervalSince(started) < 5)
        // Within a few seconds every slow and idle connection is closed by the server.
        #expect(idle.waitForClose())
        for client in slow.prefix(20) {
            try? client.send("1\r\n")  // dripping does not extend the deadline
            #expect(client.waitForClose())
        }
        #expect(Date().timeIntervalSince(started) < 20)
    }

    @Test func connectionCapAnswers503() throws {
        let server = try TestServer(threads: 1, configure: { $0.maxConnections = 4 })
        defer { server.stop() }
        var held: [Client] = []
        for _ in 0..<4 {
            let client = try server.client()
            try client.send(request("/healthz"))
            #expect(try client.readResponse().status == 200)
            held.append(client)
        }
        let extra = try server.client()
        let refused = try extra.readResponse()
        #expect(refused.status == 503)
        #expect(refused.header("Retry-After") == "1")
        #expect(extra.waitForClose())
        held.removeAll()
        // Once connections close, new ones are served again.
        var served = false
        for _ in 0..<50 where !served {
            if let response = try? server.get("/healthz"), response.status == 200 { served = true } else {
                usleep(50_000)
            }
        }
        #expect(served)
    }

    @Test func replacedAndMissingDatabaseFilesAreHandled() throws {
        let server = try TestServer(threads: 2)
        defer { server.stop() }
        #expect(try server.get("/v1/apps/364709193").json()["trackName"] as? String == "iBooks")
        // Replace the file by rename, as a deployment would.
        let replacement = server.fixture.directory.appendingPathComponent("new.sqlite").path
        try CatalogueDatabase.create(at: replacement, walMode: true, titleSuffix: " v2")
        #expect(rename(replacement, server.fixture.path) == 0)
        for suffix in ["-wal", "-shm"] { unlink(server.fixture.path + suffix) }
        var sawNew = false
        for _ in 0..<100 where !sawNew {
            // A fresh connection each time so both workers are exercised.
            let response = try server.get("/v1/apps/364709193")
            #expect(response.status == 200 || response.status == 503)
            if response.status == 200, try response.json()["trackName"] as? String == "iBooks v2" {
                sawNew = true
            } else {
                usleep(100_000)
            }
        }
        #expect(sawNew)
        // Remove it: 503 (and /healthz 503) until it is back.
        let moved = server.fixture.directory.appendingPathComponent("moved.sqlite").path
        #expect(rename(server.fixture.path, moved) == 0)
        var sawUnavailable = false
        for _ in 0..<100 where !sawUnavailable {
            let health = try server.get("/healthz")
            if health.status == 503 {
                sawUnavailable = true
            } else {
                usleep(100_000)
            }
        }
        #expect(sawUnavailable)
        #expect(rename(moved, server.fixture.path) == 0)
        var back = false
        for _ in 0..<100 where !back {
            if try server.get("/v1/apps/364709193").status == 200 && server.get("/healthz").status == 200 {
                back = true
            } else {
                usleep(100_000)
            }
        }
        #expect(back)
    }

    /// The importer's pattern: build a new table, then swap it in with DROP + RENAME in one transaction.
    @Test func tableSwapsDuringRequestsCauseNoErrors() throws {
        let server = try TestServer(threads: 2)
        defer { server.stop() }
        let failures = Failures()
        let port = server.port
        let path = server.fixture.path
        let swaps = 25
        let done = Failures()
        onThreads(4) { thread in
            if thread == 0 {
                do {
                    let writer = try SQLiteConnection(path: path, mode: .readWrite)
                    for round in 1...swaps {
                        try writer.execute("""
                            DROP TABLE IF EXISTS application_new;
                            CREATE TABLE application_new AS SELECT * FROM application;
                            UPDATE application_new SET title = 'iBooks' || ' r\(round)'
                                WHERE application_id = 364709193;
                            """)
                        try writer.transaction {
                            try writer.execute("""
                                DROP TABLE application;
                                ALTER TABLE application_new RENAME TO application;
                                """)
                        }
                        usleep(20_000)
                    }
                } catch {
                    failures.add("writer: \(error)")
                }
                done.add("writer")
                return
            }
            var requests = 0
            let deadline = Date().addingTimeInterval(30)
            do {
                let client = try Client(port: port)
                while done.all.isEmpty && Date() < deadline && requests < 20000 {
                    try client.send(request("/v1/apps/364709193"))
                    let response = try client.readResponse()
                    requests += 1
                    let title = (try? response.json()["trackName"] as? String) ?? nil
                    if response.status != 200 || title?.hasPrefix("iBooks") != true {
                        failures.add("client \(thread): \(response.status) \(response.text.prefix(200))")
                    }
                }
            } catch {
                failures.add("client \(thread): \(error)")
            }
            if requests == 0 { failures.add("client \(thread) made no requests") }
        }
        #expect(failures.all.isEmpty, "\(failures.all.prefix(5))")
        let final = try server.get("/v1/apps/364709193").json()
        #expect(final["trackName"] as? String == "iBooks r\(swaps)")
    }
}
