@testable import EPFServer
import EPFTestSupport
import Foundation
import Glibc
import HTTPTransport
import Testing

/// A price row is what says a storefront sells an item: Apple's paths leave unsold items out, `/v1` says so.
/// In the fixture, app 364709193 has prices in the US and Germany only, 562148264 in six storefronts (Japan too),
/// 700000001 none; the artist 284417353 has no price table at all.
@Suite struct StorefrontAvailabilityTests {
    @Test func applesLookupLeavesOutWhatTheStorefrontDoesNotSell() throws {
        let harness = try RouteHarness()
        defer { harness.remove() }
        #expect(try harness.get("/lookup?id=364709193&country=jp").json()["resultCount"] as? Int == 0)
        #expect(try harness.get("/lookup?id=364709193&country=jp").text == #"{"resultCount":0,"results":[]}"# + "\n")
        let both = try harness.get("/lookup?id=364709193,562148264,700000001&country=jp").json()
        let results = try #require(both["results"] as? [[String: Any]])
        #expect(results.map { $0["trackId"] as? Int } == [562148264])
        #expect(results.first?["price"] as? Int == 120 && results.first?["currency"] as? String == "JPY")
        #expect(results.first?["availableInStorefront"] == nil, "Apple's shape has no such field")
        let germany = try #require(try harness.get("/lookup?id=364709193&country=de").json()["results"]
                                   as? [[String: Any]])
        #expect(germany.first?["currency"] as? String == "EUR")
        // An artist has no price table: the storefront cannot be told, so it is answered.
        #expect(try harness.get("/lookup?id=284417353&country=jp").json()["resultCount"] as? Int == 1)
        // Without a country, nothing is left out (the item shows its US price when it has one).
        #expect(try harness.get("/lookup?id=364709193,700000001").json()["resultCount"] as? Int == 2)
    }

    @Test func applesSearchDoesNotRankUnsoldItems() throws {
        let harness = try RouteHarness()
        defer { harness.remove() }
        func ids(_ target: String) throws -> [Int] {
            try (harness.get(target).json()["results"] as? [[String: Any]] ?? []).compactMap { $0["trackId"] as? Int }
        }
        #expect(try ids("/search?term=ibooks&entity=software&country=de") == [364709193])
        #expect(try ids("/search?term=ibooks&entity=software&country=jp").isEmpty)
        #expect(try ids("/search?term=ibooks&entity=software").contains(364709193))
        // Offsets count only what is sold: the first sold match is still at offset 0.
        #expect(try ids("/search?term=snap&entity=software&country=jp&offset=0") == [562148264])
    }

    @Test func v1SaysWhetherTheStorefrontSellsTheItem() throws {
        let harness = try RouteHarness()
        defer { harness.remove() }
        let unsold = try harness.get("/v1/apps/364709193?country=jp").json()
        #expect(unsold["availableInStorefront"] as? Bool == false)
        #expect(unsold["price"] is NSNull)
        #expect(unsold["currency"] == nil && unsold["formattedPrice"] == nil)
        #expect((unsold["trackViewUrl"] as? String)?.contains("/jp/") == true)
        let sold = try harness.get("/v1/apps/562148264?country=jp").json()
        #expect(sold["availableInStorefront"] as? Bool == true)
        #expect(sold["price"] as? Int == 120)
        #expect(try harness.get("/v1/apps/364709193").json()["availableInStorefront"] == nil)
        let lookup = try #require(try harness.get("/v1/lookup?id=364709193,562148264&country=jp").json()["results"]
                                  as? [[String: Any]])
        #expect(lookup.map { $0["availableInStorefront"] as? Bool } == [false, true])
        // A store link's country counts as the country asked for.
        let link = "https://apps.apple.com/jp/app/x/id364709193"
        let linked = try #require(try harness.get("/v1/lookup?url=\(link)").json()["results"] as? [[String: Any]])
        #expect(linked.first?["availableInStorefront"] as? Bool == false)
    }

    @Test func withoutAPriceTableNothingIsLeftOut() throws {
        let harness = try RouteHarness(extraSQL: "DROP TABLE application_price;")
        defer { harness.remove() }
        #expect(try harness.get("/lookup?id=364709193&country=jp").json()["resultCount"] as? Int == 1)
        #expect(try harness.get("/v1/apps/364709193?country=jp").json()["availableInStorefront"] == nil)
    }
}

/// The same through a real client of Apple's API: itunespy (PyPI), installed by scripts/prerequisites into
/// .build/test-venv, against `epf serve` over a socket.
@Suite struct AppleClientTests {
    /// The virtual environment's Python (`EPF_TEST_PYTHON` overrides it).
    static var python: String {
        ProcessInfo.processInfo.environment["EPF_TEST_PYTHON"]
            ?? BuiltEPF.packageRoot.appendingPathComponent(".build/test-venv/bin/python").path
    }

    @Test func itunespyGetsApplesAnswers() throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.python),
                "no \(Self.python): run scripts/prerequisites (it installs itunespy into .build/test-venv)")
        let fixture = try CatalogueDatabase(walMode: true)
        defer { fixture.remove() }
        let serve = try ServeProcess(arguments: ["--db", fixture.path, "--port", "0", "--threads", "1"])
        defer {
            kill(serve.process.processIdentifier, SIGTERM)
            _ = serve.waitForExit(seconds: 10)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.python)
        process.arguments = [BuiltEPF.packageRoot.appendingPathComponent("Tests/clients/itunespy_client.py").path,
                             "http://127.0.0.1:\(serve.port)"]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let (stdout, stderr) = BuiltEPF.readToEnd(process, output: output, errors: errors)
        let text = String(decoding: stdout, as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(String(decoding: stderr, as: UTF8.self))")
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines == [
            "sold us: 364709193 0.0 USD Free",
            "unsold jp: no results",
            "sold jp: 562148264 120 JPY ¥120",
            "both jp: 562148264 120 JPY ¥120",
            "search us: 562148264:0.99:USD",
            "search jp: no results",
            "search de: 364709193:0.0:EUR",
        ], "\(text)")
    }
}
