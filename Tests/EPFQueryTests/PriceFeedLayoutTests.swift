import EPFSchema
import EPFSQLite
import EPFTestSupport
import Foundation
import Testing
@testable import EPFQuery
@testable import EPFStore

/// The feed of price changes pages the same over a history of the earlier layout (a table, one row per change) as
/// over the packed one it is moved into, with pages that end inside an item's row.
@Suite struct PriceFeedLayoutTests {
    /// 2 exports x 4 items x 3 storefronts, item by item, as a load records them.
    static let rows: [(date: Int64, id: Int64, storefront: Int64, old: String, new: String)] = {
        var rows: [(Int64, Int64, Int64, String, String)] = []
        for (day, date) in [Int64(1_767_571_200_000), 1_767_657_600_000].enumerated() {
            for id in Int64(10)...13 {
                for storefront in [Int64(143441), 143442, 143462] {
                    let drop = (id + storefront + Int64(day)) % 2 == 0
                    rows.append((date, id, storefront, drop ? "2.99" : "0.99", drop ? "1.99" : "1.49"))
                }
            }
        }
        return rows
    }()

    static func page(_ database: String, country: String?, drops: Bool, limit: Int) throws -> [String] {
        let engine = try QueryEngine(databasePath: database)
        var cursor: String?
        var listed: [String] = []
        repeat {
            let page = try engine.changes.pricePage(since: "2026-01-01", country: country, drops: drops, limit: limit,
                                                    cursor: cursor)
            #expect(page.changes.count <= limit)
            listed += page.changes.map { "\($0.exportDate) \($0.id) \($0.storefrontId) \($0.newPrice ?? "-")" }
            cursor = page.nextCursor
        } while cursor != nil
        return listed
    }

    @Test func pagesAlikeBeforeAndAfterTheHistoryIsPacked() throws {
        let fixture = try CatalogueDatabase(extraSQL: PriceHistory.schema(qualifiedTable: PriceHistory.table,
                                                                          serial: "INTEGER PRIMARY KEY"))
        defer { fixture.remove() }
        do {
            let connection = try SQLiteConnection(path: fixture.path, mode: .readWrite)
            let insert = try connection.prepare("""
                INSERT INTO epf_price_history (export_date, kind, id, storefront_id, change, old_price, new_price,
                    currency) VALUES (?1, 'app', ?2, ?3, 'changed', ?4, ?5, 'USD')
                """)
            for row in Self.rows {
                try insert.bind([.integer(row.date), .integer(row.id), .integer(row.storefront), .text(row.old),
                                 .text(row.new)])
                _ = try insert.step()
                insert.reset()
            }
        }
        func line(_ row: (date: Int64, id: Int64, storefront: Int64, old: String, new: String)) -> String {
            "\(row.date) \(row.id) \(row.storefront) \(row.new)"
        }
        let all = Self.rows.map(line)
        let drops = Self.rows.filter { $0.new == "1.99" }.map(line)
        let france = Self.rows.filter { $0.storefront == 143442 }.map(line)
        for limit in [1, 2, 5, 100] {
            #expect(try Self.page(fixture.path, country: nil, drops: false, limit: limit) == all)
        }
        #expect(try Self.page(fixture.path, country: nil, drops: true, limit: 2) == drops)
        #expect(try Self.page(fixture.path, country: "fr", drops: false, limit: 2) == france)

        do {
            let connection = try SQLiteConnection(path: fixture.path, mode: .readWrite)
            try connection.execute(StoreDatabase.bookkeepingSchema)
            try PriceHistoryLayout.prepare(connection)
            #expect(try connection.scalar("SELECT count(*) FROM epf_price_changes") == .integer(8), "item by export")
        }
        for limit in [1, 2, 5, 100] {
            #expect(try Self.page(fixture.path, country: nil, drops: false, limit: limit) == all, "limit \(limit)")
        }
        #expect(try Self.page(fixture.path, country: nil, drops: true, limit: 2) == drops)
        #expect(try Self.page(fixture.path, country: "fr", drops: false, limit: 2) == france)
        let engine = try QueryEngine(databasePath: fixture.path)
        #expect(try engine.changes.priceHistory(id: 12, country: "us").map(\.newPrice)
                == Self.rows.filter { $0.id == 12 && $0.storefront == 143441 }.map(\.new))
    }
}
