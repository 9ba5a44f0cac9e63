@testable import EPFSQLite
import EPFTestSupport
import Foundation
import Testing

/// The memory-mapped VFS must read exactly what SQLite's default VFS reads while a writer grows, rewrites and
/// shrinks the file underneath it.
@Suite struct MappedVFSTests {
    /// A reader through the mapped VFS with mapping on, as the query engine opens it.
    private func mappedReader(_ path: String) throws -> SQLiteConnection {
        let name = try #require(MappedVFS.registeredName())
        let reader = try SQLiteConnection(path: path, mode: .readOnly, vfs: name)
        try reader.execute("PRAGMA mmap_size = 1099511627776")
        return reader
    }

    /// A new database at `path` with table `t(a, b)` and `count` rows, in WAL or rollback-journal mode.
    private func writer(_ path: String, wal: Bool, rows count: Int) throws -> SQLiteConnection {
        let writer = try SQLiteConnection(path: path, mode: .readWriteCreate)
        if wal { try writer.execute("PRAGMA journal_mode = WAL") }
        try writer.execute("CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT)")
        if count > 0 { try fill(writer, from: 1, count: count) }
        return writer
    }

    private func fill(_ writer: SQLiteConnection, from first: Int, count: Int) throws {
        try writer.transaction {
            let insert = try writer.prepare("INSERT INTO t(a, b) VALUES (?1, ?2)")
            for key in first..<(first + count) {
                try insert.bind(Int64(key), at: 1)
                try insert.bind(String(repeating: "row \(key) ", count: 20), at: 2)
                _ = try insert.step()
                insert.reset()
            }
        }
    }

    @Test func limitIsNotCappedAtTwoGibibytes() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("t.sqlite")
        _ = try writer(path, wal: true, rows: 0)
        let reader = try mappedReader(path)
        // The default VFS reports its compile-time cap (2 GiB in Debian's build); the mapped VFS keeps the limit.
        #expect(try reader.scalar("PRAGMA mmap_size") == .integer(1_099_511_627_776))
    }

    @Test func readerSeesGrowthRewritesAndShrinking() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("t.sqlite")
        let writer = try writer(path, wal: true, rows: 2_000)
        try writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        let reader = try mappedReader(path)
        let plain = try SQLiteConnection(path: path, mode: .readOnly)
        func agree(_ expectedCount: Int64) throws {
            let sql = "SELECT count(*), sum(length(b)), sum(a) FROM t"
            let mapped = try reader.query(sql)
            #expect(mapped == (try plain.query(sql)))
            #expect(mapped.first?.first == .integer(expectedCount))
        }
        try agree(2_000)

        // Growth: new pages are appended to the file after the map was made, first in the WAL, then checkpointed.
        try fill(writer, from: 2_001, count: 20_000)
        try agree(22_000)
        try writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        try agree(22_000)

        // Rewrites of pages the reader has mapped.
        try writer.execute("UPDATE t SET b = 'changed ' || a WHERE a % 3 = 0")
        try writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        try agree(22_000)
        #expect(try reader.scalar("SELECT b FROM t WHERE a = 9") == .text("changed 9"))

        // Shrinking: VACUUM truncates the file below the mapped length.
        try writer.execute("DELETE FROM t WHERE a > 500")
        try writer.execute("VACUUM")
        try writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        try agree(500)
        try fill(writer, from: 501, count: 100)
        try agree(600)
        #expect(try reader.scalar("PRAGMA integrity_check") == .text("ok"))
    }

    @Test func rollbackJournalDatabasesReadToo() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("t.sqlite")
        let writer = try writer(path, wal: false, rows: 3_000)
        let reader = try mappedReader(path)
        #expect(try reader.scalar("SELECT count(*) FROM t") == .integer(3_000))
        try writer.execute("DELETE FROM t WHERE a > 1000; VACUUM")
        #expect(try reader.scalar("SELECT count(*) FROM t") == .integer(1_000))
        #expect(try reader.scalar("SELECT max(a) FROM t") == .integer(1_000))
    }
}
