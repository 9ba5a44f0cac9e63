import EPFSQLite
import Foundation
import Testing

/// `SQLiteConnection.setPreUpdateHook`: every insert, update and delete is reported with the row's values before
/// and after, and removing the hook stops the reports.
@Suite struct PreUpdateHookTests {
    @Test func reportsEachChangeWithItsOldAndNewValues() throws {
        let connection = try SQLiteConnection(path: ":memory:", mode: .readWriteCreate)
        try connection.execute("CREATE TABLE price (id INTEGER PRIMARY KEY, amount TEXT, currency TEXT)")
        var seen: [String] = []
        connection.setPreUpdateHook { change in
            let table = String(cString: change.table)
            switch change.operation {
            case .insert:
                seen.append("insert \(table) \(change.new(0)?.int64 ?? -1) \(change.new(1)?.text ?? "∅")")
            case .update:
                seen.append("update \(change.old(1)?.double ?? -1) -> \(change.new(1)?.double ?? -1) "
                            + "\(change.new(2)?.text ?? "∅")")
            case .delete:
                seen.append("delete \(change.old(0)?.int64 ?? -1) \(change.new(0) == nil)")
            }
        }
        try connection.execute("""
            INSERT INTO price VALUES (1, '0.990', 'USD');
            UPDATE price SET amount = '1.99', currency = 'EUR' WHERE id = 1;
            DELETE FROM price WHERE id = 1;
            """)
        #expect(seen == ["insert price 1 0.990", "update 0.99 -> 1.99 EUR", "delete 1 true"])
        connection.setPreUpdateHook(nil)
        try connection.execute("INSERT INTO price VALUES (2, NULL, NULL)")
        #expect(seen.count == 3)
    }
}
