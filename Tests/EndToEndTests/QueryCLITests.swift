import EPFTestSupport
import Foundation
import Testing

/// Runs the built `epf` binary: generate a feed, import it, then query it (lookup, search, prices, sql...).
@Suite struct QueryCLITests {
    struct Run {
        let status: Int32
        let stdout: String
        let stderr: String

        var json: Any? { try? JSONSerialization.jsonObject(with: Data(stdout.utf8)) }
    }

    /// The `epf` built next to this test bundle (see `BuiltEPF`).
    static var binary: URL { BuiltEPF.url }

    static func epf(_ arguments: [String], in directory: URL) throws -> Run {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.currentDirectoryURL = directory
        var environment = ProcessInfo.processInfo.environment
        environment["EPF_DB"] = nil
        environment["NO_COLOR"] = "1"
        process.environment = environment
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // Read both pipes before waiting so a large output cannot block the child.
        let group = DispatchGroup()
        nonisolated(unsafe) var errorData = Data()
        group.enter()
        DispatchQueue.global().async {
            errorData = errors.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: String(decoding: outputData, as: UTF8.self),
                   stderr: String(decoding: errorData, as: UTF8.self))
    }

    /// A temporary directory holding a generated feed imported into `epf.sqlite`.
    struct ImportedFeed {
        private let scratch: TemporaryDirectory
        var directory: URL { scratch.url }
        var db: String { scratch.file("epf.sqlite") }

        init() throws {
            scratch = try TemporaryDirectory(prefix: "epf-query-e2e")
            let generated = try QueryCLITests.epf(["generate", "feed", "--apps", "300"], in: directory)
            guard generated.status == 0 else { throw Failure(text: "generate: \(generated.stderr)") }
            let feedDirectory = directory.appendingPathComponent("feed").path
            let feeds = try FileManager.default.contentsOfDirectory(atPath: feedDirectory)
                .sorted().map { "feed/" + $0 }
            let imported = try QueryCLITests.epf(["import"] + feeds + ["--db", "epf.sqlite", "--quiet"], in: directory)
            guard imported.status == 0 else { throw Failure(text: "import: \(imported.stderr)") }
        }

        func epf(_ arguments: [String]) throws -> Run {
            try QueryCLITests.epf(arguments + ["--db", db], in: directory)
        }

        /// The first column of the first row of a query, as text.
        func scalar(_ sql: String) throws -> String {
            let run = try epf(["sql", sql, "--csv"])
            let lines = run.stdout.split(separator: "\r\n")
            guard run.status == 0, lines.count > 1 else { throw Failure(text: "sql \(sql): \(run.stderr)") }
            return String(lines[1])
        }

        func remove() { try? FileManager.default.removeItem(at: scratch.url) }
    }

    struct Failure: Error, CustomStringConvertible {
        let text: String
        var description: String { text }
    }

    @Test func lookupOnAGeneratedFeed() throws {
        let feed = try ImportedFeed()
        defer { feed.remove() }
        let id = try feed.scalar("SELECT application_id FROM application WHERE title = 'Café Olé Lite'")
        let country = try feed.scalar("""
            SELECT lower(s.country_code) FROM application_price p JOIN storefront s USING (storefront_id)
            WHERE p.application_id = \(id) AND s.country_code = 'USA'
            """)
        #expect(country == "usa")
        let run = try feed.epf(["lookup", id, "https://apps.apple.com/us/app/x/id\(id)", "--country", "us", "--json"])
        #expect(run.status == 0)
        let json = try #require(run.json as? [String: Any])
        #expect(json["resultCount"] as? Int == 2)
        let app = try #require((json["results"] as? [[String: Any]])?.first)
        #expect(app["wrapperType"] as? String == "software" && app["kind"] as? String == "software")
        #expect(app["trackId"] as? Int == Int(id))
        #expect(app["trackName"] as? String == "Café Olé Lite")
        #expect(app["price"] is NSNumber && app["formattedPrice"] is String && app["currency"] as? String == "USD")
        #expect(app["fileSizeBytes"] is String && app["genreIds"] is [String] && app["primaryGenreId"] is Int)
        #expect((app["releaseDate"] as? String)?.hasSuffix("T00:00:00Z") == true)
        #expect(app["supportedDevices"] is [String])

        let missing = try feed.epf(["lookup", id, "1", "2"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("not found: 1, 2"))
        #expect(missing.stdout.contains("Café Olé Lite") && missing.stdout.contains("Prices"))
        // Not an ID at all: a usage error (EdgeAnswersCLITests has the message), nothing looked up.
        let junk = try feed.epf(["lookup", id, "junk"])
        #expect(junk.status == 64 && junk.stdout.isEmpty)
        let french = try feed.epf(["lookup", id, "--lang", "fr", "--json"])
        #expect(french.status == 0)

        let prices = try feed.epf(["prices", id, "--json"])
        #expect(prices.status == 0)
        let rows = try #require((prices.json as? [String: Any])?["prices"] as? [[String: Any]])
        #expect(rows.count == 20)
        #expect(rows.allSatisfy { $0["formattedPrice"] is String && $0["currency"] is String })
        #expect(try feed.epf(["prices", "1"]).status == 1)
    }

    @Test func tablesLineUpByDisplayWidthWithCJKTitles() throws {
        let feed = try ImportedFeed()
        defer { feed.remove() }
        let run = try feed.epf(["sql", "SELECT title, 'end' AS tail FROM application ORDER BY application_id LIMIT 12"])
        #expect(run.status == 0)
        let lines = run.stdout.split(separator: "\n").filter { $0.hasSuffix("end") || $0.hasSuffix("tail") }
        #expect(lines.count == 13)
        // Lines of Latin and CJK text only, whose terminal width is certain: CJK characters take two columns.
        func isCJK(_ scalar: Unicode.Scalar) -> Bool { scalar.value >= 0x3040 && scalar.value <= 0x9FFF }
        let plain = lines.filter { $0.unicodeScalars.allSatisfy { $0.value < 0x300 || isCJK($0) } }
        #expect(plain.contains { $0.unicodeScalars.contains(where: isCJK) })
        // Where the last column starts: the same on every line.
        func start(_ line: Substring) -> Int {
            let head = line.dropLast(line.hasSuffix("tail") ? 4 : 3)
            return head.unicodeScalars.reduce(0) { $0 + (isCJK($1) ? 2 : 1) }
        }
        #expect(plain.count >= 8 && Set(plain.map(start)).count == 1, "\(plain)")
    }

    @Test func searchGenresStorefrontsOnAGeneratedFeed() throws {
        let feed = try ImportedFeed()
        defer { feed.remove() }
        let search = try feed.epf(["search", "cafe", "ole", "--json"])
        #expect(search.status == 0)
        let results = try #require((search.json as? [String: Any])?["results"] as? [[String: Any]])
        #expect(results.first?["trackName"] as? String == "Café Olé Lite")
        let japanese = try feed.epf(["search", "日本語", "--entity", "software"])
        #expect(japanese.status == 0 && japanese.stdout.contains("日本語のゲーム"))
        #expect([0, 1].contains(try feed.epf(["search", "\"", "AND("]).status))
        #expect(try feed.epf(["search", "x", "--entity", "nope"]).status == 64)

        let storefronts = try feed.epf(["storefronts", "--json"])
        let list = try #require(storefronts.json as? [[String: Any]])
        #expect(list.contains { $0["country"] as? String == "us" && $0["storefrontId"] as? Int == 143441 })
        let genres = try feed.epf(["genres"])
        #expect(genres.status == 0 && !genres.stdout.isEmpty)
        let genre = try feed.scalar("SELECT genre_id FROM application_popularity_per_genre LIMIT 1")
        let ranked = try feed.epf(["genres", genre, "--json"])
        #expect(ranked.status == 0)
        #expect(((ranked.json as? [String: Any])?["apps"] as? [[String: Any]])?.isEmpty == false)
    }

    @Test func sqlIsReadOnlyAndScriptable() throws {
        let feed = try ImportedFeed()
        defer { feed.remove() }
        let count = try feed.scalar("SELECT count(*) FROM application")
        #expect(count == "300")
        for statement in ["DELETE FROM application", "UPDATE application SET title = 'x'",
                          "INSERT INTO genre (genre_id, name) VALUES (1, 'x')", "ATTACH DATABASE 'x.db' AS x",
                          "PRAGMA writable_schema = 1", "VACUUM INTO 'copy.db'", "DROP TABLE application",
                          "SELECT 1; DELETE FROM application"] {
            let run = try feed.epf(["sql", statement])
            #expect(run.status == 65, "\(statement)")
            #expect(run.stderr.contains("refused"), "\(statement): \(run.stderr)")
        }
        #expect(try feed.scalar("SELECT count(*) FROM application") == "300")
        #expect(!FileManager.default.fileExists(atPath: feed.directory.appendingPathComponent("copy.db").path))
        let json = try feed.epf(["sql", "SELECT application_id, title FROM application ORDER BY 1 LIMIT 3", "--json"])
        #expect((json.json as? [[String: Any]])?.count == 3)
        let csv = try feed.epf(["sql", "SELECT 'a,b' AS x, 'say \"hi\"' AS y, NULL AS z", "--csv"])
        #expect(csv.stdout == "x,y,z\r\n\"a,b\",\"say \"\"hi\"\"\",\r\n")
        // Line ends quoted, CR LF (one Character) and a lone CR alike; other text (non-ASCII too) left as it is.
        let lines = try feed.epf(["sql", "SELECT 'a' || char(13, 10) || 'b', 'c' || char(13) || 'd', 'e' || char(10), "
                                  + "'日本語 é'", "--csv"])
        #expect(lines.stdout.hasSuffix("\r\n\"a\r\nb\",\"c\rd\",\"e\n\",日本語 é\r\n"))
        #expect(try feed.epf(["sql", "SELEC 1"]).status == 65)
        #expect(try feed.epf(["sql"]).status == 64)
    }

    @Test func missingDatabaseAndBadArguments() throws {
        let scratch = try TemporaryDirectory(prefix: "epf-query-e2e")
        let directory = scratch.url
        for command in [["lookup", "1"], ["search", "x"], ["prices", "1"], ["genres"], ["storefronts"],
                        ["sql", "SELECT 1"]] {
            let run = try Self.epf(command + ["--db", "none.sqlite"], in: directory)
            #expect(run.status == 66, "\(command)")
            #expect(run.stderr.contains("epf import"), "\(command)")
            #expect(run.stderr.split(separator: "\n").count == 1, "\(command)")
            let help = try Self.epf([command[0], "--help"], in: directory)
            #expect(help.status == 0 && help.stdout.contains("EXAMPLES"), "\(command)")
        }
        let usage = try Self.epf(["lookup", "--country"], in: directory)
        #expect(usage.status == 64 && usage.stderr.contains("see 'epf lookup --help'"))
        #expect(!usage.stderr.contains("USAGE"), "a usage error is one line and a pointer, not the whole help")
        #expect(try Self.epf(["lookup", "1", "--bogus"], in: directory).status == 64)
    }
}
