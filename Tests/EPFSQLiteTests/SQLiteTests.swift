@testable import EPFSQLite
import EPFTestSupport
import Foundation
import Testing

@Suite struct SQLiteWrapperTests {
    @Test func readOnlyConnectionRefusesWrites() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("t.sqlite")
        let writer = try SQLiteConnection(path: path, mode: .readWriteCreate)
        try writer.execute("CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT); INSERT INTO t VALUES (1, 'x')")
        let reader = try SQLiteConnection(path: path, mode: .readOnly)
        #expect(try reader.scalar("SELECT b FROM t WHERE a = 1") == .text("x"))
        #expect(throws: SQLiteError.self) { try reader.execute("DELETE FROM t") }
        #expect(try reader.scalar("SELECT count(*) FROM t") == .integer(1))
    }

    @Test func errorsCarryTheSQL() throws {
        let connection = try SQLiteConnection(path: ":memory:", mode: .readWriteCreate)
        do {
            try connection.execute("SELEC 1")
            Issue.record("expected a syntax error")
        } catch let error as SQLiteError {
            #expect(error.description.contains("SELEC 1"))
        }
    }
}
