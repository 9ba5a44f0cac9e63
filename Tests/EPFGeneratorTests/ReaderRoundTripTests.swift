import EPFFormat
import Foundation
import EPFTestSupport
import Testing
@testable import EPFGenerator

/// Generator output read back through EPFFormat's reader must give exactly the generator's model.
@Suite struct ReaderRoundTripTests {
    /// Reads every table at `path` (a file or feed directory) into field strings per table.
    static func read(_ path: String, readSize: Int) throws -> [String: (records: [[String?]], summary: EPFReadSummary,
                                                                         header: EPFHeader)] {
        var tables: [String: (records: [[String?]], summary: EPFReadSummary, header: EPFHeader)] = [:]
        var options = ReadOptions(readSize: readSize, prefetch: false)
        options.verifySidecars = true
        try FeedInput.forEachTable(at: path, options: options) { file, reader in
            var records: [[String?]] = []
            let summary = try reader.forEachRecord { record in
                records.append((0..<record.fieldCount).map { record.string($0) })
            }
            tables[file.table] = (records, summary, reader.header)
        }
        return tables
    }

    @Test(arguments: [(FeedLayout.v3, false), (.v3, true), (.v5, false), (.v3Archive, false)])
    func generatedRowsReadBackIdentically(layout: FeedLayout, gzip: Bool) throws {
        let directory = try TemporaryDirectory()
        var options = smallOptions(apps: 100)
        options.layout = layout
        options.gzip = gzip
        options.priceStorefronts = 3
        let feed = try FeedGenerator.write(options, to: directory.url)
        let model = FeedModel(options)
        // A 1-byte read size on a small feed forces every record, field and terminator across read boundaries.
        let tables = try Self.read(directory.url.path, readSize: 1)
        #expect(Set(tables.keys) == Set(feed.tables.map(\.table)))
        for table in feed.tables {
            let read = try #require(tables[table.table])
            let schema = try #require(GeneratedTables.named(table.table))
            #expect(read.records == (try model.records(table.table)), "\(table.table)")
            #expect(read.summary.records == table.rows)
            #expect(read.summary.declaredRecords == table.rows)
            #expect(!read.summary.truncated && !read.summary.countMismatch && read.summary.badRecords == 0)
            #expect(read.header.columns == schema.columns)
            #expect(read.header.primaryKey == schema.primaryKey)
            #expect(read.header.dbTypes == schema.types)
            #expect(read.header.exportMode == .full)
        }
    }

    @Test(arguments: FileCompression.allCases)
    func singleFilesReadBackWithTinyReads(compression: FileCompression) throws {
        let directory = try TemporaryDirectory()
        let options = smallOptions(apps: 100)
        let suffix = ["none": "", "gzip": ".gz", "bzip2": ".bz2", "tarBzip2": ".tbz"][compression.rawValue] ?? ""
        let path = directory.file("itunes20260105", "application_detail" + suffix)
        try FileManager.default.createDirectory(atPath: directory.file("itunes20260105"),
                                                withIntermediateDirectories: true)
        try FeedGenerator.writeTable("application_detail", options: options, to: URL(fileURLWithPath: path),
                                     compression: compression)
        for readSize in [1, 7, 1 << 16] {
            let tables = try Self.read(path, readSize: readSize)
            #expect(tables["application_detail"]?.records == (try FeedModel(options).records("application_detail")),
                    "read size \(readSize)")
        }
    }

    @Test func incrementalReadsBackAsIncremental() throws {
        let directory = try TemporaryDirectory()
        var base = smallOptions(apps: 100)
        base.layout = .v5
        let model = FeedModel(base)
        var options = model.incrementalOptions(day: 2)
        options.layout = .v5
        _ = try FeedGenerator.write(options, to: directory.url)
        let tables = try Self.read(directory.url.path, readSize: 3)
        // The changed tables, and the day's charts (v5's four) as FULL snapshots.
        let charts = GeneratedTables.dailyTables.subtracting(["application_popularity_per_genre"])
        #expect(Set(tables.keys) == GeneratedTables.incrementalTables.union(charts))
        for (table, read) in tables {
            #expect(read.header.exportMode == (charts.contains(table) ? .full : .incremental))
            #expect(read.records == (try model.records(table, day: 2)), "\(table)")
        }
    }

    @Test func readerSeesTheDirtWhereTheManifestSaysItIs() throws {
        let directory = try TemporaryDirectory()
        var options = smallOptions(apps: 200)
        options.dirt = true
        let feed = try FeedGenerator.write(options, to: directory.url)
        var offsets: [String: [Int: Int64]] = [:]
        var fieldCounts: [String: [Int: Int]] = [:]
        var issues: [String: [Int: RecordIssues]] = [:]
        var summaries: [String: EPFReadSummary] = [:]
        try FeedInput.forEachTable(at: directory.url.path, options: ReadOptions(readSize: 5)) { file, reader in
            summaries[file.table] = try reader.forEachRecord { record in
                offsets[file.table, default: [:]][record.number] = record.offset
                fieldCounts[file.table, default: [:]][record.number] = record.fieldCount
                issues[file.table, default: [:]][record.number] = record.issues
            }
        }
        for entry in feed.dirt where entry.record > 0 {
            #expect(offsets[entry.table]?[entry.record] == entry.offset, "\(entry)")
            switch entry.kind {
            case .strayFieldSeparator:
                #expect(issues[entry.table]?[entry.record]?.contains(.fieldCount) == true)
            case .invalidUTF8:
                #expect(issues[entry.table]?[entry.record]?.contains(.invalidUTF8) == true)
            case .nulByte:
                #expect(issues[entry.table]?[entry.record]?.contains(.nulByte) == true)
            default:
                break
            }
        }
        #expect(summaries["artist_type"]?.countMismatch == true)
        #expect(summaries["application"]?.countMismatch == false)
    }
}
