import EPFFormat
import EPFGenerator
@testable import EPFImport
import Foundation
import Testing
import EPFTestSupport
@testable import EPFStore

/// Imports with read-ahead (tiny limits, so the spill file is used) give what imports without it give.
@Suite struct ReadAheadImportTests {
    static let tables = ["application", "application_detail", "application_device_type", "genre",
                         "application_price"]
    /// Limits that send almost every chunk through the spill file.
    static let tiny = ReadAheadFile.Limits(memoryBytes: 8192, spillBytes: 1 << 30, chunkBytes: 4096)

    static func feed(_ scratch: Scratch, layout: FeedLayout) throws -> [String] {
        var options = GeneratorOptions()
        options.apps = 600
        options.seed = 5
        options.priceStorefronts = 3
        options.layout = layout
        options.tables = Set(tables)
        return try generate(options, in: scratch.path, name: "feed")
    }

    /// What a report says, without timings.
    static func summary(_ report: ImportReport) -> [String] {
        report.outcomes.map { outcome in
            [outcome.table, outcome.location, outcome.status.rawValue, outcome.message ?? "", "\(outcome.records)",
             "\(outcome.rows)", "\(outcome.rejects)", outcome.warnings.joined(separator: ";")]
                .joined(separator: "|")
        } + report.fileErrors + report.unchangedSources
    }

    static func rows(_ database: String, of chosen: [String] = tables) throws -> [String] {
        var rows: [String] = []
        for table in chosen {
            rows += try dump(database, "SELECT * FROM \(table)").map { "\(table): \($0)" }
        }
        return rows
    }

    /// A v5 feed (one .tbz per table) and archives of several tables each (v3-archive, given as one directory so
    /// the second archive is read ahead) load the same rows and report the same outcomes with and without it.
    @Test(arguments: [FeedLayout.v5, .v3Archive])
    func readAheadChangesNothingInTheResult(layout: FeedLayout) throws {
        let scratch = try Scratch()
        let feedPaths = try Self.feed(scratch, layout: layout)
        let paths = layout == .v5 ? feedPaths : [scratch.file("feed")]
        let plain = try importPaths(paths, database: scratch.file("plain.sqlite")) { $0.readAhead = nil }
        let ahead = try importPaths(paths, database: scratch.file("ahead.sqlite")) { $0.readAhead = Self.tiny }
        #expect(plain.succeeded, "\(Self.summary(plain))")
        #expect(Self.summary(ahead) == Self.summary(plain))
        #expect(plain.outcomes.filter { $0.status == .applied }.count == Self.tables.count)
        let rows = try Self.rows(scratch.file("plain.sqlite"))
        #expect(rows.count > 600)
        #expect(try Self.rows(scratch.file("ahead.sqlite")) == rows)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: scratch.path)
            .filter { $0.hasPrefix(".epf-read-ahead") }
        #expect(leftovers.isEmpty)
    }

    /// A corrupt or truncated second archive is reported with the same messages (file, byte offset) as without
    /// read-ahead, and a sidecar mismatch still stops the archive before any of its tables is read.
    @Test(arguments: ["truncated", "corrupt", "sidecar"])
    func aBrokenSecondArchiveIsReportedAsBefore(damage: String) throws {
        let scratch = try Scratch()
        let feedPaths = try Self.feed(scratch, layout: .v5)
        let itunes = try #require(feedPaths.first { $0.contains("itunes") })
        let files = try FeedInput.files(at: itunes)
        #expect(files.count >= 3)
        let second = files[1]
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: second)))
        switch damage {
        case "truncated": bytes = Array(bytes.prefix(bytes.count * 2 / 3))
        case "corrupt": bytes[bytes.count / 2] ^= 0x55
        default: bytes[bytes.count - 3] ^= 0x01
        }
        try Data(bytes).write(to: URL(fileURLWithPath: second))
        if damage != "sidecar", let sidecar = FeedInput.sidecar(for: second) {
            try FileManager.default.removeItem(atPath: sidecar)
        }
        let plain = try importPaths([itunes], database: scratch.file("plain.sqlite")) { $0.readAhead = nil }
        let ahead = try importPaths([itunes], database: scratch.file("ahead.sqlite")) { $0.readAhead = Self.tiny }
        #expect(!plain.succeeded)
        let messages = plain.fileErrors + plain.outcomes.compactMap(\.message)
        #expect(messages.contains { $0.contains(second) }, "\(messages)")
        if damage == "sidecar" { #expect(messages.contains { $0.contains("MD5 mismatch") }) }
        if damage == "truncated" { #expect(messages.contains { $0.contains("compressed byte") }) }
        #expect(Self.summary(ahead) == Self.summary(plain))
        let applied = plain.outcomes.filter { $0.status == .applied }.map(\.table)
        #expect(applied.count >= 2)
        #expect(try Self.rows(scratch.file("ahead.sqlite"), of: applied)
                    == Self.rows(scratch.file("plain.sqlite"), of: applied))
    }

    /// The schedule reads ahead the next unit the import will read: never one the ledger shows applied, nor a
    /// file whose name shows a table left out by --only/--skip; after the last unit of an input, the first of the
    /// next input.
    @Test func theScheduleSkipsAppliedAndFilteredUnits() throws {
        let scratch = try Scratch()
        let units = ["a/application.tbz", "a/application_detail.tbz", "a/genre.tbz", "a/storefront.tbz",
                     "a/itunes20260101.tbz", "a/plain_table"].map { [scratch.file($0)] }
        let later = ["b/genre.tbz", "b/application_price.tbz"].map { [scratch.file($0)] }
        let settings = ReadAheadSettings(databasePath: scratch.file("epf.sqlite"))
        let schedule = ReadAheadSchedule(settings: settings, options: ReadOptions(),
                                         skipped: { $0.first?.hasSuffix("application_detail.tbz") == true },
                                         selected: { $0 != "genre" })
        schedule.start(after: 0, in: units) { later }
        #expect(schedule.history == [scratch.file("a/storefront.tbz")])
        schedule.start(after: 0, in: units) { later }
        #expect(schedule.history.count == 1, "one read-ahead per unit")
        #expect(schedule.take(units[1]) == nil)
        #expect(schedule.take(units[3])?.path == scratch.file("a/storefront.tbz"))
        schedule.start(after: 3, in: units) { later }
        #expect(schedule.history.last == scratch.file("a/itunes20260101.tbz"), "a feed archive's name tells nothing")
        #expect(schedule.take(units[4]) != nil)
        schedule.start(after: 4, in: units) { later }
        #expect(schedule.history.count == 2, "plain files are not read ahead")
        schedule.start(after: 5, in: units) { later }
        #expect(schedule.history.last == scratch.file("b/application_price.tbz"), "the next input's first")
        #expect(schedule.take(later[1]) != nil)
        schedule.start(after: 1, in: later) { [] }
        #expect(schedule.history.count == 3)
        schedule.cancel()
    }

    /// The spill file may hold the input's size, or a quarter of the database once that is more, never more
    /// than the limit.
    @Test func theSpillBoundFollowsTheInputAndTheDatabase() throws {
        let scratch = try Scratch()
        try scratch.write("input.tbz", [UInt8](repeating: 1, count: 1000))
        var settings = ReadAheadSettings(databasePath: scratch.file("epf.sqlite"))
        #expect(settings.spillDirectory == scratch.path)
        #expect(settings.spillBound(input: scratch.file("input.tbz")) == 1000)
        try scratch.write("epf.sqlite", [UInt8](repeating: 0, count: 40_000))
        #expect(settings.spillBound(input: scratch.file("input.tbz")) == 10_000)
        settings.limits.spillBytes = 5000
        #expect(settings.spillBound(input: scratch.file("input.tbz")) == 5000)
    }

    /// An import that resumes after the ledger recorded the second archive never opens it: it is reported
    /// unchanged, and the read-ahead goes to the third.
    @Test func anAppliedNextArchiveIsNotRead() throws {
        let scratch = try Scratch()
        let feedPaths = try Self.feed(scratch, layout: .v5)
        let itunes = try #require(feedPaths.first { $0.contains("itunes") })
        let files = try FeedInput.files(at: itunes)
        let second = files[1]
        let secondTable = FeedInput.tableName(fromFileName: (second as NSString).lastPathComponent).table
        let database = scratch.file("epf.sqlite")
        let first = try importPaths([itunes], database: database) { $0.only = "^\(secondTable)$" }
        #expect(first.outcomes.contains { $0.table == secondTable && $0.status == .applied })
        // Garbage of the same size and time now: the ledger still knows the file, reading it (ahead or not)
        // would fail the import.
        let attributes = try FileManager.default.attributesOfItem(atPath: second)
        let size = try #require(attributes[.size] as? Int)
        try Data(repeating: 0x42, count: size).write(to: URL(fileURLWithPath: second))
        try FileManager.default.setAttributes([.modificationDate: try #require(attributes[.modificationDate])],
                                              ofItemAtPath: second)
        let started = Started()
        let again = try importPaths([itunes], database: database) { options in
            options.readAhead = Self.tiny
            options.readAheadStarted = { started.add($0) }
        }
        #expect(again.succeeded, "\(Self.summary(again))")
        #expect(again.unchangedSources == [second])
        #expect(!started.paths.isEmpty)
        #expect(!started.paths.contains(second))
        #expect(started.paths.first == files[2], "the read-ahead after the first table goes to the third")
    }

    /// The files a test import read ahead.
    final class Started: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [String] = []
        var paths: [String] { lock.withLock { list } }
        func add(_ path: String) { lock.withLock { list.append(path) } }
    }
}
