import EPFFormat
import EPFGenerator
import EPFSchema
import EPFSQLite
import EPFTestSupport
import Foundation
import Testing
@testable import EPFStore

/// The changes table: what fulls and incrementals record, against the generator's model.
@Suite struct ChangeLogTests {
    /// 2,000 apps: about 20 are removed at each weekly full. Only `application`, to keep the test quick.
    static func options() -> GeneratorOptions {
        var options = GeneratorOptions()
        options.apps = 2000
        options.seed = 11
        options.tables = ["application"]
        return options
    }

    /// The recorded changes of one export date, by change: `["removed": ids, ...]`.
    static func changes(_ database: String, exportDate: Int64) throws -> [String: Set<Int64>] {
        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        guard try connection.tableExists(ChangeLog.table) else { return [:] }
        var result: [String: Set<Int64>] = [:]
        for row in try connection.query("SELECT change, id, kind FROM epf_changes WHERE export_date = ?1",
                                        [.integer(exportDate)]) {
            guard case .text(let change) = row[0], case .integer(let id) = row[1] else { continue }
            #expect(row[2] == .text("app"))
            result[change, default: []].insert(id)
        }
        return result
    }

    static func count(_ database: String) throws -> Int64 {
        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        guard try connection.tableExists(ChangeLog.table) else { return 0 }
        if case .integer(let count) = try connection.scalar("SELECT count(*) FROM epf_changes") { return count }
        return -1
    }

    @Test func twoFullsAndIncrementalsRecordTheModelsChanges() throws {
        let scratch = try Scratch()
        let model = FeedModel(Self.options())
        let database = scratch.file("epf.sqlite")
        let week1 = model.fullOptions(week: 1)
        let day1 = model.incrementalOptions(day: 1)
        let day8 = model.incrementalOptions(day: 8)
        let paths = [
            try generate(model.options, in: scratch.path, name: "full0"),
            try generate(day1, in: scratch.path, name: "day1"),
            try generate(week1, in: scratch.path, name: "full1"),
            try generate(day8, in: scratch.path, name: "day8"),
        ]

        // The first full is the baseline: nothing recorded.
        #expect(try importPaths(paths[0], database: database).succeeded)
        #expect(try Self.count(database) == 0)

        #expect(try importPaths(paths[1], database: database).succeeded)
        let incremental = model.incrementalChanges(day: 1, afterWeek: 0)
        #expect(!incremental.updated.isEmpty && !incremental.added.isEmpty)
        #expect(try Self.changes(database, exportDate: day1.exportDate)
                == ["updated": incremental.updated, "added": incremental.added])

        #expect(try importPaths(paths[2], database: database).succeeded)
        let full = model.fullChanges(week: 1, afterIncrementals: [1])
        #expect(full.removed.count >= 5 && !full.added.isEmpty)
        #expect(try Self.changes(database, exportDate: week1.exportDate)
                == ["removed": full.removed, "added": full.added])
        // The table carries one narrow index of its keys, which the next full's comparison reads.
        #expect(try dump(database, "SELECT count(*) FROM sqlite_schema WHERE type = 'index' "
                                   + "AND tbl_name = 'application' AND name LIKE 'application__key__%'") == ["1"])
        let present = try dump(database, "SELECT application_id FROM application")
        #expect(present == model.appIDs(presentAtDay: 7).map(String.init).sorted())

        #expect(try importPaths(paths[3], database: database).succeeded)
        let later = model.incrementalChanges(day: 8, afterWeek: 1)
        #expect(!later.added.isEmpty)
        var expected = ["updated": later.updated, "added": later.added]
        if later.updated.isEmpty { expected["updated"] = nil }
        #expect(try Self.changes(database, exportDate: day8.exportDate) == expected)
        // Nothing was recorded under another date.
        #expect(try Self.count(database) == Int64(incremental.updated.count + incremental.added.count
                                                   + full.removed.count + full.added.count
                                                   + later.updated.count + later.added.count))
    }

    /// A key written twice in an incremental (EPF-FORMAT.md section 3), adjacent and far apart, for an id the
    /// table has (updated twice) and one it does not (added, then updated): the table is applied, the later row
    /// wins, and each id is recorded once with its first change. This failed the whole table with
    /// `UNIQUE constraint failed: epf_touched.id` when the change triggers relied on `INSERT OR IGNORE`.
    @Test func aKeyWrittenTwiceInAnIncrementalIsAppliedAndRecordedOnce() throws {
        let scratch = try Scratch()
        let model = FeedModel(Self.options())
        let database = scratch.file("epf.sqlite")
        let day1 = model.incrementalOptions(day: 1)
        let full0 = try generate(model.options, in: scratch.path, name: "full0")
        let incremental = try generate(day1, in: scratch.path, name: "day1")
        let expected = model.incrementalChanges(day: 1, afterWeek: 0)
        let updatedID = try #require(expected.updated.min())
        let addedID = try #require(expected.added.min())

        let file = try #require(incremental.first).appending("/application")
        var records = try Data(contentsOf: URL(fileURLWithPath: file))
            .split(separator: UInt8(0x02), omittingEmptySubsequences: false)
            .map { Data($0.first == 0x0A ? $0.dropFirst() : $0[...]) }
        func dataIndex(of id: Int64) throws -> Int {
            try #require(records.firstIndex { !$0.starts(with: [UInt8(ascii: "#")])
                && $0.split(separator: UInt8(0x01), omittingEmptySubsequences: false)[1] == Data("\(id)".utf8) })
        }
        // The updated id twice in a row, unchanged; the added id again at the end, with a new title.
        let updatedRow = try dataIndex(of: updatedID)
        records.insert(records[updatedRow], at: updatedRow + 1)
        var addedFields: [Data] = records[try dataIndex(of: addedID)]
            .split(separator: UInt8(0x01), omittingEmptySubsequences: false).map { Data($0) }
        addedFields[2] = Data("Written Twice".utf8)
        let footer = try #require(records.firstIndex { $0.starts(with: Data("#recordsWritten:".utf8)) })
        let written = try #require(Int(String(decoding: records[footer].dropFirst(16), as: UTF8.self)))
        records[footer] = Data("#recordsWritten:\(written + 2)".utf8)
        records.insert(Data(addedFields.joined(separator: [0x01])), at: footer)
        var bytes = Data()
        for (index, record) in records.enumerated() {
            bytes.append(record)
            if index < records.count - 1 { bytes.append(contentsOf: [0x02, 0x0A]) }
        }
        try bytes.write(to: URL(fileURLWithPath: file))

        #expect(try importPaths(full0, database: database).succeeded)
        let report = try importPaths(incremental, database: database)
        #expect(report.succeeded)
        #expect(report.outcomes.first { $0.table == "application" }?.status == .applied)
        #expect(try dump(database, "SELECT title FROM application WHERE application_id = \(addedID)")
                == ["Written Twice"])
        #expect(try Self.changes(database, exportDate: day1.exportDate)
                == ["updated": expected.updated, "added": expected.added])
    }

    @Test func rerunningAnExportRecordsNothingTwice() throws {
        let scratch = try Scratch()
        let model = FeedModel(Self.options())
        let database = scratch.file("epf.sqlite")
        let full0 = try generate(model.options, in: scratch.path, name: "full0")
        let day1 = try generate(model.incrementalOptions(day: 1), in: scratch.path, name: "day1")
        let full1 = try generate(model.fullOptions(week: 1), in: scratch.path, name: "full1")
        #expect(try importPaths(full0 + day1 + full1, database: database).succeeded)
        let recorded = try Self.count(database)
        #expect(recorded > 0)
        // Forced again: the same full replaces an identical table, the same incremental rewrites the same rows.
        #expect(try importPaths(full1, database: database) { $0.force = true }.succeeded)
        #expect(try importPaths(day1, database: database) { $0.force = true }.succeeded)
        #expect(try Self.count(database) == recorded)
    }

    @Test func aFailedFullRecordsNothing() throws {
        let scratch = try Scratch()
        let model = FeedModel(Self.options())
        let database = scratch.file("epf.sqlite")
        let full0 = try generate(model.options, in: scratch.path, name: "full0")
        let full1 = try generate(model.fullOptions(week: 1), in: scratch.path, name: "full1")
        #expect(try importPaths(full0, database: database).succeeded)
        let before = try dump(database, "SELECT application_id FROM application")
        // Cut the second full in the middle of a record: no #recordsWritten footer.
        let file = try #require(full1.first).appending("/application")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: file))
        let report = try importPaths(full1, database: database)
        #expect(!report.succeeded)
        #expect(report.outcomes.first?.status == .failed)
        #expect(try Self.count(database) == 0)
        #expect(try dump(database, "SELECT application_id FROM application") == before)
    }

    /// Both ways of comparing the keys (the merge over rowid keys, the anti-join over anything else) record the
    /// same changes.
    @Test(arguments: ["INTEGER PRIMARY KEY", "TEXT"])
    func keysComparedEitherWay(keyType: String) throws {
        let scratch = try Scratch()
        let connection = try SQLiteConnection(path: scratch.file("epf.sqlite"), mode: .readWriteCreate)
        try connection.execute("""
            CREATE TABLE song (song_id \(keyType), name TEXT);
            CREATE TABLE epf_staging_song (song_id \(keyType), name TEXT);
            INSERT INTO song VALUES (1, 'a'), (2, 'b'), (3, 'c'), (10, 'j');
            INSERT INTO epf_staging_song VALUES (2, 'b'), (3, 'c'), (4, 'd'), (9, 'i');
            """)
        let tracking = try #require(try ChangeTracking(connection, table: "song"))
        try tracking.recordFull(connection, staging: "epf_staging_song", exportDate: 1_000, feedDate: nil)
        let rows = try connection.query("SELECT change, id, kind, export_date FROM epf_changes ORDER BY change, id")
        #expect(rows == [[.text("added"), .integer(4), .text("song"), .integer(1_000)],
                         [.text("added"), .integer(9), .text("song"), .integer(1_000)],
                         [.text("removed"), .integer(1), .text("song"), .integer(1_000)],
                         [.text("removed"), .integer(10), .text("song"), .integer(1_000)]])
        #expect(try ChangeTracking(connection, table: "song_price") == nil)
    }
}
