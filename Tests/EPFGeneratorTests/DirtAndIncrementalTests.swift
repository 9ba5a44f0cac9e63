import Foundation
import EPFTestSupport
import Testing
@testable import EPFGenerator

@Suite struct DirtTests {
    @Test func manifestPointsAtTheDamagedRecords() throws {
        let directory = try TemporaryDirectory()
        var options = smallOptions(apps: 200)
        options.dirt = true
        let feed = try FeedGenerator.write(options, to: directory.url)
        let kinds = Set(feed.dirt.map(\.kind))
        #expect(kinds == Set(DirtKind.allCases).subtracting([.zeroRows]))
        #expect(feed.dirt.filter { $0.kind == .junkInteger }.count == 5)
        #expect(feed.dirt.filter { $0.kind == .oddDatetime }.count == 3)
        #expect(feed.dirt.filter { $0.kind == .duplicatePrimaryKey }.map(\.table).sorted()
            == ["application", "application_price"])

        let manifest = try JSONDecoder().decode([DirtEntry].self,
                                                from: Data(contentsOf: try #require(feed.manifest)))
        #expect(manifest == feed.dirt)
        #expect(feed.manifest?.lastPathComponent == "dirt20260105.json")

        for entry in feed.dirt {
            let table = try #require(feed.table(entry.table))
            let schema = try #require(GeneratedTables.named(entry.table))
            let records = splitRecords(try readBytes(table.path))
            let record = try #require(records.first { $0.offset == Int(entry.offset) }, "\(entry)")
            if entry.record == 0 {
                #expect(record.isMetadata)
            } else {
                let data = records.filter { !$0.isMetadata }
                #expect(data.firstIndex { $0.offset == record.offset } == entry.record - 1, "\(entry)")
                #expect(record.strings[0] == "1767571200000")
            }
            let column = entry.column.flatMap { schema.columns.firstIndex(of: $0) }
            switch entry.kind {
            case .strayFieldSeparator:
                #expect(record.fields.count == schema.columns.count + 1)
            case .duplicatePrimaryKey:
                let keys = schema.keyIndices
                let data = records.filter { !$0.isMetadata }
                let earlier = data[0..<(entry.record - 1)].filter { other in
                    keys.allSatisfy { other.strings[$0] == record.strings[$0] }
                }
                #expect(earlier.count == 1, "\(entry)")
            case .junkInteger, .oddDatetime, .decimalOverflow:
                let index = try #require(column)
                #expect(record.strings[index] == entry.value)
                #expect(Int(record.strings[index] ?? "") == nil || entry.kind == .oddDatetime)
            case .invalidUTF8:
                #expect(record.bytes.firstRange(of: [0xC3, 0x28, 0xFF]) != nil)
                #expect(String(validating: record.fields[2], as: UTF8.self) == nil)
            case .nulByte:
                #expect(record.fields[13].contains(0))
            case .wrongHeaderTypes:
                #expect(record.text.hasPrefix("#dbTypes:BIGINT\u{01}INTEGER\u{01}VARCHAR(1000)\u{01}"))
                #expect(!record.text.contains("DATETIME"))
            case .missingPrimaryKeyColumn:
                #expect(record.text == "#primaryKey:device_type_id")
            case .typeDrift:
                #expect(record.text.hasPrefix("#dbTypes:"))
                #expect(record.text != "#dbTypes:" + schema.types.joined(separator: "\u{01}"))
            case .recordsWrittenTooLarge:
                let count = records.filter { !$0.isMetadata }.count
                #expect(record.text == "#recordsWritten:\(count + 3)")
                #expect(record.offset == records.last?.offset)
            case .zeroRows:
                Issue.record("no zero-row file in a full export")
            }
        }
    }

    @Test func archivesCarryTheSameDirtAtTheSameOffsets() throws {
        let plain = try TemporaryDirectory()
        let archived = try TemporaryDirectory()
        var options = smallOptions(apps: 100)
        options.dirt = true
        options.tables = ["application", "genre", "artist_type"]
        let v3 = try FeedGenerator.write(options, to: plain.url)
        options.layout = .v5
        let v5 = try FeedGenerator.write(options, to: archived.url)
        #expect(!v3.dirt.isEmpty && v5.dirt == v3.dirt)
        let member = try run("/usr/bin/tar", ["-xjOf", archived.file("itunes20260105", "application.tbz")])
        #expect(member.output == (try readBytes(plain.file("itunes20260105", "application"))))
    }

    @Test func incrementalDirtHasAZeroRowStorefront() throws {
        let directory = try TemporaryDirectory()
        var options = smallOptions()
        options.dirt = true
        options.mode = .incremental
        let feed = try FeedGenerator.write(options, to: directory.url)
        let storefront = try #require(feed.table("storefront"))
        #expect(storefront.rows == 0)
        let records = splitRecords(try readBytes(storefront.path))
        #expect(records.last?.text == "#recordsWritten:0")
        #expect(records.allSatisfy { $0.isMetadata })
        #expect(feed.dirt.contains { $0.kind == .zeroRows && $0.table == "storefront" })
        #expect(feed.dirt.contains { $0.kind == .duplicatePrimaryKey && $0.table == "application" })
    }

    @Test func modelMergesDuplicatesLaterRecordWins() throws {
        var options = smallOptions(apps: 200)
        options.dirt = true
        let model = FeedModel(options)
        let rows = try model.rows("application")
        #expect(rows.count == 200)
        #expect(!rows.contains { $0[2] == "Decoy duplicate (the later record wins)" })
        #expect(try model.records("application").count == 201)
        let prices = try model.rows("application_price")
        #expect(prices.count == 200 * options.priceStorefronts)
        #expect(!prices.contains { $0[2] == "99.990" })
    }
}

@Suite struct IncrementalTests {
    @Test func incrementalHoldsChangedAndNewRowsOnly() throws {
        let directory = try TemporaryDirectory()
        var options = smallOptions()
        options.mode = .incremental
        let feed = try FeedGenerator.write(options, to: directory.url)
        #expect(Set(feed.tables.map(\.table))
                 == GeneratedTables.incrementalTables.union(["application_popularity_per_genre"]))
        let application = try #require(feed.table("application"))
        #expect(application.path == directory.file("itunes20260106", "application"))
        let records = splitRecords(try readBytes(application.path))
        #expect(records[3].text == "#exportMode:INCREMENTAL")
        let data = records.filter { !$0.isMetadata }.map(\.strings)
        let model = FeedModel(options)
        #expect(data.allSatisfy { $0[0] == "1767657600000" })
        #expect(data.contains { $0[1] == String(model.appID(0)) && $0[2] == "Café Olé Lite 2" })
        let newIDs = (options.apps..<(options.apps + model.newAppsPerDay)).map { String(model.appID($0)) }
        #expect(Set(data.compactMap { $0[1] }).isSuperset(of: newIDs))
        #expect(data.count < options.apps / 2)
        let genres = splitRecords(try readBytes(try #require(feed.table("genre_application")).path))
            .filter { !$0.isMetadata }.map(\.strings)
        #expect(Set(genres.compactMap { $0[2] }) == Set(newIDs))
    }

    @Test func modelAppliesFullThenIncrementals() throws {
        let options = smallOptions()
        let model = FeedModel(options)
        let full = try model.rows("application")
        let afterOne = try model.rows("application", throughDay: 1)
        #expect(afterOne.count == options.apps + model.newAppsPerDay)
        #expect(full[0][2] == "Café Olé Lite" && afterOne[0][2] == "Café Olé Lite 2")
        #expect(full[0][14] != afterOne[0][14])
        #expect(afterOne[0][0] == "1767657600000")
        let id1 = String(model.appID(1))
        let pricesBefore = try model.rows("application_price").filter { $0[1] == id1 }
        let pricesAfter = try model.rows("application_price", throughDay: 1).filter { $0[1] == id1 }
        #expect(pricesBefore.count == pricesAfter.count)
        #expect(pricesBefore.map { $0[2] } != pricesAfter.map { $0[2] })
        #expect(try model.rows("genre", throughDay: 1) == model.rows("genre"))

        // Cumulative: loading day 1 then day 3 gives what loading day 3 alone gives.
        for table in ["application", "application_detail", "application_price", "genre_application"] {
            let schema = try #require(GeneratedTables.named(table))
            var merged: [[String?]: [String?]] = [:]
            for day in [0, 1, 3] {
                for record in try model.records(table, day: day) {
                    merged[schema.keyIndices.map { record[$0] }] = record
                }
            }
            let direct = try model.rows(table, throughDay: 3)
            #expect(direct.count == merged.count, "\(table)")
            for row in direct { #expect(merged[schema.keyIndices.map { row[$0] }] == row, "\(table)") }
        }
    }

    @Test func changedAppsKeepEverythingButTitleVersionAndDates() throws {
        let model = FeedModel(smallOptions())
        let full = try model.rows("application")
        for record in try model.records("application", day: 1) {
            guard let before = full.first(where: { $0[1] == record[1] }) else { continue }
            // export_date, title, view_url (its slug follows the title), version, itunes_version may change.
            for column in 0..<record.count where ![0, 2, 8, 14, 15].contains(column) {
                #expect(record[column] == before[column], "column \(column) of \(record[1] ?? "")")
            }
            #expect(record[14] != before[14])
        }
    }

    @Test func incrementalFilesMatchTheModel() throws {
        let directory = try TemporaryDirectory()
        var options = smallOptions()
        options.mode = .incremental
        options.day = 2
        let feed = try FeedGenerator.write(options, to: directory.url)
        let model = FeedModel(options)
        for table in feed.tables {
            let fromFile = splitRecords(try readBytes(table.path)).filter { !$0.isMetadata }.map(\.strings)
            #expect(try model.records(table.table, day: 2) == fromFile, "\(table.table)")
        }
    }
}
