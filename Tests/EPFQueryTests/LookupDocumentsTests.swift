import EPFGenerator
import EPFImport
import EPFSchema
import EPFSQLite
import EPFStore
import EPFTestSupport
import Foundation
import Testing
@testable import EPFQuery

/// The stored lookup documents are exactly what a lookup from the tables returns, and are used only while they
/// are those of the current tables.
@Suite struct LookupDocumentsTests {
    static func options(apps: Int = 120) -> GeneratorOptions {
        var options = GeneratorOptions()
        options.apps = apps
        options.seed = 11
        options.priceStorefronts = 4
        return options
    }

    static func generate(_ options: GeneratorOptions, in directory: TemporaryDirectory, name: String) throws
        -> [String] {
        let feed = try FeedGenerator.write(options, to: directory.url.appendingPathComponent(name))
        return feed.feedPaths.values.map(\.path).sorted()
    }

    static func importFeeds(_ paths: [String], into database: String, documents: Bool = true) throws
        -> ImportReport {
        let importer = try Importer(databasePath: database, options: ImportOptions(),
                                    derived: documents ? [LookupDocuments()] : [])
        return try importer.run(paths: paths)
    }

    /// Every app's document against the object built from the tables; returns how many apps were compared.
    @discardableResult
    static func expectDocumentsMatchTables(_ database: String) throws -> Int {
        let stored = try QueryEngine(databasePath: database)
        let tables = try QueryEngine(databasePath: database, useLookupDocuments: false)
        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        let ids = try connection.query("SELECT application_id FROM application ORDER BY application_id")
            .compactMap { row -> Int64? in if case .integer(let id) = row.first { return id } else { return nil } }
        #expect(try connection.scalar("SELECT count(*) FROM \(LookupDocuments.table)")
                == .integer(Int64(ids.count)))
        for id in ids {
            let document = try stored.lookups.entityJSON(kind: .software, id: id, country: nil, language: nil)
            let built = try tables.lookups.entity(kind: .software, id: id, country: nil, language: nil)?.serialized()
            #expect(document != nil)
            #expect(document == built, "app \(id)")
            // Re-targeted to a country (priced there or not, alpha-2 or alpha-3): still the tables' answer.
            for country in ["gb", "JP", "deu", "br", "us"] {
                let forCountry = try stored.lookups.entityJSON(kind: .software, id: id, country: country, language: nil)
                let fromTables = try tables.lookups.entity(kind: .software, id: id, country: country, language: nil)
                #expect(forCountry == fromTables?.serialized(), "app \(id) in \(country)")
            }
        }
        #expect(throws: QueryError.self) {
            try stored.lookups.entityJSON(kind: .software, id: ids[0], country: "zz", language: nil)
        }
        // The Lookup API shape with several ids (and one unknown) is the same from documents as from the tables.
        let arguments = ids.prefix(5).map(String.init) + ["999"]
        let fromDocuments = try stored.lookups.lookup(arguments, country: nil, language: nil, storedDocuments: true)
        let fromTables = try tables.lookups.lookup(arguments, country: nil, language: nil)
        #expect(fromDocuments.items.allSatisfy { if case .serialized = $0.value { true } else { false } })
        #expect(fromDocuments.json.serialized() == fromTables.json.serialized())
        #expect(fromDocuments.invalidIds == ["999"])
        let links = ids.prefix(3).map { "https://apps.apple.com/fr/app/x/id\($0)" } + arguments
        let withCountry = try stored.lookups.lookup(links, country: nil, language: nil, storedDocuments: true)
        let linksFromTables = try tables.lookups.lookup(links, country: nil, language: nil)
        #expect(withCountry.json.serialized() == linksFromTables.json.serialized())
        // The price country of the re-targeted items (those without a country name none, see `lookup`).
        #expect(withCountry.items.prefix(3).map(\.country) == linksFromTables.items.prefix(3).map(\.country))
        // Without asking for them, callers get objects they can read.
        let readable = try stored.lookups.lookup(arguments, country: nil, language: nil)
        #expect(readable.items.first?.value["trackId"] != nil)
        return ids.count
    }

    @Test func documentsAreTheLookupsOfTheTablesAfterFullAndIncremental() throws {
        let scratch = try TemporaryDirectory()
        let full = Self.options()
        let database = scratch.file("epf.sqlite")
        let report = try Self.importFeeds(try Self.generate(full, in: scratch, name: "full"), into: database)
        #expect(report.succeeded, "\(report.fileErrors)")
        #expect(try Self.expectDocumentsMatchTables(database) == 120)

        let incremental = FeedModel(full).incrementalOptions(day: 1)
        let second = try Self.importFeeds(try Self.generate(incremental, in: scratch, name: "incr"), into: database)
        #expect(second.succeeded, "\(second.fileErrors)")
        // The incremental touches per-app tables only: just the documents of the apps in its rows are rebuilt.
        let rebuilt = try #require(second.derived.first { $0.name == LookupDocuments.name })
        #expect(rebuilt.items > 0 && rebuilt.items < 120, "rebuilt \(rebuilt.items) documents")
        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        #expect(try DerivedData.storedStamp(connection, name: LookupDocuments.name)
                == DerivedData.currentStamp(connection))
        try Self.expectDocumentsMatchTables(database)
    }

    @Test func staleDocumentsAreNotUsed() throws {
        let scratch = try TemporaryDirectory()
        let database = scratch.file("epf.sqlite")
        _ = try Self.importFeeds(try Self.generate(Self.options(apps: 100), in: scratch, name: "full"), into: database)
        let engine = try QueryEngine(databasePath: database)
        let writer = try SQLiteConnection(path: database, mode: .readWrite)
        let id = try #require(try writer.scalar("SELECT min(application_id) FROM application"))
        guard case .integer(let appId) = id else { Issue.record("no app"); return }
        let before = try #require(try engine.lookups.entityJSON(kind: .software, id: appId, country: nil, language: nil))
        #expect(String(decoding: before, as: UTF8.self).contains("\"trackId\":\(appId)"))

        // A table change as an import commits it: data and a ledger entry in one transaction. The documents
        // still hold the old title, so the engine must read the tables from now on.
        try writer.transaction {
            try writer.execute("UPDATE application SET title = 'Renamed In Place' WHERE application_id = \(appId)")
            try writer.execute("""
                INSERT INTO epf_ledger (source, location, table_name, outcome) VALUES ('test', 'test', 'application',
                'applied')
                """)
        }
        let after = try #require(try engine.lookups.entityJSON(kind: .software, id: appId, country: nil, language: nil))
        #expect(String(decoding: after, as: UTF8.self).contains("\"trackName\":\"Renamed In Place\""))
        let stored = try writer.scalar(
            "SELECT body FROM \(LookupDocuments.table) WHERE application_id = \(appId)")
        guard case .blob(let old)? = stored else { Issue.record("no stored document"); return }
        #expect(!String(decoding: old, as: UTF8.self).contains("Renamed In Place"))
    }

    @Test func documentsOfAnOlderFormatAreNotReadAndTheNextImportReplacesThem() throws {
        let scratch = try TemporaryDirectory()
        let database = scratch.file("epf.sqlite")
        let options = Self.options(apps: 100)
        _ = try Self.importFeeds(try Self.generate(options, in: scratch, name: "full"), into: database)
        // What an older epf left: its documents under the old table name, stamped current, in the old shape.
        let writer = try SQLiteConnection(path: database, mode: .readWrite)
        let older = try #require(LookupDocuments.olderTables.first)
        try writer.execute("ALTER TABLE \(LookupDocuments.table) RENAME TO \(older)")
        try writer.execute("UPDATE \(older) SET body = CAST('{\"old\":true}' AS BLOB)")
        let id = try #require(try writer.scalar("SELECT min(application_id) FROM application"))
        guard case .integer(let appId) = id else { Issue.record("no app"); return }
        let engine = try QueryEngine(databasePath: database)
        let answer = try #require(try engine.lookups.entityJSON(kind: .software, id: appId, country: nil, language: nil))
        #expect(String(decoding: answer, as: UTF8.self).contains("\"screenshotUrls\""))
        // The next import that applies anything rebuilds every document in the current format.
        var incremental = options
        incremental.mode = .incremental
        _ = try Self.importFeeds(try Self.generate(incremental, in: scratch, name: "day1"), into: database)
        #expect(try !writer.tableExists(older))
        #expect(try writer.scalar("SELECT count(*) FROM \(LookupDocuments.table)")
                == writer.scalar("SELECT count(*) FROM application"))
        #expect(try Self.expectDocumentsMatchTables(database) > 0)
    }

    @Test func importWithoutDocumentsLeavesNone() throws {
        let scratch = try TemporaryDirectory()
        let database = scratch.file("epf.sqlite")
        _ = try Self.importFeeds(try Self.generate(Self.options(apps: 100), in: scratch, name: "full"), into: database,
                                 documents: false)
        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        #expect(try !connection.tableExists(LookupDocuments.table))
        let engine = try QueryEngine(databasePath: database)
        let id = try #require(try connection.scalar("SELECT min(application_id) FROM application"))
        guard case .integer(let appId) = id else { Issue.record("no app"); return }
        #expect(try engine.lookups.entityJSON(kind: .software, id: appId, country: nil, language: nil) != nil)
    }

    @Test func importChangesDecideWhatIsRebuilt() {
        var changes = DerivedChanges()
        changes.stampBefore = 7
        func scope(stored: Int64? = 7, exist: Bool = true) -> LookupDocuments.Scope {
            LookupDocuments.scope(changes, storedStamp: stored, documentsExist: exist)
        }
        #expect(scope() == .none)
        changes.tables = ["song": true, "application_popularity_per_genre": false]
        #expect(scope() == .none)
        changes.tables["application_price"] = false
        changes.tables["genre_application"] = false
        changes.applicationIds = [30, 10, 20]
        #expect(scope() == .apps([10, 20, 30]))
        #expect(scope(stored: 6) == .all)
        #expect(scope(stored: nil) == .all)
        #expect(scope(exist: false) == .all)
        changes.tables["application"] = true
        #expect(scope() == .all)
        changes.tables["application"] = false
        changes.tables["genre"] = false
        #expect(scope() == .all)
    }
}

/// The byte search that re-targets stored documents: every place a key can be, with the anchor byte before it,
/// at the very start and at the very end of the range, and keys that share the anchor byte.
@Suite struct DocumentKeySearchTests {
    static func find(_ text: String, _ needle: String, from: Int = 0, to: Int? = nil, anchor: Int = 0) -> Int? {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes {
            LookupQueries.find(Array(needle.utf8), in: $0, from: from, to: to ?? bytes.count, anchor: anchor)?.lowerBound
        }
    }

    @Test(arguments: [0, 3, 7])
    func findsTheFirstWholeMatchWhateverTheAnchor(anchor: Int) {
        let key = #","trackViewUrl":""#
        #expect(Self.find(key + "x", key, anchor: anchor) == 0)
        #expect(Self.find("V" + key, key, anchor: anchor) == 1)
        #expect(Self.find(#"{"a":1,"artistViewUrl":"u""# + key, key, anchor: anchor) == 26)
        #expect(Self.find(#"{"trackViewUrl":"u"}"#, key, anchor: anchor) == nil)
        #expect(Self.find("ab" + key, key, from: 3, anchor: anchor) == nil)
        #expect(Self.find("ab" + key, key, to: 2 + key.utf8.count - 1, anchor: anchor) == nil)
        #expect(Self.find("ab" + key, key, to: 2 + key.utf8.count, anchor: anchor) == 2)
        #expect(Self.find(key + key, key, from: 1, anchor: anchor) == key.utf8.count)
        #expect(Self.find("", key, anchor: anchor) == nil)
    }

    @Test func anAnchorOutsideTheNeedleFindsNothing() {
        #expect(Self.find("abc", "b", anchor: 1) == nil)
        #expect(Self.find("abc", "b", anchor: -1) == nil)
    }
}
