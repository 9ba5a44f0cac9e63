import EPFGenerator
import EPFTestSupport
import Foundation
import Glibc
import Testing

/// Apple's paths end to end: `epf generate --match`, `epf import`, `epf serve`, requests over a socket.
@Suite("Apple's paths through the epf binary")
struct AppleProcessTests {
    /// Runs `epf` with arguments and waits; returns the exit status.
    static func run(_ arguments: [String]) throws -> Int32 {
        let binary = try #require(epfBinary(), "build the epf binary first (swift build)")
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    @Test func generatedMatchFeedServesAppleLookups() throws {
        let directory = try TemporaryDirectory()
        #expect(try Self.run(["generate", directory.file("feed"), "--apps", "100", "--match"]) == 0)
        let feeds = try FileManager.default.contentsOfDirectory(atPath: directory.file("feed")).sorted()
        #expect(feeds.contains { $0.hasPrefix("match") })
        #expect(try Self.run(["import"] + feeds.map { directory.file("feed/" + $0) } + ["--db", directory.file("db")])
                == 0)
        let serve = try ServeProcess(arguments: ["--db", directory.file("db"), "--port", "0", "--threads", "1"])
        defer {
            kill(serve.process.processIdentifier, SIGTERM)
            _ = serve.waitForExit(seconds: 10)
        }
        var options = GeneratorOptions()
        options.apps = 100
        let model = FeedModel(options)
        let client = try Client(port: serve.port)
        try client.send(request("/lookup?upc=\(MatchIDs.collectionUPC(1))&entity=song&limit=3"))
        let response = try client.readResponse()
        #expect(response.status == 200)
        let object = try response.json()
        let results = try #require(object["results"] as? [[String: Any]])
        #expect(object["resultCount"] as? Int == 4)
        #expect(results.first?["collectionId"] as? Int == Int(model.collectionID(1)))
        #expect(results.dropFirst().map { $0["trackId"] as? Int } == (8..<11).map { Int(model.songID($0)) })
        try client.send(request("/search?term=a&limit=1&callback=handle"))
        let jsonp = try client.readResponse()
        #expect(jsonp.status == 200 && jsonp.header("Content-Type") == "text/javascript; charset=utf-8")
        #expect(jsonp.text.hasPrefix("/**/handle({\"resultCount\":1,"))
        try client.send(request("/lookup?id=1&callback=%3Cscript%3E"))
        let refused = try client.readResponse()
        #expect(refused.status == 400)
        #expect(try refused.json()["errorMessage"] as? String == "Invalid value(s) for key(s): [callback]")
    }
}
