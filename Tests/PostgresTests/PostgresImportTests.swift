import EPFFormat
import EPFGenerator
import EPFImport
import EPFPostgres
import EPFPostgresStore
import EPFSQLite
import EPFStore
import EPFTestSupport
import Foundation
import JSONText
import Testing

/// The import contract of the SQLite store, against a real PostgreSQL server (see TestCluster).
@Suite struct PostgresImportTests {
    @Test func fullThenIncrementalGivesTheModelsRowsExactly() throws {
        let url = try TestCluster.get().database()
        let scratch = try TemporaryDirectory()
        let full = feedOptions()
        let model = FeedModel(full)
        let fullPaths = try generate(full, in: scratch.path, name: "full")
        let incrementalPaths = try generate(model.incrementalOptions(day: 1), in: scratch.path, name: "incr")
        // Given in the wrong order on purpose: the importer orders by export date.
        let report = try importPostgres(incrementalPaths + fullPaths, url: url, scratch: scratch)
        #expect(report.succeeded, "\(failures(report))")

        // Prices as numeric compare exactly with the feed's text (scale kept: 0.990 stays 0.990).
        let expectedPrices = try model.rows("application_price", throughDay: 1).map { row in
            "\(row[1] ?? "")|\(row[4] ?? "")|\(row[2] ?? "NULL")|\(row[3] ?? "NULL")"
        }.sorted()
        let prices = try dump(url, "SELECT application_id, storefront_id, retail_price, currency_code "
                                   + "FROM epf.application_price")
        #expect(prices == expectedPrices)
        #expect(try dump(url, "SELECT pg_typeof(retail_price)::text FROM epf.application_price LIMIT 1")
                == ["numeric"])

        // Titles, versions, multi-line descriptions (CR LF inside) and release dates, exactly.
        let expectedApps = try model.rows("application", throughDay: 1).map { row -> String in
            let date = row[11].flatMap { text in Array(text.utf8).withUnsafeBytes { EPFValues.datetime($0) } }
            return "\(row[1] ?? "")|\(row[2] ?? "NULL")|\(row[14] ?? "NULL")|\(row[13] ?? "NULL")|\(date ?? "NULL")"
        }.sorted()
        let apps = try dump(url, """
            SELECT application_id, title, version, description,
                to_char(itunes_release_date AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') FROM epf.application
            """)
        #expect(apps == expectedApps)
        #expect(apps.contains { $0.contains("\r\n") }, "the feed's multi-line text should include CR LF")

        // Applying the same incremental again changes nothing.
        let before = try dump(url, "SELECT * FROM epf.application")
        let again = try importPostgres(incrementalPaths, url: url, scratch: scratch) { $0.force = true }
        #expect(again.succeeded, "\(failures(again))")
        #expect(try dump(url, "SELECT * FROM epf.application") == before)

        // Without --force it is a no-op.
        let noop = try importPostgres(fullPaths + incrementalPaths, url: url, scratch: scratch)
        #expect(noop.outcomes.allSatisfy { $0.status == .unchanged })
        #expect(!noop.unchangedSources.isEmpty)
        // The bookkeeping row counts are the tables' counts.
        let counted = try dump(url, "SELECT count(*) FROM epf.application_price")
        #expect(try dump(url, "SELECT rows FROM epf.epf_tables WHERE table_name = 'application_price'") == counted)
    }

    @Test func dirtGoesToTheSameRejectsAsWithSQLite() throws {
        let url = try TestCluster.get().database()
        let scratch = try TemporaryDirectory()
        let target = URL(fileURLWithPath: scratch.path).appendingPathComponent("dirty")
        let feed = try FeedGenerator.write(feedOptions(dirt: true), to: target)
        let paths = feed.feedPaths.values.map(\.path).sorted()
        let postgres = try importPostgres(paths, url: url, scratch: scratch)
        var options = ImportOptions()
        options.rejectsDirectory = scratch.file("sqlite.rejects")
        let sqlite = try Importer(databasePath: scratch.file("epf.sqlite"), options: options).run(paths: paths)
        #expect(!postgres.succeeded)
        for (left, right) in zip(postgres.outcomes, sqlite.outcomes) {
            #expect(left.table == right.table)
            #expect(left.status == right.status, "\(left.table): \(left.message ?? "") / \(right.message ?? "")")
            #expect(left.rejects == right.rejects && left.repaired == right.repaired, "\(left.table)")
            #expect(left.duplicates == right.duplicates, "\(left.table)")
            #expect(left.rows == right.rows, "\(left.table)")
            guard let file = left.rejectsFile, let other = right.rejectsFile else {
                #expect(left.rejectsFile == nil && right.rejectsFile == nil)
                continue
            }
            #expect(FileManager.default.contents(atPath: file) == FileManager.default.contents(atPath: other),
                    "\(left.table): the rejects files differ")
        }
        // Each damaged record is named in its table's rejects file by record number and byte offset.
        for entry in feed.dirt where [.strayFieldSeparator, .invalidUTF8, .nulByte].contains(entry.kind) {
            let outcome = try #require(postgres.outcomes.first { $0.table == entry.table })
            let text = try String(decoding: Data(contentsOf: URL(fileURLWithPath: #require(outcome.rejectsFile))),
                                  as: UTF8.self)
            #expect(text.contains("\u{01}\(entry.record)\u{01}\(entry.offset)\u{01}rejected"),
                    "\(entry.kind) in \(entry.table) at record \(entry.record)")
        }
        for entry in feed.dirt where entry.kind == .recordsWrittenTooLarge {
            #expect(postgres.outcomes.first { $0.table == entry.table }?.status == .failed)
            #expect(try dump(url, "SELECT to_regclass('epf.\(entry.table)') IS NULL") == ["t"])
        }
    }

    @Test func aTruncatedOrMiscountedFullKeepsThePreviousTable() throws {
        let url = try TestCluster.get().database()
        let scratch = try TemporaryDirectory()
        let paths = try generate(feedOptions(), in: scratch.path, name: "good")
        #expect(try importPostgres(paths, url: url, scratch: scratch).succeeded)
        let before = try dump(url, "SELECT * FROM epf.application")

        let source = try #require(paths.first { $0.contains("itunes") })
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: source + "/application")))
        let directory = scratch.file("later/itunes20260112")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        bytes.removeLast(30)
        try Data(bytes).write(to: URL(fileURLWithPath: directory + "/application"))
        let truncated = try importPostgres([directory], url: url, scratch: scratch)
        #expect(truncated.outcomes.first?.status == .failed)
        #expect(truncated.outcomes.first?.message?.contains("truncated") == true)
        #expect(try dump(url, "SELECT * FROM epf.application") == before)

        var text = try [UInt8](Data(contentsOf: URL(fileURLWithPath: source + "/application")))
        let footer = Array("#recordsWritten:".utf8)
        let footerStart = try #require(text.lastIndex(of: footer[0]))
        text.replaceSubrange(footerStart..<text.count, with: footer + Array("999999".utf8) + [0x02, 0x0A])
        try Data(text).write(to: URL(fileURLWithPath: directory + "/application"))
        let mismatch = try importPostgres([directory], url: url, scratch: scratch)
        #expect(mismatch.outcomes.first?.status == .failed)
        #expect(try dump(url, "SELECT * FROM epf.application") == before)
        #expect(try dump(url, "SELECT count(*) FROM pg_tables WHERE tablename LIKE 'epf\\_staging%'") == ["0"])
        let allowed = try importPostgres([directory], url: url, scratch: scratch) { $0.allowCountMismatch = true }
        #expect(allowed.outcomes.first?.status == .applied)
        #expect(try dump(url, "SELECT outcome, count(*) FROM epf.epf_ledger WHERE location LIKE '%20260112%' "
                              + "GROUP BY outcome") == ["applied|1", "failed|2"])
    }

    @Test func incrementalsNeverGoBackInTimeAndAddNewColumns() throws {
        let url = try TestCluster.get().database()
        let scratch = try TemporaryDirectory()
        func write(_ path: String, header: [String], mode: String, rows: [[String]]) throws {
            var text = "#" + header.joined(separator: "\u{01}") + "\u{02}\n#primaryKey:application_id\u{02}\n"
            let types = header.map { $0 == "title" || $0 == "version" ? "VARCHAR(300)" : "BIGINT" }
            text += "#dbTypes:" + types.joined(separator: "\u{01}") + "\u{02}\n#exportMode:\(mode)\u{02}\n"
            for row in rows { text += row.joined(separator: "\u{01}") + "\u{02}\n" }
            text += "#recordsWritten:\(rows.count)\u{02}\n"
            try scratch.write(path, Array(text.utf8))
        }
        try write("itunes20260105/application", header: ["export_date", "application_id", "title"], mode: "FULL",
                  rows: [["2000", "1", "one"], ["2000", "2", "two"], ["2000", "2", "two again"]])
        let full = try importPostgres([scratch.file("itunes20260105")], url: url, scratch: scratch)
        #expect(full.outcomes.first?.duplicates == 1)
        #expect(try dump(url, "SELECT title FROM epf.application WHERE application_id = 2") == ["two again"])
        try write("itunes20260106/application", header: ["export_date", "application_id", "title", "version"],
                  mode: "INCREMENTAL",
                  rows: [["1000", "1", "older", "0.1"], ["3000", "2", "newer", "2.0"], ["3000", "3", "new", "1"],
                         ["3000", "3", "new again", "1.1"]])
        let incremental = try importPostgres([scratch.file("itunes20260106")], url: url, scratch: scratch)
        #expect(incremental.succeeded, "\(failures(incremental))")
        #expect(incremental.outcomes.first?.warnings.contains { $0.contains("version") } == true)
        #expect(incremental.outcomes.first?.duplicates == 1)
        #expect(incremental.outcomes.first?.insertedRows == 1)
        #expect(try dump(url, "SELECT application_id, title, version FROM epf.application")
                == ["1|one|NULL", "2|newer|2.0", "3|new again|1.1"])
        #expect(try dump(url, "SELECT rows FROM epf.epf_tables WHERE table_name = 'application'") == ["3"])
        try write("itunes20260107/artist_application", header: ["export_date", "application_id"],
                  mode: "INCREMENTAL", rows: [["3000", "9"]])
        // Refused without a full of the table, as on SQLite; --force creates it with a warning.
        let refused = try importPostgres([scratch.file("itunes20260107")], url: url, scratch: scratch)
        #expect(refused.outcomes.first?.status == .failed)
        let created = try importPostgres([scratch.file("itunes20260107")], url: url, scratch: scratch) {
            $0.force = true
        }
        #expect(created.outcomes.first?.warnings.contains { $0.contains("does not exist") } == true)
        #expect(try dump(url, "SELECT application_id FROM epf.artist_application") == ["9"])
    }

    /// A table the newer full of its feed no longer contains (as music left EPF) is kept as of its last full and
    /// called retired, not behind, by both stores' status (importing that full again changes nothing).
    @Test func aTableTheNewerFullLacksIsRetiredNotBehindOnBothStores() throws {
        let url = try TestCluster.get().database()
        let scratch = try TemporaryDirectory()
        let first = try generate(feedOptions(apps: 100), in: scratch.path, name: "week0")
        var later = feedOptions(apps: 100)
        later.week = 1
        let second = try generate(later, in: scratch.path, name: "week1")
        let itunes = try #require(second.first { ($0 as NSString).lastPathComponent.hasPrefix("itunes") })
        let gone = ["artist_song", "collection_song", "song"]
        for table in gone { try FileManager.default.removeItem(atPath: itunes + "/" + table) }
        var options = ImportOptions()
        options.rejectsDirectory = scratch.file("sqlite.rejects")
        let database = scratch.file("epf.sqlite")
        for paths in [first, second, second] {
            _ = try importPostgres(paths, url: url, scratch: scratch, schema: "retired")
            _ = try Importer(databasePath: database, options: options).run(paths: paths)
        }
        let target = try PostgresTarget(url: url, schema: "retired")
        let postgres = try StoreStatus.read(PostgresConnection(url: url), target: target, lastImports: 50)
        let sqlite = try StoreStatus.read(SQLiteConnection(path: database, mode: .readOnly), databasePath: database,
                                          lastImports: 50)
        for (store, status) in [("PostgreSQL", postgres), ("SQLite", sqlite)] {
            #expect(status.retired.map(\.table) == gone, "\(store): \(status.retired)")
            #expect(status.retired.allSatisfy { $0.feed == "itunes" && $0.notIn > $0.lastFull }, "\(store)")
            #expect(status.mixedExports == nil && !status.mixed, "\(store): \(String(describing: status.mixedExports))")
            #expect(status.failures.isEmpty, "\(store): \(status.failures)")
            #expect(status.dataAsOf == status.exportDate, "\(store)")
        }
    }

    @Test func statusReportsTheSameAsForSQLite() throws {
        let url = try TestCluster.get().database()
        let scratch = try TemporaryDirectory()
        let paths = try generate(feedOptions(), in: scratch.path, name: "feed")
        _ = try importPostgres(paths, url: url, scratch: scratch, schema: "analytics")
        var options = ImportOptions()
        options.rejectsDirectory = scratch.file("sqlite.rejects")
        let database = scratch.file("epf.sqlite")
        _ = try Importer(databasePath: database, options: options).run(paths: paths)
        let target = try PostgresTarget(url: url, schema: "analytics")
        let postgres = try StoreStatus.read(PostgresConnection(url: url), target: target, lastImports: 50)
        let sqlite = try StoreStatus.read(SQLiteConnection(path: database, mode: .readOnly), databasePath: database,
                                          lastImports: 50)
        #expect(postgres.tables.map(\.name) == sqlite.tables.map(\.name))
        #expect(postgres.tables.map(\.rows) == sqlite.tables.map(\.rows))
        #expect(postgres.tables.map(\.exportDate) == sqlite.tables.map(\.exportDate))
        #expect(postgres.lastImports.map(\.table) == sqlite.lastImports.map(\.table))
        #expect(postgres.sizeBytes > 0)
        #expect(!postgres.database.contains("password"))
        func keys(_ value: JSONValue) -> [String] {
            if case .object(let members) = value { return members.map(\.0) }
            return []
        }
        #expect(keys(postgres.json()) == keys(sqlite.json()))
    }
}
