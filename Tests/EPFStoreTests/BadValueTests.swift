import EPFFormat
import EPFGenerator
import EPFImport
import EPFSQLite
import Foundation
import Testing
import EPFTestSupport
@testable import EPFStore

/// Junk where numbers and dates belong: repaired to NULL in columns that may be NULL, rejected in keys.
@Suite struct BadValueTests {
    static let columns = ["export_date", "application_id", "title", "download_size", "itunes_release_date",
                          "retail_price"]
    static let types = ["BIGINT", "INTEGER", "VARCHAR(300)", "BIGINT", "DATETIME", "DECIMAL(9,3)"]

    /// Writes an application-like table file; returns the byte offset of each data record.
    @discardableResult
    static func write(_ path: String, rows: [[String]], mode: String = "FULL") throws -> [Int] {
        var text = "#" + columns.joined(separator: "\u{01}") + "\u{02}\n#primaryKey:application_id\u{02}\n"
        text += "#dbTypes:" + types.joined(separator: "\u{01}") + "\u{02}\n#exportMode:\(mode)\u{02}\n"
        var offsets: [Int] = []
        for row in rows {
            offsets.append(text.utf8.count)
            text += row.joined(separator: "\u{01}") + "\u{02}\n"
        }
        text += "#recordsWritten:\(rows.count)\u{02}\n"
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return offsets
    }

    /// One entry of a rejects file, by the leading columns' names.
    struct Entry: Equatable {
        var reason, record, offset, action, column, value: String
    }

    static func entries(_ path: String) throws -> [Entry] {
        var result: [Entry] = []
        try FeedInput.forEachTable(inFile: path, options: ReadOptions()) { _, reader in
            #expect(Array(reader.header.columns.prefix(7)) == RejectsWriter.leadingColumns)
            try reader.forEachRecord { record in
                let text = (0..<6).map { record.string($0) ?? "" }
                result.append(Entry(reason: text[0], record: text[1], offset: text[2], action: text[3],
                                    column: text[4], value: text[5]))
            }
        }
        return result
    }

    static let rows = [
        ["1000", "1", "Clean", "5000", "2012 09 25", "0.99"],
        ["1000", "2", "Exception", "<UnknownKeyException>", "2009 06 21", "0.99"],
        ["1000", "3", "Typename", "[int]", "2005-09-06-00:00:00-Etc/GMT", "1.99"],
        ["1000", "4", "Bad date", "7", "12 9 25", "$1"],
        ["1000", "[5]", "Junk key", "8", "2012", "0.99"],
        ["[1000]", "6", "Junk export date", "9", "2012", "0.99"],
        ["1000", "7", "Control byte", "12\u{07}3", "2012", "0.99"],
    ]

    @Test func junkInColumnsThatMayBeNullIsRepairedAndRecorded() throws {
        let scratch = try TemporaryDirectory()
        let offsets = try Self.write(scratch.file("itunes20260105/application"), rows: Self.rows)
        let database = scratch.file("epf.sqlite")
        let report = try importPaths([scratch.file("itunes20260105")], database: database)
        let outcome = try #require(report.outcomes.first)
        #expect(outcome.status == .applied)
        #expect(outcome.rejects == 2)
        #expect(outcome.repaired == 5)
        #expect(try dump(database, "SELECT application_id, download_size, itunes_release_date, retail_price "
                                   + "FROM application") == [
            "1|5000|2012-09-25T00:00:00Z|0.99", "2|NULL|2009-06-21T00:00:00Z|0.99",
            "3|NULL|2005-09-06T00:00:00Z|1.99", "4|7|NULL|NULL", "7|NULL|2012-01-01T00:00:00Z|0.99",
        ])
        let file = try #require(outcome.rejectsFile)
        let found = try Self.entries(file)
        func entry(_ reason: String, _ index: Int, _ action: String, _ column: String, _ value: String) -> Entry {
            Entry(reason: reason, record: "\(index + 1)", offset: "\(offsets[index])", action: action,
                  column: column, value: value)
        }
        #expect(found == [
            entry("bad-integer", 1, "repaired", "download_size", "<UnknownKeyException>"),
            entry("bad-integer", 2, "repaired", "download_size", "[int]"),
            entry("bad-date", 3, "repaired", "itunes_release_date", "12 9 25"),
            entry("bad-decimal", 3, "repaired", "retail_price", "$1"),
            entry("bad-integer", 4, "rejected", "application_id", "[5]"),
            entry("bad-integer", 5, "rejected", "export_date", "[1000]"),
            entry("bad-integer", 6, "repaired", "download_size", "12\\x073"),
        ])
        // The ledger and `epf status` count the repairs.
        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        #expect(try connection.scalar("SELECT repaired FROM epf_ledger") == .integer(5))
        let status = try StoreStatus.read(connection, databasePath: database)
        #expect(status.lastImports.first?.repaired == 5)
        #expect(status.lastImports.first?.rejects == 2)
    }

    @Test func rejectPolicyRejectsTheRowsInstead() throws {
        let scratch = try TemporaryDirectory()
        try Self.write(scratch.file("itunes20260105/application"), rows: Self.rows)
        let database = scratch.file("epf.sqlite")
        let report = try importPaths([scratch.file("itunes20260105")], database: database) {
            $0.badValues = .reject
        }
        let outcome = try #require(report.outcomes.first)
        #expect(outcome.rejects == 6)
        #expect(outcome.repaired == 0)
        #expect(try dump(database, "SELECT application_id FROM application") == ["1"])
        let found = try Self.entries(try #require(outcome.rejectsFile))
        #expect(found.map(\.action) == Array(repeating: "rejected", count: 6))
        #expect(found.map(\.record) == ["2", "3", "4", "5", "6", "7"])
    }

    @Test func incrementalsRepairTooAndDryRunsCount() throws {
        let scratch = try TemporaryDirectory()
        let database = scratch.file("epf.sqlite")
        try Self.write(scratch.file("itunes20260105/application"), rows: Self.rows)
        let dry = try importPaths([scratch.file("itunes20260105")], database: database) { $0.dryRun = true }
        #expect(dry.outcomes.first?.repaired == 5)
        #expect(dry.outcomes.first?.rejects == 2)
        #expect(!FileManager.default.fileExists(atPath: database))

        try Self.write(scratch.file("itunes20260105/application"), rows: [Self.rows[0]])
        #expect(try importPaths([scratch.file("itunes20260105")], database: database).succeeded)
        try Self.write(scratch.file("itunes20260106/application"), rows: Array(Self.rows[1...]), mode: "INCREMENTAL")
        let incremental = try importPaths([scratch.file("itunes20260106")], database: database)
        #expect(incremental.outcomes.first?.status == .applied)
        #expect(incremental.outcomes.first?.repaired == 5)
        #expect(incremental.outcomes.first?.rejects == 2)
        #expect(try dump(database, "SELECT application_id, download_size FROM application")
                == ["1|5000", "2|NULL", "3|NULL", "4|7", "7|NULL"])
    }

    @Test func aDatabaseFromBeforeRepairsIsReadAndUpgraded() throws {
        let scratch = try TemporaryDirectory()
        let database = scratch.file("epf.sqlite")
        try Self.write(scratch.file("itunes20260105/application"), rows: Self.rows)
        #expect(try importPaths([scratch.file("itunes20260105")], database: database).outcomes.first?.repaired == 5)
        do {
            // What an earlier version made: no repaired columns.
            let connection = try SQLiteConnection(path: database, mode: .readWriteCreate)
            try connection.execute("ALTER TABLE epf_ledger DROP COLUMN repaired")
            try connection.execute("ALTER TABLE epf_progress DROP COLUMN repaired")
        }
        let old = try SQLiteConnection(path: database, mode: .readOnly)
        #expect(try StoreStatus.read(old, databasePath: database).lastImports.first?.repaired == 0)
        let again = try importPaths([scratch.file("itunes20260105")], database: database) { $0.force = true }
        #expect(again.succeeded)
        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        #expect(try StoreDatabase.hasColumn(connection, table: "epf_progress", column: "repaired"))
        #expect(try StoreStatus.read(connection, databasePath: database).lastImports.first?.repaired == 5)
    }

    @Test func valuesAreEscapedAndCutForTheRejectsFile() {
        func escaped(_ bytes: [UInt8], limit: Int = 200) -> String {
            bytes.withUnsafeBytes { RowBinder.escaped($0, limit: limit) }
        }
        #expect(escaped(Array("a\u{01}b\u{02}\nc\\d".utf8)) == "a\\x01b\\x02\\x0ac\\\\d")
        #expect(escaped(Array("abcdef".utf8), limit: 4) == "abcd...")
        // A cut never splits a character: "é" is two bytes.
        #expect(escaped(Array("abcé".utf8), limit: 4) == "abc...")
        #expect(escaped(Array("<UnknownKeyException>".utf8)) == "<UnknownKeyException>")
    }
}
