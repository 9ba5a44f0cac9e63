import EPFFormat
import EPFGenerator
import EPFImport
import EPFSQLite
import Foundation
import Testing
import EPFTestSupport
@testable import EPFStore

/// A temporary directory for one test.
typealias Scratch = TemporaryDirectory

/// Generates a feed into `directory/name` and returns the feed directories.
func generate(_ options: GeneratorOptions, in directory: String, name: String) throws -> [String] {
    let target = URL(fileURLWithPath: directory).appendingPathComponent(name)
    let feed = try FeedGenerator.write(options, to: target)
    return feed.feedPaths.values.map(\.path).sorted()
}

func importPaths(_ paths: [String], database: String, configure: (inout ImportOptions) -> Void = { _ in })
    throws -> ImportReport {
    var options = ImportOptions()
    configure(&options)
    return try Importer(databasePath: database, options: options).run(paths: paths)
}

/// Every row of a table as text, sorted, for exact comparisons.
func dump(_ database: String, _ sql: String) throws -> [String] {
    let connection = try SQLiteConnection(path: database, mode: .readOnly)
    return try connection.query(sql).map { row in
        row.map { value -> String in
            switch value {
            case .null: return "NULL"
            case .integer(let number): return "\(number)"
            case .real(let number): return DecimalNumber.text(number)
            case .text(let text): return text
            case .blob: return "BLOB"
            }
        }.joined(separator: "|")
    }.sorted()
}

@Suite struct ImportTests {
    static func options(apps: Int = 200, dirt: Bool = false) -> GeneratorOptions {
        var options = GeneratorOptions()
        options.apps = apps
        options.seed = 7
        options.priceStorefronts = 5
        options.dirt = dirt
        return options
    }

    @Test func fullThenIncrementalGivesTheModelsRows() throws {
        let scratch = try Scratch()
        let full = Self.options()
        let model = FeedModel(full)
        let fullPaths = try generate(full, in: scratch.path, name: "full")
        let incrementalPaths = try generate(model.incrementalOptions(day: 1), in: scratch.path, name: "incr")
        let database = scratch.file("epf.sqlite")
        // Given in the wrong order on purpose: the importer orders by export date.
        let report = try importPaths(incrementalPaths + fullPaths, database: database)
        #expect(report.succeeded, "\(report.outcomes.filter { $0.status == .failed }.map(\.message))")

        // Prices are stored as numbers, written back as plain decimals (`0.990` as `0.99`).
        let expectedPrices = try model.rows("application_price", throughDay: 1).map { row in
            let price = row[2].flatMap(Double.init).map(DecimalNumber.text) ?? "NULL"
            return "\(row[1] ?? "")|\(row[4] ?? "")|\(price)|\(row[3] ?? "NULL")"
        }.sorted()
        let prices = try dump(database, "SELECT application_id, storefront_id, retail_price, currency_code "
                                        + "FROM application_price")
        #expect(prices == expectedPrices)

        let expectedApps = try model.rows("application", throughDay: 1).map { row in
            "\(row[1] ?? "")|\(row[2] ?? "NULL")|\(row[14] ?? "NULL")"
        }.sorted()
        #expect(try dump(database, "SELECT application_id, title, version FROM application") == expectedApps)

        // Applying the same incremental again changes nothing.
        let before = try dump(database, "SELECT * FROM application")
        let again = try importPaths(incrementalPaths, database: database) { $0.force = true }
        #expect(again.succeeded)
        #expect(try dump(database, "SELECT * FROM application") == before)

        // Without --force it is a no-op.
        let noop = try importPaths(fullPaths + incrementalPaths, database: database)
        #expect(noop.outcomes.allSatisfy { $0.status == .unchanged })
        #expect(!noop.unchangedSources.isEmpty)

        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        #expect(try connection.query("PRAGMA integrity_check") == [[.text("ok")]])
        #expect(try connection.scalar("SELECT count(*) FROM epf_search") != .integer(0))
    }

    @Test func everyKindOfDirtIsRejectedOrCorrectedAtTheRightPlace() throws {
        let scratch = try Scratch()
        let options = Self.options(dirt: true)
        let target = URL(fileURLWithPath: scratch.path).appendingPathComponent("dirty")
        let feed = try FeedGenerator.write(options, to: target)
        let database = scratch.file("epf.sqlite")
        let report = try importPaths(feed.feedPaths.values.map(\.path).sorted(), database: database)

        // Whole-record damage and junk in a key reject the row; junk in a column that may be NULL is repaired.
        let rowKinds: Set<DirtKind> = [.strayFieldSeparator, .junkInteger, .invalidUTF8, .nulByte, .oddDatetime]
        for entry in feed.dirt where rowKinds.contains(entry.kind) {
            let schema = try #require(GeneratedTables.named(entry.table))
            let isKey = entry.column.map(schema.keyIndices.map { schema.columns[$0] }.contains) ?? false
            let repaired = entry.kind == .junkInteger && !isKey
                || entry.kind == .oddDatetime && entry.note.contains("NULL")
            if entry.kind == .oddDatetime && !repaired { continue } // read as a date: nothing to record
            let outcome = report.outcomes.first { $0.table == entry.table }
            let file = try #require(outcome?.rejectsFile, "\(entry.table) should have rejects")
            let found = try BadValueTests.entries(file).filter { $0.record == "\(entry.record)" }
            let action = repaired ? "repaired" : "rejected"
            #expect(found.contains { $0.offset == "\(entry.offset)" && $0.action == action },
                    "\(entry.kind) in \(entry.table) at record \(entry.record) not in rejects as expected: \(found)")
            if repaired {
                let value = try #require(entry.value).utf8.map { $0 }
                let escaped = value.withUnsafeBytes { RowBinder.escaped($0) }
                #expect(found.contains { $0.column == entry.column && $0.value == escaped }, "\(found)")
            }
        }
        let application = try #require(report.outcomes.first { $0.table == "application" })
        let junkApps = feed.dirt.filter { $0.table == "application" && $0.column == "download_size" }
        #expect(application.repaired == junkApps.count + 1) // and the 2 digit year
        #expect(try dump(database, "SELECT count(*) FROM application WHERE download_size IS NULL")
                == ["\(junkApps.count)"])
        #expect(try dump(database, "SELECT count(*) FROM application WHERE itunes_release_date NOT LIKE "
                                   + "'____-__-__T__:__:__Z'") == ["0"])
        for entry in feed.dirt where entry.kind == .duplicatePrimaryKey {
            let outcome = report.outcomes.first { $0.table == entry.table }
            #expect((outcome?.duplicates ?? 0) >= 1, "\(entry.table) duplicates not counted")
        }
        for entry in feed.dirt where entry.kind == .recordsWrittenTooLarge {
            let outcome = report.outcomes.first { $0.table == entry.table }
            #expect(outcome?.status == .failed, "\(entry.table) with a short count must not be applied")
        }
        let collection = report.outcomes.first { $0.table == "collection" }
        #expect(collection?.warnings.contains { $0.contains("corrected") } == true)
        let genre = report.outcomes.first { $0.table == "genre" }
        #expect(genre?.warnings.contains { $0.contains("device_type_id") } == true)
        #expect(genre?.status == .applied)
        #expect(!report.succeeded)
    }

    @Test func aBadFullKeepsThePreviousTable() throws {
        let scratch = try Scratch()
        let database = scratch.file("epf.sqlite")
        let paths = try generate(Self.options(), in: scratch.path, name: "good")
        #expect(try importPaths(paths, database: database).succeeded)
        let before = try dump(database, "SELECT * FROM application")

        // The same table file with its footer cut off, and one with a wrong count, as a later full.
        let source = try #require(paths.first { $0.hasSuffix("itunes20260105") || $0.contains("itunes") })
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: source + "/application")))
        let directory = scratch.file("later/itunes20260112")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        bytes.removeLast(30)
        try Data(bytes).write(to: URL(fileURLWithPath: directory + "/application"))
        let truncated = try importPaths([directory], database: database)
        #expect(truncated.outcomes.first?.status == .failed)
        #expect(truncated.outcomes.first?.message?.contains("byte") == true)
        #expect(try dump(database, "SELECT * FROM application") == before)

        var text = try [UInt8](Data(contentsOf: URL(fileURLWithPath: source + "/application")))
        let footer = Array("#recordsWritten:".utf8)
        let footerStart = try #require(text.lastIndex(of: footer[0]))
        text.replaceSubrange(footerStart..<text.count, with: footer + Array("999999".utf8) + [0x02, 0x0A])
        try Data(text).write(to: URL(fileURLWithPath: directory + "/application"))
        let mismatch = try importPaths([directory], database: database)
        #expect(mismatch.outcomes.first?.status == .failed)
        #expect(try dump(database, "SELECT * FROM application") == before)
        let allowed = try importPaths([directory], database: database) { $0.allowCountMismatch = true }
        #expect(allowed.outcomes.first?.status == .applied)
        #expect(allowed.outcomes.first?.warnings.contains { $0.contains("999999") } == true)
    }

    static func write(_ path: String, header: [String], mode: String, rows: [[String]]) throws {
        var text = "#" + header.joined(separator: "\u{01}") + "\u{02}\n"
        text += "#primaryKey:application_id\u{02}\n"
        let types = header.map { $0 == "title" || $0 == "version" ? "VARCHAR(300)" : "BIGINT" }
        text += "#dbTypes:" + types.joined(separator: "\u{01}")
        text += "\u{02}\n#exportMode:\(mode)\u{02}\n"
        for row in rows { text += row.joined(separator: "\u{01}") + "\u{02}\n" }
        text += "#recordsWritten:\(rows.count)\u{02}\n"
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    @Test func incrementalsNeverGoBackInTimeAndAddNewColumns() throws {
        let scratch = try Scratch()
        let database = scratch.file("epf.sqlite")
        try Self.write(scratch.file("itunes20260105/application"), header: ["export_date", "application_id", "title"],
                       mode: "FULL", rows: [["2000", "1", "one"], ["2000", "2", "two"], ["2000", "2", "two again"]])
        let full = try importPaths([scratch.file("itunes20260105")], database: database)
        #expect(full.outcomes.first?.duplicates == 1)
        try Self.write(scratch.file("itunes20260106/application"),
                       header: ["export_date", "application_id", "title", "version"], mode: "INCREMENTAL",
                       rows: [["1000", "1", "older", "0.1"], ["3000", "2", "newer", "2.0"], ["3000", "3", "new", "1"]])
        let incremental = try importPaths([scratch.file("itunes20260106")], database: database)
        #expect(incremental.succeeded)
        #expect(incremental.outcomes.first?.warnings.contains { $0.contains("version") } == true)
        #expect(try dump(database, "SELECT application_id, title, version FROM application")
                == ["1|one|NULL", "2|newer|2.0", "3|new|1"])
        // An incremental for a table no full was applied to is refused (an incremental alone is not the table);
        // --force creates the table from it, with a warning.
        try Self.write(scratch.file("itunes20260107/artist_application"), header: ["export_date", "application_id"],
                       mode: "INCREMENTAL", rows: [["3000", "9"]])
        let refused = try importPaths([scratch.file("itunes20260107")], database: database)
        #expect(refused.outcomes.first?.status == .failed)
        #expect(refused.outcomes.first?.message?.contains("import a full export of artist_application first") == true)
        let created = try importPaths([scratch.file("itunes20260107")], database: database) { $0.force = true }
        #expect(created.outcomes.first?.warnings.contains { $0.contains("does not exist") } == true)
    }

    @Test func dryRunWritesNothingButChecksEverything() throws {
        let scratch = try Scratch()
        let database = scratch.file("epf.sqlite")
        let paths = try generate(Self.options(dirt: true), in: scratch.path, name: "dirty")
        let report = try importPaths(paths, database: database) { $0.dryRun = true }
        #expect(!FileManager.default.fileExists(atPath: database))
        #expect(report.outcomes.contains { $0.status == .failed })
        #expect(report.outcomes.contains { $0.status == .validated })
    }

    @Test func onlyAndSkipSelectTables() throws {
        let scratch = try Scratch()
        let database = scratch.file("epf.sqlite")
        let paths = try generate(Self.options(), in: scratch.path, name: "feed")
        let report = try importPaths(paths, database: database) {
            $0.only = "^(application|genre)"
            $0.skip = "detail"
        }
        let applied = Set(report.outcomes.filter { $0.status == .applied }.map(\.table))
        let expected: Set<String> = Set(["application", "application_device_type", "application_price",
                                         "application_popularity_per_genre", "genre", "genre_application"]
            .filter { name in report.outcomes.contains { $0.table == name } })
        #expect(applied == expected)
        #expect(!applied.contains("application_detail"))
        #expect(!applied.contains("storefront"))
    }

    @Test func hostileFilesAreRefusedOneByOneAndTheRestLoads() throws {
        let scratch = try Scratch()
        let database = scratch.file("epf.sqlite")
        let directory = scratch.file("itunes20260105")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var garbage = [UInt8](repeating: 0, count: 70_000)
        for index in garbage.indices { garbage[index] = UInt8(truncatingIfNeeded: index &* 2_654_435_761 >> 13) }
        try Data(garbage).write(to: URL(fileURLWithPath: directory + "/garbage"))
        try Data(garbage.prefix(3000)).write(to: URL(fileURLWithPath: directory + "/broken.tbz"))
        try Data("#a\u{01}a\u{02}\n#exportMode:FULL\u{02}\n1\u{01}2\u{02}\n#recordsWritten:1\u{02}\n".utf8)
            .write(to: URL(fileURLWithPath: directory + "/repeated"))
        try Data("#epf\u{02}\n#recordsWritten:0\u{02}\n".utf8)
            .write(to: URL(fileURLWithPath: directory + "/epf_ledger"))
        // An application table without a title column: the search index must still build.
        try Self.write(directory + "/application", header: ["export_date", "application_id"], mode: "FULL",
                       rows: [["1", "7"]])
        let report = try importPaths([directory], database: database)
        #expect(!report.succeeded)
        #expect(report.outcomes.first { $0.table == "application" }?.status == .applied)
        #expect(report.outcomes.first { $0.table == "repeated" }?.status == .applied)
        #expect(report.outcomes.first { $0.table == "epf_ledger" }?.status == .failed)
        #expect(report.fileErrors.contains { $0.contains("garbage") && $0.contains("byte 0") })
        #expect(report.fileErrors.contains { $0.contains("broken.tbz") })
        #expect(!report.fileErrors.contains { $0.contains("search index") })
        #expect(try dump(database, "SELECT a, a_2 FROM repeated") == ["1|2"])
        #expect(try dump(database, "SELECT id FROM epf_search") == ["7"])
    }
}
