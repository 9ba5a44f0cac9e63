import EPFSQLite
import EPFTestSupport
import Foundation
import Glibc
import Testing

/// The answers at the edges (issue 31, item 5), through the built binary and `epf serve` on port 0: a `--db` in a
/// directory that does not exist, arguments that are not Apple IDs, a store link's country, an id a full export
/// removed, and an import ended by SIGINT or SIGTERM.
@Suite("Answers at the edges")
struct EdgeAnswersCLITests {
    @Test func aDatabaseInADirectoryThatDoesNotExistIsNamedAsSuch() throws {
        let work = try WorkDirectory()
        try DemoDatabase.linkFeeds(into: work.path)
        let database = "nosuchdir/x.sqlite"
        let imported = try runEPF(["import", "feeds/itunes20260105", "--db", database, "--quiet"], in: work.path)
        #expect(imported.status == 73, "a database that cannot be created: \(imported.stderr)")
        #expect(imported.stderr.contains("the directory 'nosuchdir' does not exist"), "\(imported.stderr)")
        #expect(!imported.stderr.contains("statvfs"), "\(imported.stderr)")
        #expect(!FileManager.default.fileExists(atPath: work.file("nosuchdir")), "nothing was created")
        let synced = try runEPF(["sync", "feeds", "--db", database, "--quiet"], in: work.path)
        #expect(synced.status == 73 && synced.stderr.contains("'nosuchdir' does not exist"), "\(synced.stderr)")

        for reader in [["lookup", "293406864"], ["status"], ["sql", "SELECT 1"], ["search", "cafe"],
                       ["prices", "293406864"], ["changes", "--since", "2026-01-01"], ["serve", "--port", "0"]] {
            let run = try runEPF(reader + ["--db", database], in: work.path)
            #expect(run.status == 66, "\(reader[0]): \(run.stderr)")
            #expect(run.stderr.contains("the directory 'nosuchdir' does not exist"), "\(reader[0]): \(run.stderr)")
        }
    }

    @Test(arguments: ["abc", "-5", "https://example.com/foo", "0"])
    func anArgumentThatIsNotAnIDIsAUsageError(argument: String) throws {
        let work = try WorkDirectory()
        try DemoDatabase.copy(into: work.path)
        for arguments in [["lookup", argument], ["lookup", "293406864", argument, "--json"]] {
            let run = try runEPF(arguments, in: work.path)
            #expect(run.status == 64, "\(arguments): \(run.stderr)")
            #expect(run.stderr.contains("not an Apple ID or store link: '\(argument)'"), "\(run.stderr)")
            #expect(run.stderr.contains("https://apps.apple.com/us/app/x/id293406864"), "names what is accepted")
            #expect(run.stdout.isEmpty, "nothing is looked up: \(run.stdout)")
        }
        // An ID the database lacks is still "not found" (exit 1), not a usage error.
        #expect(try runEPF(["lookup", "12345"], in: work.path).status == 1)
    }

    /// The same error is worded once: an argument that is not an Apple ID (lookup, prices, ranks), no database file
    /// and a database without EPF tables (every command that reads one, status and export too), each the same
    /// message after "epf COMMAND: ", with the same exit status.
    @Test func oneErrorHasOneWording() throws {
        let work = try WorkDirectory()
        FileManager.default.createFile(atPath: work.file("empty.sqlite"), contents: Data())
        func messages(_ runs: [[String]], status: Int32) throws -> Set<String> {
            var seen: Set<String> = []
            for arguments in runs {
                let run = try runEPF(arguments, in: work.path)
                #expect(run.status == status, "\(arguments): \(run.stderr)")
                let first = run.stderr.split(separator: "\n").first.map(String.init) ?? ""
                #expect(first.hasPrefix("epf \(arguments[0]): "), "\(arguments): \(run.stderr)")
                seen.insert(String(first.dropFirst("epf \(arguments[0]): ".count)))
            }
            return seen
        }
        let notAnID = try messages([["lookup", "abc"], ["prices", "abc"], ["ranks", "abc"]], status: 64)
        #expect(notAnID.count == 1 && notAnID.first?.hasPrefix("not an Apple ID or store link: 'abc'; give ") == true,
                "\(notAnID)")
        for (database, wording) in [("none.sqlite", "no database at 'none.sqlite': "),
                                    ("empty.sqlite", "database 'empty.sqlite' holds no EPF tables: ")] {
            let readers = [["lookup", "1"], ["prices", "1"], ["ranks", "1"], ["status"], ["search", "x"],
                           ["charts", "--country", "us"], ["changes", "--since", "2026-01-01"], ["sql", "SELECT 1"],
                           ["genres"], ["storefronts"], ["export", "out"], ["serve", "--port", "0"]]
            let said = try messages(readers.map { $0 + ["--db", database] }, status: 66)
            #expect(said.count == 1 && said.first?.hasPrefix(wording) == true, "\(database): \(said)")
        }
    }

    /// 284207097 (Café Olé Lite 2) has no price in gb; 293406864 (Dragon Battle Tracker) has one.
    @Test(arguments: ["284207097", "293406864"])
    func aLinksCountryIsTheSameAsCountry(id: String) throws {
        let work = try WorkDirectory()
        try DemoDatabase.copy(into: work.path)
        for country in ["gb", "jp", "us"] {
            let link = "https://apps.apple.com/\(country)/app/x/id\(id)"
            let byLink = try runEPF(["lookup", link], in: work.path)
            let byOption = try runEPF(["lookup", id, "--country", country], in: work.path)
            #expect(byLink.status == 0 && byOption.status == 0)
            #expect(byLink.stdout == byOption.stdout, "\(link)\n\(byLink.stdout)\n--country:\n\(byOption.stdout)")
            #expect(byLink.stdout.contains("  Price  "), "\(link): \(byLink.stdout)")
            let json = try runEPF(["lookup", link, "--json"], in: work.path)
            #expect(json.stdout == (try runEPF(["lookup", id, "--country", country, "--json"], in: work.path)).stdout)
        }
        let unsold = try runEPF(["lookup", "https://apps.apple.com/gb/app/x/id284207097"], in: work.path)
        if id == "284207097" {
            #expect(unsold.stdout.contains("Price        none in the gb storefront (not sold there)"),
                    "\(unsold.stdout)")
        }
    }

    @Test func theHTTPAPISaysWhatIsNotAnIDAndWhatWasRemoved() throws {
        let work = try WorkDirectory()
        let database = try DemoDatabase.copy(into: work.path)
        // An app the weekly full of 2026-01-12 dropped (the demo database's epf changes lists it as removed).
        let removedID = try #require(try Self.removedApp(in: work.path))
        let served = try ServedEPF(database: database, in: work.path)
        defer { served.stop() }

        for path in ["/v1/lookup?id=abc", "/v1/lookup?id=293406864,-5", "/v1/lookup?url=https://example.com/foo",
                     "/v1/resolve?url=abc"] {
            let (status, json) = try served.get(path)
            let error = (json as? [String: Any])?["error"] as? [String: Any]
            let message = error?["message"] as? String ?? ""
            #expect(status == 400, "\(path): \(json)")
            #expect(message.contains("not an Apple ID or store link"), "\(path): \(message)")
            #expect(message.contains("https://apps.apple.com/us/app/x/id293406864"), "\(path): \(message)")
        }
        let (appStatus, appJSON) = try served.get("/v1/apps/abc")
        #expect(appStatus == 400, "\(appJSON)")

        // The lookup's removedIds and the entity's 404 state the same facts.
        let (lookupStatus, lookupJSON) = try served.get("/v1/lookup?id=\(removedID)")
        #expect(lookupStatus == 200)
        let removedIds = try #require((lookupJSON as? [String: Any])?["removedIds"] as? [[String: Any]])
        let fact = try #require(removedIds.first)
        #expect(fact["id"] as? Int == Int(removedID) && fact["removedInExport"] as? String == "2026-01-12T00:00:00Z")
        let (status, json) = try served.get("/v1/apps/\(removedID)")
        #expect(status == 404)
        let error = try #require((json as? [String: Any])?["error"] as? [String: Any])
        #expect(error["message"] as? String
                == "app \(removedID) was removed from the store in the export of 2026-01-12", "\(error)")
        let removed = try #require(error["removed"] as? [String: Any])
        #expect(removed["id"] as? Int == fact["id"] as? Int && removed["kind"] as? String == fact["kind"] as? String
                && removed["removedInExport"] as? String == fact["removedInExport"] as? String, "\(removed)")
        // A search says what the lookup in the same storefront says of the same app (284207097 is not sold in gb),
        // in Apple's Search shape: no invalidIds.
        for country in ["gb", "us"] {
            let (_, found) = try served.get("/v1/search?term=cafe%20ole&country=\(country)")
            let answer = try #require(found as? [String: Any])
            #expect(answer["invalidIds"] == nil && answer["resultCount"] != nil, "\(answer)")
            let results = answer["results"] as? [[String: Any]] ?? []
            let hit = try #require(results.first { $0["trackId"] as? Int == 284207097 }, "\(answer)")
            let (_, looked) = try served.get("/v1/apps/284207097?country=\(country)")
            let app = try #require(looked as? [String: Any])
            #expect(hit["availableInStorefront"] as? Bool == (country == "us"), "\(country): \(hit)")
            #expect(hit["availableInStorefront"] as? Bool == app["availableInStorefront"] as? Bool, "\(country)")
            #expect("\(hit["price"] ?? "absent")" == "\(app["price"] ?? "absent")", "\(country): \(hit) \(app)")
        }
        // The app's prices: the same 404 as the app, word for word.
        let (pricesStatus, pricesJSON) = try served.get("/v1/apps/\(removedID)/prices")
        #expect(pricesStatus == 404)
        let pricesError = try #require((pricesJSON as? [String: Any])?["error"] as? [String: Any])
        #expect(pricesError["message"] as? String == error["message"] as? String, "\(pricesError)")
        let pricesRemoved = try #require(pricesError["removed"] as? [String: Any])
        #expect(pricesRemoved["removedInExport"] as? String == "2026-01-12T00:00:00Z", "\(pricesRemoved)")
        // Never in the store: the bare 404, no "removed".
        for path in ["/v1/apps/12345", "/v1/apps/12345/prices"] {
            let (neverStatus, neverJSON) = try served.get(path)
            let never = (neverJSON as? [String: Any])?["error"] as? [String: Any]
            #expect(neverStatus == 404 && never?["removed"] == nil
                    && never?["message"] as? String == "no app with id 12345", "\(path): \(neverJSON)")
        }
    }

    /// `epf prices` of an app a full export dropped says what `epf lookup` says: the export that removed it,
    /// exit status 1, and the removal's facts in its JSON. After `epf import --force` of the older full, the apps
    /// the later full had added are removed again by the older one: the newest change recorded is that removal,
    /// though the "added" change has a later export date; applying the later full again makes its removals the
    /// newest again.
    @Test func pricesAndLookupSayWhenAnAppWasRemoved() throws {
        let work = try WorkDirectory()
        try DemoDatabase.copy(into: work.path)
        let removedID = try #require(try Self.removedApp(in: work.path))
        func expectRemoved(_ id: String, in date: String) throws {
            for command in ["lookup", "prices"] {
                let run = try runEPF([command, id], in: work.path)
                #expect(run.status == 1, "\(command) \(id): \(run.stderr)")
                #expect(run.stderr == "epf \(command): \(id): removed from the store in the export of \(date)\n",
                        "\(command) \(id): \(run.stderr)")
            }
            let json = try runEPF(["prices", id, "--json"], in: work.path)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
            let removed = try #require(object["removed"] as? [String: Any], "\(json.stdout)")
            #expect(object["found"] as? Bool == false && json.status == 1)
            #expect(removed["removedInExport"] as? String == date + "T00:00:00Z", "\(removed)")
        }
        try expectRemoved(removedID, in: "2026-01-12")
        let never = try runEPF(["prices", "12345", "--json"], in: work.path)
        #expect(never.status == 1 && never.stderr == "epf prices: not found: 12345\n")
        #expect(!never.stdout.contains("removed"), "\(never.stdout)")

        let added = try runEPF(["changes", "--since", "2026-01-12", "--kind", "app", "--csv"], in: work.path)
        let addedID = try #require(added.stdout.split(whereSeparator: \.isNewline).first { $0.contains(",added,") }
            .flatMap { $0.split(separator: ",").last?.trimmingCharacters(in: .whitespacesAndNewlines) })
        let older = try runEPF(["import", "feeds/itunes20260105", "feeds/pricing20260105", "--force", "--quiet"],
                               in: work.path)
        #expect(older.status == 0, "\(older.stderr)")
        try expectRemoved(addedID, in: "2026-01-05")
        #expect(try runEPF(["lookup", removedID], in: work.path).status == 0, "the older full has it again")
        // The later full again: its removal, recorded before, is the latest change again.
        let later = try runEPF(["import"] + (try DemoDatabase.laterFull()) + ["--force", "--quiet"], in: work.path)
        #expect(later.status == 0, "\(later.stderr)")
        try expectRemoved(removedID, in: "2026-01-12")
        #expect(try runEPF(["prices", addedID], in: work.path).status == 0, "the later full has it again")
    }

    /// The first app `epf changes` lists as removed.
    static func removedApp(in directory: String) throws -> String? {
        let run = try runEPF(["changes", "--since", "2026-01-12", "--kind", "app", "--csv"], in: directory)
        return run.stdout.split(whereSeparator: \.isNewline).first { $0.contains(",removed,") }
            .flatMap { $0.split(separator: ",").last?.trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    @Test(arguments: [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM")])
    func anInterruptedImportSaysSoAndRunningItAgainResumes(signal: Int32, name: String) throws {
        let work = try WorkDirectory()
        let generated = try runEPF(["generate", "feed", "--apps", "6000", "--price-storefronts", "40", "--only",
                                    "application_price"], in: work.path)
        #expect(generated.status == 0, "\(generated.stderr)")
        let reference = try runEPF(["import", "feed", "--db", "reference.sqlite", "--quiet"], in: work.path)
        #expect(reference.status == 0)
        let arguments = ["import", "feed", "--db", "epf.sqlite", "--checkpoint-records", "5000", "--quiet"]
        let (process, output, errors) = try startEPF(arguments, in: work.path)
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline && process.isRunning {
            // After the first checkpoint, so the rerun has something to resume from.
            let done = try? ImportCLITests.scalar(work.file("epf.sqlite"),
                                                  "SELECT coalesce(max(records_done), 0) FROM epf_progress")
            if let done, done >= 5000 { break }
            usleep(2_000)
        }
        kill(process.processIdentifier, signal)
        let (_, errorData) = BuiltEPF.readToEnd(process, output: output, errors: errors)
        let stderr = String(decoding: errorData, as: UTF8.self)
        let ended = "\(process.terminationReason.rawValue) \(process.terminationStatus)"
        #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == signal,
                "it dies by the signal, so the shell shows \(128 + signal): \(ended) \(stderr)")
        #expect(stderr.contains("epf import: interrupted (\(name))"), "\(stderr)")
        #expect(stderr.contains("Run the same command again to resume"), "\(stderr)")

        let again = try runEPF(arguments, in: work.path)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stderr.contains("resuming an interrupted load"), "\(again.stderr)")
        let query = "SELECT count(*), total(application_id * storefront_id % 9973), "
            + "group_concat(DISTINCT retail_price) FROM application_price"
        let resumed = try runEPF(["sql", query, "--csv", "--db", "epf.sqlite"], in: work.path)
        let expected = try runEPF(["sql", query, "--csv", "--db", "reference.sqlite"], in: work.path)
        #expect(resumed.status == 0 && resumed.stdout == expected.stdout, "\(resumed.stdout) vs \(expected.stdout)")
    }
}
