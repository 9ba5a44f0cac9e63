import Foundation
import EPFTestSupport
import Testing
@testable import EPFGenerator

@Suite struct GeneratorTests {
    @Test func sameSeedGivesIdenticalBytesAndAnotherSeedDoesNot() throws {
        let first = try TemporaryDirectory()
        let second = try TemporaryDirectory()
        let third = try TemporaryDirectory()
        var options = smallOptions()
        options.threads = 4
        let a = try FeedGenerator.write(options, to: first.url)
        var sequential = options
        sequential.threads = 1
        let b = try FeedGenerator.write(sequential, to: second.url)
        var other = options
        other.seed = 8
        _ = try FeedGenerator.write(other, to: third.url)
        #expect(a.files.count == FeedGenerator.tables(for: options).count)
        for file in a.files {
            let relative = String(file.path.dropFirst(first.url.path.count))
            #expect(try readBytes(file.path) == readBytes(second.url.path + relative), "\(relative)")
        }
        #expect(b.rowCounts == a.rowCounts)
        #expect(b.tables.map(\.table) == a.tables.map(\.table))
        let application = "/itunes20260105/application"
        #expect(try readBytes(first.url.path + application) != readBytes(third.url.path + application))
    }

    @Test func everyFileHasHeaderAndMatchingRecordsWritten() throws {
        let directory = try TemporaryDirectory()
        let feed = try FeedGenerator.write(smallOptions(), to: directory.url)
        for table in feed.tables {
            let bytes = try readBytes(table.path)
            let records = splitRecords(bytes)
            guard let schema = GeneratedTables.named(table.table), let last = records.last else {
                Issue.record("no records in \(table.table)")
                continue
            }
            #expect(Array(bytes.suffix(2)) == [0x02, 0x0A])
            #expect(records[0].text == "#" + schema.columns.joined(separator: "\u{01}"))
            #expect(records[1].text == "#primaryKey:" + schema.primaryKey.joined(separator: "\u{01}"))
            #expect(records[2].text == "#dbTypes:" + schema.types.joined(separator: "\u{01}"))
            #expect(records[3].text == "#exportMode:FULL")
            #expect(records.filter { $0.text.hasPrefix("##legal:") }.count >= 25)
            let data = records.filter { !$0.isMetadata }
            #expect(last.text == "#recordsWritten:\(data.count)", "\(table.table)")
            #expect(data.count == table.rows)
            #expect(table.bytes == Int64(bytes.count))
            for record in data {
                #expect(record.fields.count == schema.columns.count, "\(table.table) at \(record.offset)" as Comment)
                #expect(record.strings[0] == "1767571200000")
            }
        }
    }

    @Test func idsAreConsistentAcrossTables() throws {
        let directory = try TemporaryDirectory()
        let options = smallOptions(apps: 200)
        let feed = try FeedGenerator.write(options, to: directory.url)
        func rows(_ table: String) throws -> [[String?]] {
            guard let path = feed.table(table)?.path else { return [] }
            return splitRecords(try readBytes(path)).filter { !$0.isMetadata }.map(\.strings)
        }
        let apps = try rows("application").compactMap { $0[1] }
        #expect(apps.count == 200 && Set(apps).count == 200)
        for id in apps {
            guard let value = Int64(id) else { Issue.record("bad id \(id)"); continue }
            #expect(value >= 284_000_000 && value < 1_700_000_000)
        }
        let appSet = Set(apps)
        #expect(Set(try rows("artist_application").compactMap { $0[2] }) == appSet)
        #expect(Set(try rows("application_price").compactMap { $0[1] }) == appSet)
        #expect(Set(try rows("application_detail").compactMap { $0[1] }) == appSet)
        #expect(Set(try rows("application_device_type").compactMap { $0[1] }) == appSet)
        let genreRows = try rows("genre_application")
        #expect(Set(genreRows.compactMap { $0[2] }) == appSet)
        let primaries = genreRows.filter { $0[3] == "1" }.compactMap { $0[2] }
        #expect(primaries.count == 200 && Set(primaries) == appSet)
        let genres = Set(try rows("genre").compactMap { $0[1] })
        #expect(Set(genreRows.compactMap { $0[1] }).isSubset(of: genres))
        #expect(Set(try rows("artist_application").compactMap { $0[1] })
            .isSubset(of: Set(try rows("artist").compactMap { $0[1] })))
        let storefronts = try rows("storefront")
        #expect(storefronts.count >= 40)
        #expect(storefronts.contains { $0 == ["1767571200000", "143441", "USA", "United States"] })
        let currency = Dictionary(uniqueKeysWithValues: Reference.storefronts.map { (String($0.id), $0.currency) })
        for price in try rows("application_price") {
            #expect(price[3] == currency[price[4] ?? ""])
            if price[3] == "JPY" || price[3] == "KRW" { #expect(price[2]?.hasSuffix(".000") == true) }
        }
        let collections = Set(try rows("collection").compactMap { $0[1] })
        let songs = Set(try rows("song").compactMap { $0[1] })
        let collectionSongs = try rows("collection_song")
        #expect(Set(collectionSongs.compactMap { $0[1] }) == collections)
        #expect(Set(collectionSongs.compactMap { $0[2] }) == songs)
        #expect(collections.allSatisfy { (Int64($0) ?? 0) >= 1_700_000_000 && (Int64($0) ?? 0) < 1_800_000_000 })
        #expect(songs.allSatisfy { (Int64($0) ?? 0) >= 1_800_000_000 && (Int64($0) ?? 0) < 2_000_000_000 })
        let popularity = try rows("application_popularity_per_genre")
        #expect(!popularity.isEmpty && Set(popularity.compactMap { $0[3] }).isSubset(of: appSet))
    }

    @Test func fixedTitlesAndLineBreaksArePreserved() throws {
        let options = smallOptions()
        let model = FeedModel(options)
        let rows = try model.rows("application")
        for fixed in FixedApp.all {
            #expect(rows[fixed.index][1] == String(model.appID(fixed.index)))
            #expect(rows[fixed.index][2] == fixed.title)
        }
        #expect(rows[6][13] == "First line\r\nSecond line\nThird line\r\n\r\nLast line")
        #expect(rows[7][13] == nil && rows[7][7] == nil)
        #expect((rows[3][13]?.utf8.count ?? 0) >= 65_536)
        #expect(rows[5][2] == "NULL")
        let bytes = try FeedGenerator.tableBytes("application", options: options)
        let needle = Array("First line\r\nSecond line\nThird line\r\n\r\nLast line\u{01}".utf8)
        #expect(bytes.firstRange(of: needle) != nil)
        let descriptions = rows.compactMap { $0[13] }
        #expect(descriptions.contains { $0.contains("\r\n") })
        #expect(descriptions.filter { $0.contains("\n") }.count > rows.count / 3)
    }

    @Test func modelRecordsMatchTheFilesForEveryTable() throws {
        let directory = try TemporaryDirectory()
        let options = smallOptions()
        let feed = try FeedGenerator.write(options, to: directory.url)
        let model = FeedModel(options)
        for table in feed.tables {
            let fromFile = splitRecords(try readBytes(table.path)).filter { !$0.isMetadata }.map(\.strings)
            #expect(try model.records(table.table) == fromFile, "\(table.table)")
        }
    }

    @Test func gzipOutputDecompressesToThePlainBytes() throws {
        let directory = try TemporaryDirectory()
        var options = smallOptions()
        options.tables = ["application", "storefront"]
        options.gzip = true
        let feed = try FeedGenerator.write(options, to: directory.url)
        for table in feed.tables {
            #expect(table.path.hasSuffix(".gz"))
            let (output, status) = try run("/bin/gzip", ["-dc", table.path])
            #expect(status == 0)
            #expect(output == (try FeedGenerator.tableBytes(table.table, options: options)))
        }
    }

    @Test func badOptionsAreRejectedWithTheirName() {
        var options = GeneratorOptions()
        options.apps = 99
        #expect(throws: GeneratorError.invalidOption(option: "apps", problem: "must be 100 ... 10000000, got 99")) {
            try options.validate()
        }
        options.apps = 100
        options.tables = ["nope"]
        #expect(throws: GeneratorError.unknownTable("nope")) { try options.validate() }
    }

    @Test func anOutputPathThroughAFileFailsNamingIt() throws {
        let directory = try TemporaryDirectory()
        let blocker = directory.file("file")
        #expect(FileManager.default.createFile(atPath: blocker, contents: Data()))
        let target = URL(fileURLWithPath: blocker).appendingPathComponent("feed")
        #expect(throws: GeneratorError.system(call: "mkdir(2)", path: blocker, errno: ENOTDIR)) {
            try FeedGenerator.write(smallOptions(), to: target)
        }
    }

    @Test func datesRoundTrip() {
        #expect(GeneratorOptions.stamp(milliseconds: 1_767_571_200_000) == "20260105")
        #expect(GeneratorOptions.milliseconds(date: "2026-01-05") == 1_767_571_200_000)
        #expect(GeneratorOptions.milliseconds(date: "20160106") == 1_452_038_400_000)
        #expect(GeneratorOptions.milliseconds(date: "2026-02-30") == nil)
        #expect(GeneratorOptions.milliseconds(date: "yesterday") == nil)
    }
}
