import EPFSchema
import EPFSQLite
import EPFStore
import EPFTestSupport
import Foundation
import Testing
@testable import EPFQuery

@Suite struct LookupTests {
    @Test func findsEveryKindAndSaysWhichItIs() throws {
        let fixture = try CatalogueDatabase()
        defer { fixture.remove() }
        let engine = try QueryEngine(databasePath: fixture.path)
        let result = try engine.lookups.lookup(["364709193", "500000001", "500000002", "600000001", "800000001",
                                        "284417353"], country: "us", language: nil)
        #expect(result.items.map(\.kind) == [.software, .album, .ebook, .song, .video, .artist])
        #expect(result.invalidIds.isEmpty)
        let wrappers = result.items.map { $0.value["wrapperType"]?.stringValue }
        #expect(wrappers == ["software", "collection", "ebook", "track", "track", "artist"])
        #expect(result.items[3].value["kind"] == .string("song"))
        #expect(result.items[3].value["collectionId"] == .int(500000001))
        #expect(result.items[4].value["kind"] == .string("feature-movie"))
        #expect(result.items[1].value["trackCount"] == .int(1))
    }

    @Test func linksChooseKindAndCountry() throws {
        let fixture = try CatalogueDatabase()
        defer { fixture.remove() }
        let engine = try QueryEngine(databasePath: fixture.path)
        let song = try engine.lookups.lookup(["https://itunes.apple.com/fr/album/x/id500000001?i=600000001"],
                                     country: nil, language: nil)
        #expect(song.items.map(\.kind) == [.song])
        let app = try engine.lookups.lookup(["https://apps.apple.com/jp/app/x/id562148264"], country: nil, language: nil)
        #expect(app.items.first?.value["formattedPrice"] == .string("¥120"))
        #expect(app.items.first?.country == "jp")
        #expect(app.items.first?.value["trackViewUrl"]
                == .string("http://itunes.apple.com/jp/app/baby-snap-date/id562148264?uo=5"))
        let overridden = try engine.lookups.lookup(["https://apps.apple.com/jp/app/x/id562148264"], country: "GB",
                                           language: nil)
        #expect(overridden.items.first?.value["formattedPrice"] == .string("£0.79"))
        #expect(try engine.lookups.resolve("https://apps.apple.com/us/app/ibooks/id364709193")?.jsonText
                == #"{"id":364709193,"kind":"software","country":"us"}"#)
        #expect(try engine.lookups.resolve("http://x/app/id1") == nil)
    }

    @Test func unknownIDsAreInvalidAndFoundOnesStillAnswer() throws {
        let fixture = try CatalogueDatabase()
        defer { fixture.remove() }
        let engine = try QueryEngine(databasePath: fixture.path)
        let result = try engine.lookups.lookup(["1", "364709193", "not-an-id", "https://apps.apple.com/us/app/x/id2"],
                                       country: nil, language: nil)
        #expect(result.items.map(\.id) == [364709193])
        #expect(result.invalidIds == ["1", "not-an-id", "https://apps.apple.com/us/app/x/id2"])
        let json = try #require(try parseJSON(result.json.serialized()) as? [String: Any])
        #expect(json["resultCount"] as? Int == 1)
        #expect(json["invalidIds"] as? [String] == ["1", "not-an-id", "https://apps.apple.com/us/app/x/id2"])
    }

    @Test func appJSONHasApplesFieldNamesAndTypes() throws {
        let fixture = try CatalogueDatabase()
        defer { fixture.remove() }
        let engine = try QueryEngine(databasePath: fixture.path)
        let result = try engine.lookups.lookup(["364709193"], country: "us", language: nil)
        let json = try #require(try parseJSON(result.json.serialized()) as? [String: Any])
        let app = try #require((json["results"] as? [[String: Any]])?.first)
        #expect(app["wrapperType"] as? String == "software")
        #expect(app["kind"] as? String == "software")
        #expect(app["trackId"] as? Int == 364709193)
        #expect(app["trackName"] as? String == "iBooks")
        #expect(app["artistId"] as? Int == 284417353)
        #expect(app["artistName"] as? String == "Apple")
        #expect(app["sellerName"] as? String == "Apple Inc.")
        #expect(app["price"] as? NSNumber == 0)
        #expect(app["formattedPrice"] as? String == "Free")
        #expect(app["currency"] as? String == "USD")
        #expect(app["fileSizeBytes"] as? String == "51234567")
        #expect(app["releaseDate"] as? String == "2010-04-03T00:00:00Z")
        #expect(app["primaryGenreName"] as? String == "Books")
        #expect(app["primaryGenreId"] as? Int == 6018)
        #expect(app["genres"] as? [String] == ["Books", "Reference"])
        #expect(app["genreIds"] as? [String] == ["6018", "6006"])
        #expect(app["contentAdvisoryRating"] as? String == "4+")
        #expect(app["trackContentRating"] as? String == "4+")
        #expect(app["supportedDevices"] as? [String] == ["iPhone", "iPad"])
        #expect(app["languageCodesISO2A"] as? [String] == ["EN", "FR"])
        #expect(app["version"] as? String == "4.1")
        #expect(app["description"] as? String == "Read books.\nLine two.")
        #expect(app["artworkUrl100"] as? String == "http://a1.mzstatic.com/small.png")
        #expect(app["artworkUrl512"] as? String == "http://a1.mzstatic.com/large.png")
        #expect(app["trackViewUrl"] as? String == "http://itunes.apple.com/us/app/ibooks/id364709193?uo=5")
        let paid = try engine.lookups.lookup(["562148264"], country: "us", language: nil)
        let paidJSON = try #require(try parseJSON(paid.items[0].value.serialized()) as? [String: Any])
        #expect((paidJSON["price"] as? NSNumber)?.doubleValue == 0.99)
        #expect(paidJSON["formattedPrice"] as? String == "$0.99")
        #expect(paidJSON["releaseDate"] as? String == "2012-01-01T00:00:00Z")
        let time = try engine.lookups.lookup(["700000001"], country: "us", language: nil)
        #expect(time.items[0].value["releaseDate"] == .string("2012-09-25T10:00:00Z"))
    }

    @Test func pricesInEveryStorefrontWhenNoCountry() throws {
        let fixture = try CatalogueDatabase()
        defer { fixture.remove() }
        let engine = try QueryEngine(databasePath: fixture.path)
        let result = try engine.lookups.lookup(["562148264"], country: nil, language: nil, allPrices: true)
        let prices = try #require(result.items.first?.value["prices"]?.arrayValue)
        let formatted = prices.map {
            "\($0["country"]?.stringValue ?? "?") \($0["formattedPrice"]?.stringValue ?? "")"
        }
        #expect(formatted == ["de 0,99 €", "fr 1.234,50 €", "gb £0.79", "jp ¥120", "kr ₩1,200", "us $0.99"])
        let list = try #require(try engine.catalogue.prices(id: 562148264))
        #expect(list.kind == .software && list.title == "Baby Snap Date" && list.rows.count == 6)
        #expect(list.rows.first { $0.country == "jp" }?.price == "120")
        #expect(list.rows.first { $0.country == "us" }?.retailPrice == "0.99")
        #expect(try engine.catalogue.prices(id: 4242) == nil)
        #expect(try engine.catalogue.prices(id: 800000001)?.rows.isEmpty == true)
    }

    @Test func languageSelectsLocalisedDetail() throws {
        let fixture = try CatalogueDatabase()
        defer { fixture.remove() }
        let engine = try QueryEngine(databasePath: fixture.path)
        for code in ["fr", "FR", "fr-CA", "fr_FR"] {
            let result = try engine.lookups.lookup(["364709193"], country: "fr", language: code)
            let value = try #require(result.items.first?.value)
            // "fr-CA" and "fr_FR" are not in the table: they fall back to "fr" (then to English).
            #expect(value["trackName"] == .string("iBooks (français)"), "\(code)")
            #expect(value["description"] == .string("Lire des livres."), "\(code)")
            #expect(value["releaseNotes"] == .string("Corrections"), "\(code)")
        }
        let fallback = try engine.lookups.lookup(["364709193"], country: nil, language: "ja")
        #expect(fallback.items.first?.value["releaseNotes"] == .string("Fixes"))
        let english = try engine.lookups.entity(kind: .software, id: 364709193, country: nil, language: "en")
        #expect(english?["releaseNotes"] == .string("Fixes"))
        #expect(throws: QueryError.self) { try engine.lookups.lookup(["1"], country: nil, language: "e n") }
        #expect(throws: QueryError.self) { try engine.lookups.lookup(["1"], country: "zz", language: nil) }
    }

    @Test func entityByKindAndMissingTables() throws {
        let fixture = try CatalogueDatabase(extraSQL: "DROP TABLE video; DROP TABLE application_device_type;")
        defer { fixture.remove() }
        let engine = try QueryEngine(databasePath: fixture.path)
        #expect(try engine.lookups.entity(kind: .video, id: 800000001, country: nil, language: nil) == nil)
        let app = try engine.lookups.entity(kind: .software, id: 364709193, country: nil, language: nil)
        #expect(app?["supportedDevices"] == nil)
        #expect(app?["formattedPrice"] == .string("Free"))
        #expect(try engine.lookups.entity(kind: .artist, id: 364709193, country: nil, language: nil) == nil)
        #expect(try engine.lookups.lookup(["800000001"], country: nil, language: nil).invalidIds == ["800000001"])
        #expect(try engine.catalogue.dataExportDate() == 1452074401007)
    }

    /// Apps are read by one statement built for the columns present: an older table may lack some.
    @Test func appTableMissingColumnsReadsThemAsAbsent() throws {
        let fixture = try CatalogueDatabase(extraSQL: """
            ALTER TABLE application DROP COLUMN support_url; ALTER TABLE application DROP COLUMN download_size;
            DROP TABLE artist;
            """)
        defer { fixture.remove() }
        let engine = try QueryEngine(databasePath: fixture.path)
        let app = try #require(try engine.lookups.entity(kind: .software, id: 364709193, country: "us", language: nil))
        #expect(app["supportUrl"] == nil && app["fileSizeBytes"] == nil)
        #expect(app["trackName"] == .string("iBooks") && app["copyright"] == .string("© Apple"))
        #expect(app["artistId"] == .int(284417353) && app["artistViewUrl"] == nil)
        #expect(app["genreIds"] == .array([.string("6018"), .string("6006")]))
    }

    @Test func missingOrEmptyDatabaseIsNamed() throws {
        let fixture = try CatalogueDatabase(rows: false, index: false)
        defer { fixture.remove() }
        let missing = fixture.directory.appendingPathComponent("nothing.sqlite").path
        do {
            _ = try QueryEngine(databasePath: missing)
            Issue.record("expected databaseMissing")
        } catch let error as QueryError {
            guard case .databaseMissing = error else { throw error }
            // The path, in the library's words; the CLI adds what to run (see the end-to-end tests).
            #expect(error.description.contains(missing) && !error.description.contains("--db"))
        }
        let empty = fixture.directory.appendingPathComponent("empty.sqlite").path
        _ = FileManager.default.createFile(atPath: empty, contents: Data())
        #expect(throws: QueryError.self) { try QueryEngine(databasePath: empty) }
        let other = fixture.directory.appendingPathComponent("other.sqlite").path
        try SQLiteConnection(path: other, mode: .readWriteCreate).execute("CREATE TABLE x(a)")
        do {
            _ = try QueryEngine(databasePath: other)
            Issue.record("expected databaseEmpty")
        } catch let error as QueryError {
            guard case .databaseEmpty = error else { throw error }
        }
    }
}

@Suite struct SearchTests {
    func titles(_ engine: QueryEngine, _ term: String, entity: EntityKind? = nil) throws -> [String] {
        try engine.search.matches(term: term, entity: entity, country: nil, limit: 20).items.map {
            $0.value["trackName"]?.stringValue ?? $0.value["collectionName"]?.stringValue
                ?? $0.value["artistName"]?.stringValue ?? "?"
        }
    }

    @Test func ignoresCaseAndDiacritics() throws {
        let fixture = try CatalogueDatabase()
        defer { fixture.remove() }
        let engine = try QueryEngine(databasePath: fixture.path)
        #expect(try titles(engine, "cafe ole") == ["Café Olé"])
        #expect(try titles(engine, "CAFÉ OLE") == ["Café Olé"])
        #expect(try titles(engine, "zoe") == ["Café Olé"])  // by the seller's name
        #expect(try titles(engine, "edith piaf", entity: .artist) == ["Édith Piaf"])
    }

    @Test func prefixesRankExactTitleFirst() throws {
        let fixture = try CatalogueDatabase()
        defer { fixture.remove() }
        let engine = try QueryEngine(databasePath: fixture.path)
        #expect(Set(try titles(engine, "caf")) == ["Café Olé", "Cafeteria Manager"])
        #expect(try titles(engine, "la vie en rose").prefix(2) == ["La Vie en rose", "La Vie en rose"])
        #expect(try titles(engine, "la vie", entity: .song) == ["La Vie en rose"])
        #expect(try titles(engine, "book of", entity: .ebook) == ["A Book of Things"])
        #expect(try titles(engine, "ibooks") == ["iBooks"])
    }

    @Test func findsCJKWords() throws {
        let fixture = try CatalogueDatabase()
        defer { fixture.remove() }
        let engine = try QueryEngine(databasePath: fixture.path)
        #expect(try titles(engine, "東京") == ["東京タワー案内"])
        #expect(try titles(engine, "タワー") == ["東京タワー案内"])
        #expect(try titles(engine, "案内") == ["東京タワー案内"])
        #expect(try titles(engine, "京東").isEmpty)
        #expect(try titles(engine, "지하철") == ["서울 지하철"])
        #expect(try titles(engine, "日本") == ["東京タワー案内"])
        #expect(SearchIndex.searchText("東京タワー abc") == "東 京 タ ワ ー abc")
    }

    /// NUL bytes and a quote with a combining mark too, both found by the apple-params fuzz target
    /// (fuzz/regressions/apple-params/nul-in-search-term, quote-with-combining-mark): the NUL ended FTS5's
    /// expression inside a quoted phrase, and the quote+mark Character was not doubled, so the phrase ended early;
    /// both failed the query (answered with 503).
    @Test(arguments: ["\"", "AND(", "\"quotes\" AND( OR", "*", "NEAR(a b)", "title:x", "-", "^a", "a OR",
                      "{title}: x", "()", "\"\"\"", "NOT", "a\"b", "a\u{0}b", "=genrnIde\u{01}term=\u{19}\u{0}\u{0}",
                      "a\"\u{356}1e c\u{05}", "x\"\u{301}"])
    func hostileTermsDoNotError(term: String) throws {
        let fixture = try CatalogueDatabase()
        defer { fixture.remove() }
        let engine = try QueryEngine(databasePath: fixture.path)
        _ = try engine.search.matches(term: term, entity: nil, country: nil, limit: 10)
    }

    @Test func hostileTitleIsFindable() throws {
        let fixture = try CatalogueDatabase()
        defer { fixture.remove() }
        let engine = try QueryEngine(databasePath: fixture.path)
        #expect(try titles(engine, "\"quotes\" AND( OR") == ["Angry \"Quotes\" AND( OR"])
        #expect(SearchQueries.ftsQuery("a\"b c") == #""a""b" "c"*"#)
        #expect(SearchQueries.ftsQuery("  - * ") == nil)
        #expect(SearchQueries.ftsQuery("a\u{0}b")?.contains("\u{0}") == false)
        #expect(SearchQueries.ftsQuery("a\"\u{301}b") == "\"a\"\"\u{301}b\"*")
    }

    @Test func withoutIndexSearchFindsNothing() throws {
        let fixture = try CatalogueDatabase(index: false)
        defer { fixture.remove() }
        let engine = try QueryEngine(databasePath: fixture.path)
        #expect(try engine.search.matches(term: "ibooks", entity: nil, country: nil, limit: 5).items.isEmpty)
        #expect(throws: QueryError.self) { try engine.search.matches(term: "x", entity: nil, country: nil, limit: 0) }
    }

    @Test func rebuildReplacesTheIndex() throws {
        let fixture = try CatalogueDatabase()
        defer { fixture.remove() }
        let writer = try SQLiteConnection(path: fixture.path, mode: .readWrite)
        try writer.execute("UPDATE application SET title = 'Renamed Reader' WHERE application_id = 364709193")
        try writer.transaction { try SearchIndex.rebuild(writer) }
        let engine = try QueryEngine(databasePath: fixture.path)
        #expect(try titles(engine, "renamed") == ["Renamed Reader"])
        #expect(try titles(engine, "ibooks").isEmpty)
        #expect(try writer.tableExists("epf_search_new") == false)
    }
}

@Suite struct GenreAndStorefrontTests {
    @Test func treeAndRankedApps() throws {
        let fixture = try CatalogueDatabase(
            extraSQL: "INSERT INTO application_popularity_per_genre VALUES (1, 143441, 36, 700000001, 7)")
        defer { fixture.remove() }
        let engine = try QueryEngine(databasePath: fixture.path)
        let tree = try engine.catalogue.genres()
        #expect(tree.map(\.name) == ["App Store", "Books", "Games", "Action", "Reference"])
        #expect(tree.map(\.depth) == [0, 1, 1, 2, 1])
        let games = try #require(try engine.catalogue.genreApps(id: 6014, country: nil, limit: 10))
        #expect(games.apps.map(\.id) == [700000003, 562148264, 700000001])
        #expect(games.apps.map(\.rank) == [1, 2, nil])
        #expect(games.total == 3 && games.country == "us")
        let japan = try #require(try engine.catalogue.genreApps(id: 6014, country: "jp", limit: 2))
        #expect(japan.apps.map(\.id) == [562148264, 700000001] && japan.apps.allSatisfy { $0.rank == nil })
        #expect(try engine.catalogue.genreApps(id: 1, country: nil, limit: 10) == nil)
        let overall = try #require(try engine.catalogue.genreApps(id: 36, country: "us", limit: 10))
        #expect(overall.apps.map(\.id) == [700000001] && overall.apps.first?.rank == 7 && overall.total == 1)
        let storefronts = try engine.catalogue.storefronts()
        #expect(storefronts.map(\.country) == ["de", "fr", "gb", "jp", "kr", "us"])
        #expect(storefronts.last?.json.jsonText
                == #"{"storefrontId":143441,"country":"us","countryCode":"USA","name":"United States"}"#)
    }
}

@Suite struct SQLTests {
    @Test func readsRows() throws {
        let fixture = try CatalogueDatabase()
        defer { fixture.remove() }
        let engine = try QueryEngine(databasePath: fixture.path)
        let result = try engine.sql.run("SELECT application_id, title, NULL AS n, 1.5 AS r FROM application "
                                    + "ORDER BY application_id LIMIT 2; -- trailing comment")
        #expect(result.columns == ["application_id", "title", "n", "r"])
        #expect(result.rows.first == [.integer(364709193), .text("iBooks"), .null, .real(1.5)])
        #expect(result.json.arrayValue?.first?.jsonText
                == #"{"application_id":364709193,"title":"iBooks","n":null,"r":1.5}"#)
        #expect(try engine.sql.run("SELECT 1 UNION ALL SELECT 2", maxRows: 1).truncated)
        #expect(try engine.sql.run("PRAGMA table_info(application)").rows.count == 17)
    }

    @Test(arguments: [
        "DELETE FROM application", "UPDATE application SET title = 'x'", "INSERT INTO genre VALUES (1, 2, 3, 'x')",
        "DROP TABLE application", "CREATE TABLE t(a)", "ATTACH DATABASE ':memory:' AS other", "DETACH DATABASE main",
        "PRAGMA writable_schema = 1", "PRAGMA writable_schema=ON", "VACUUM",
        "VACUUM INTO '/tmp/epf-should-not-exist.db'",
        "SELECT 1; DELETE FROM application", "REINDEX", "ANALYZE", "PRAGMA journal_mode = DELETE",
        "CREATE TEMP TABLE t(a)", "PRAGMA user_version = 5",
    ])
    func refusesWrites(sql: String) throws {
        let fixture = try CatalogueDatabase()
        defer { fixture.remove() }
        let engine = try QueryEngine(databasePath: fixture.path)
        do {
            _ = try engine.sql.run(sql)
            Issue.record("expected a refusal for \(sql)")
        } catch let error as QueryError {
            if case .refused = error {} else { Issue.record("expected .refused for \(sql), got \(error)") }
        }
        #expect(try engine.sql.run("SELECT count(*) FROM application").rows == [[.integer(7)]])
        #expect(try engine.sql.run("PRAGMA writable_schema").rows == [[.integer(0)]])
        #expect(!FileManager.default.fileExists(atPath: "/tmp/epf-should-not-exist.db"))
    }

    @Test func syntaxErrorsAreSQLiteErrors() throws {
        let fixture = try CatalogueDatabase()
        defer { fixture.remove() }
        let engine = try QueryEngine(databasePath: fixture.path)
        #expect(throws: QueryError.self) { try engine.sql.run("SELEC 1") }
        #expect(throws: QueryError.self) { try engine.sql.run("SELECT * FROM nope") }
        #expect(throws: QueryError.self) { try engine.sql.run("   -- nothing") }
    }
}
