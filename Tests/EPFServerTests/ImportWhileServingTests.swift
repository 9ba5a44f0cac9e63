import EPFSQLite
import HTTPTransport
import EPFServer
import EPFQuery
import EPFStore
import EPFTestSupport
import Foundation
import Glibc
import Testing

/// Runs the built `epf` with arguments; returns the exit status and standard error.
@discardableResult
func runEPF(_ arguments: [String]) throws -> (status: Int32, errors: String) {
    let binary = try #require(epfBinary(), "build the epf binary first (swift build)")
    let process = Process()
    process.executableURL = binary
    process.arguments = arguments
    let errors = Pipe()
    process.standardOutput = FileHandle.nullDevice
    process.standardError = errors
    try process.run()
    let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return (process.terminationStatus, text)
}

/// The feed directories `epf generate` wrote under `root`, in name order.
func feedDirectories(_ root: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: root).sorted().map { root + "/" + $0 }
}

/// An API server over `database` on 127.0.0.1, port 0, two workers; the caller shuts it down.
func startServer(_ database: String) throws -> (HTTPServer, Int) {
    var http = HTTPServerConfiguration()
    http.port = 0
    http.threads = 2
    let server = EPFAPI.makeServer(EPFServerConfiguration(databasePath: database, http: http,
                                                          status: StoreStatusReader()))
    return (server, try server.start())
}

@Suite("Import while serving")
struct ImportWhileServingTests {
    @Test func clientsSeeNoErrorsWhileImportsSwapAndUpdateTables() throws {
        let directory = try TemporaryDirectory(prefix: "epf-serve-import")
        let first = directory.file("first")
        let second = directory.file("second")
        let database = directory.file("epf.sqlite")
        #expect(try runEPF(["generate", first, "--apps", "1500"]).status == 0)
        #expect(try runEPF(["generate", second, "--apps", "1500", "--export-date", "2026-02-05"]).status == 0)
        #expect(try runEPF(["generate", second, "--apps", "1500", "--export-date", "2026-02-05",
                            "--incremental", "--day", "1"]).status == 0)
        let initial = try runEPF(["import"] + feedDirectories(first) + ["--db", database])
        #expect(initial.status == 0, "\(initial.errors)")

        let ids: [Int64] = try {
            let connection = try SQLiteConnection(path: database, mode: .readOnly)
            return try connection.query("SELECT application_id FROM application ORDER BY application_id LIMIT 20")
                .compactMap { row in
                    if case .integer(let id) = row[0] { return id }
                    return nil
                }
        }()
        try #require(ids.count == 20)

        let (server, port) = try startServer(database)
        defer {
            server.shutdown()
            server.waitUntilStopped()
        }
        let before = try Client(port: port)
        try before.send(request("/v1/apps/\(ids[0])"))
        let beforeResponse = try before.readResponse()
        #expect(beforeResponse.status == 200)

        let failures = Failures()
        let finished = Failures()
        let counts = Failures()
        let feedsOfSecond = try feedDirectories(second)
        onThreads(4) { thread in
            if thread == 0 {
                do {
                    let result = try runEPF(["import"] + feedsOfSecond + ["--db", database])
                    if result.status != 0 { failures.add("import exited \(result.status): \(result.errors)") }
                } catch {
                    failures.add("import: \(error)")
                }
                finished.add("import")
                return
            }
            var random = SeededGenerator(seed: UInt64(thread))
            var made = 0
            let deadline = Date().addingTimeInterval(120)
            do {
                let client = try Client(port: port)
                while Date() < deadline && made < 200_000 {
                    let done = !finished.all.isEmpty
                    let id = ids[random.below(ids.count)]
                    let path = made.isMultiple(of: 4) ? "/v1/lookup?id=\(id),\(ids[0])" : "/v1/apps/\(id)"
                    try client.send(request(path))
                    let response = try client.readResponse()
                    made += 1
                    if response.status != 200 {
                        failures.add("\(path): \(response.status) \(response.text.prefix(300))")
                    } else if path.hasPrefix("/v1/apps/"), try response.json()["trackId"] as? Int != Int(id) {
                        failures.add("\(path): wrong body \(response.text.prefix(200))")
                    }
                    if done { break }  // one more round after the import finished, then stop
                }
            } catch {
                failures.add("client \(thread): \(error)")
            }
            counts.add("\(made)")
        }
        #expect(failures.all.isEmpty, "\(failures.all.count) failures: \(failures.all.prefix(5))")
        let total = counts.all.compactMap(Int.init).reduce(0, +)
        #expect(total > 50, "clients made \(total) requests")

        // Right after the import the new data is served (the cache was dropped by the commit).
        let after = try Client(port: port)
        try after.send(request("/v1/apps/\(ids[0])"))
        let afterResponse = try after.readResponse()
        #expect(afterResponse.status == 200)
        let modified = try #require(HTTPDate.parse(afterResponse.header("Last-Modified") ?? ""))
        #expect(modified >= 1_770_249_600, "Last-Modified \(afterResponse.header("Last-Modified") ?? "")")
        try after.send(request("/v1/status"))
        let status = try after.readResponse().json()
        #expect((status["lastImports"] as? [Any])?.isEmpty == false)
        #expect((status["exportDate"] as? String)?.hasPrefix("2026-02") == true)
    }
}

@Suite("Stored lookup documents over HTTP")
struct StoredDocumentsHTTPTests {
    @Test func appsAndLookupAnswerFromDocumentsExactlyAsFromTheTables() throws {
        let directory = try TemporaryDirectory(prefix: "epf-serve-docs")
        let feed = directory.file("feed")
        let database = directory.file("epf.sqlite")
        #expect(try runEPF(["generate", feed, "--apps", "300", "--seed", "5"]).status == 0)
        let imported = try runEPF(["import"] + feedDirectories(feed) + ["--db", database])
        #expect(imported.status == 0, "\(imported.errors)")
        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        #expect(try connection.scalar("SELECT count(*) FROM \(LookupDocuments.table)") == .integer(300))
        let ids = try connection.query("SELECT application_id FROM application ORDER BY random() LIMIT 25")
            .compactMap { row -> Int64? in if case .integer(let id) = row[0] { return id } else { return nil } }

        let (server, port) = try startServer(database)
        defer {
            server.shutdown()
            server.waitUntilStopped()
        }
        let tables = try QueryEngine(databasePath: database, useLookupDocuments: false)
        let client = try Client(port: port)
        for id in ids {
            try client.send(request("/v1/apps/\(id)"))
            let response = try client.readResponse()
            #expect(response.status == 200)
            let expected = try #require(try tables.lookups.entity(kind: .software, id: id, country: nil, language: nil))
            #expect(response.body == expected.serialized() + [UInt8(ascii: "\n")], "app \(id)")
            try client.send(request("/v1/apps/\(id)?country=jp"))
            let inJapan = try client.readResponse()
            let expectedInJapan = try #require(try tables.lookups.entity(kind: .software, id: id, country: "jp", language: nil))
            #expect(inJapan.body == expectedInJapan.serialized() + [UInt8(ascii: "\n")], "app \(id) in jp")
        }
        let arguments = ids.prefix(3).map(String.init) + ["42"]
        try client.send(request("/v1/lookup?id=" + arguments.joined(separator: ",")))
        let lookup = try client.readResponse()
        let expected = try tables.lookups.lookup(arguments, country: nil, language: nil)
        #expect(lookup.body == expected.json.serialized() + [UInt8(ascii: "\n")])
    }
}
