@testable import EPFStore
import EPFSQLite
import EPFTestSupport
import Foundation
import Testing

/// `PriceTableMerge`, the comparison behind a full's price history on SQLite: on random old and new tables, in
/// every row layout a feed may have, it finds exactly the changes a dictionary comparison finds; it reads rowid
/// order when items are grouped (whatever the storefront order inside an item) and asks for the key-index order
/// otherwise.
@Suite struct PriceTableMergeTests {
    /// How a table's rows are laid out in rowid order.
    enum Layout: CaseIterable {
        case keyOrder, storefrontsShuffled, itemsShuffled, itemsSplit
    }

    struct Price: Equatable {
        let text: String?
        let currency: String?
    }

    struct Key: Hashable, Comparable {
        let item: Int64
        let storefront: Int64
        static func < (left: Key, right: Key) -> Bool { (left.item, left.storefront) < (right.item, right.storefront) }
    }

    struct Found: Equatable, CustomStringConvertible {
        let key: Key
        let change: String
        let old: String?
        let new: String?
        let currency: String?
        var description: String { "\(key.item)/\(key.storefront) \(change) \(old ?? "∅")->\(new ?? "∅") \(currency ?? "∅")" }
    }

    static let texts = ["0.99", "0.990", "1.99", "2", "2.00", "0", "free", "", "1e1", "10", "-0.0", nil]
    static let currencies = ["USD", "EUR", "JPY", nil]
    static let storefronts: [Int64] = [143_441, 143_442, 143_500, 143_624, 143_696, 143_441, 143_462, 143_465,
                                       1, 143_440, 143_697]

    func randomTable(_ random: inout SystemRandomNumberGenerator, like base: [Key: Price]?) -> [Key: Price] {
        var table: [Key: Price] = [:]
        if let base {
            for (key, price) in base {
                switch Int.random(in: 0..<10, using: &random) {
                case 0: continue // disappears
                case 1, 2:
                    table[key] = Price(text: Self.texts.randomElement(using: &random) ?? nil,
                                       currency: Self.currencies.randomElement(using: &random) ?? nil)
                default: table[key] = price
                }
            }
        }
        for _ in 0..<Int.random(in: 0...40, using: &random) {
            // Apple's storefronts (placed by offset when an item has only those) and others (sorted by comparison).
            let storefront = Self.storefronts.randomElement(using: &random) ?? 1
            let key = Key(item: Int64.random(in: 1...12, using: &random), storefront: storefront)
            table[key] = Price(text: Self.texts.randomElement(using: &random) ?? nil,
                               currency: Self.currencies.randomElement(using: &random) ?? nil)
        }
        return table
    }

    func rows(_ table: [Key: Price], _ layout: Layout, _ random: inout SystemRandomNumberGenerator) -> [(Key, Price)] {
        let sorted = table.sorted { $0.key < $1.key }
        switch layout {
        case .keyOrder:
            return sorted
        case .storefrontsShuffled:
            let items = Dictionary(grouping: sorted, by: { $0.key.item })
            return items.keys.sorted().flatMap { (items[$0] ?? []).shuffled(using: &random) }
        case .itemsShuffled:
            let items = Dictionary(grouping: sorted, by: { $0.key.item })
            return items.keys.shuffled(using: &random).flatMap { items[$0] ?? [] }
        case .itemsSplit:
            // One item's rows in two runs, the rest in order.
            guard sorted.count > 2 else { return sorted }
            var rows = sorted
            let moved = rows.remove(at: 0)
            rows.insert(moved, at: rows.count / 2)
            return rows
        }
    }

    func write(_ rows: [(Key, Price)], as name: String, to connection: SQLiteConnection) throws {
        try connection.execute("CREATE TABLE \(name) (export_date INTEGER, application_id INTEGER, "
                               + "retail_price TEXT, currency_code TEXT, storefront_id INTEGER)")
        let insert = try connection.prepare("INSERT INTO \(name) VALUES (1, ?1, ?2, ?3, ?4)")
        try connection.execute("BEGIN")
        defer { _ = try? connection.execute("COMMIT") }
        for (key, price) in rows {
            try insert.bind([.integer(key.item), price.text.map { .text($0) } ?? .null,
                             price.currency.map { .text($0) } ?? .null, .integer(key.storefront)])
            try insert.runOnce()
        }
        // A row without a key is never compared.
        try connection.execute("INSERT INTO \(name) VALUES (1, NULL, '9.99', 'USD', 3)")
        try connection.execute("CREATE UNIQUE INDEX \(name)_key ON \(name) (application_id, storefront_id)")
    }

    func expected(_ old: [Key: Price], _ new: [Key: Price]) -> [Found] {
        func number(_ text: String?) -> Double? { text.map { Double($0) ?? 0 } }
        return Set(old.keys).union(new.keys).sorted().compactMap { key in
            switch (old[key], new[key]) {
            case (let was?, nil): return Found(key: key, change: "disappeared", old: was.text, new: nil, currency: was.currency)
            case (nil, let now?): return Found(key: key, change: "appeared", old: nil, new: now.text, currency: now.currency)
            case (let was?, let now?):
                guard number(was.text) != number(now.text) || was.currency != now.currency else { return nil }
                return Found(key: key, change: "changed", old: was.text, new: now.text, currency: now.currency)
            default: return nil
            }
        }
    }

    func merged(_ connection: SQLiteConnection, ordered: Bool) throws -> [Found] {
        func reader(_ table: String) throws -> PriceTableReader {
            PriceTableReader(try connection.prepare(PriceTableReader.query(table: table, key: "application_id",
                                                                           ordered: ordered)))
        }
        var merge = PriceTableMerge(old: try reader("old"), new: try reader("new"))
        final class Capture: PriceTextSink {
            var texts: [String?] = []
            func appendText(_ text: UnsafeRawBufferPointer?) {
                texts.append(text.map { String(decoding: $0, as: UTF8.self) })
            }
        }
        var found: [Found] = []
        try merge.run { change in
            let capture = Capture()
            change.appendTexts(to: capture)
            found.append(Found(key: Key(item: change.item, storefront: change.storefront),
                               change: "\(change.change.word)", old: capture.texts[0], new: capture.texts[1],
                               currency: capture.texts[2]))
        }
        return found
    }

    @Test(arguments: Layout.allCases)
    func findsExactlyTheChangesInEveryLayout(_ layout: Layout) throws {
        var random = SystemRandomNumberGenerator()
        for _ in 0..<60 {
            let old = randomTable(&random, like: nil)
            let new = randomTable(&random, like: old)
            let connection = try SQLiteConnection(path: ":memory:", mode: .readWriteCreate)
            try write(rows(old, layout, &random), as: "old", to: connection)
            try write(rows(new, layout, &random), as: "new", to: connection)
            let want = expected(old, new)
            do {
                let got = try merged(connection, ordered: false)
                #expect(got == want, "\(layout): \(old) -> \(new)")
            } catch is PriceTableOutOfOrder {
                #expect(layout == .itemsShuffled || layout == .itemsSplit, "\(layout) needs no index")
                #expect(try merged(connection, ordered: true) == want, "\(layout): \(old) -> \(new)")
            }
        }
    }

    /// Twelve random old and new tables, written in `layout` to a WAL database each and committed; `body` runs
    /// while the connection holds a write transaction (as a load does), rolled back after it.
    func inWALDatabases(_ layout: Layout, in scratch: TemporaryDirectory,
                        _ body: (String, SQLiteConnection, [Key: Price], [Key: Price]) throws -> Void) throws {
        var random = SystemRandomNumberGenerator()
        for round in 0..<12 {
            let path = scratch.file("db\(round).sqlite")
            let connection = try SQLiteConnection(path: path, mode: .readWriteCreate)
            try connection.execute("PRAGMA journal_mode = WAL")
            let old = randomTable(&random, like: nil)
            let new = randomTable(&random, like: old)
            try write(rows(old, layout, &random), as: "old", to: connection)
            try write(rows(new, layout, &random), as: "new", to: connection)
            try connection.execute("BEGIN; CREATE TABLE written (x); INSERT INTO written VALUES (1)")
            try body(path, connection, old, new)
            try connection.execute("ROLLBACK")
        }
    }

    /// The same merge with the old table read by `PriceTablePrefetch` (its own connection and thread) while this
    /// connection holds a write transaction, as in the swap: the same changes; a table that is not grouped by item
    /// reports `PriceTableOutOfOrder` after the items before it; stopping early ends the thread.
    @Test(arguments: [Layout.storefrontsShuffled, .itemsShuffled])
    func prefetchedOldTableGivesTheSameChanges(_ layout: Layout) throws {
        try inWALDatabases(layout, in: try TemporaryDirectory()) { path, connection, old, new in
            let prefetch = PriceTablePrefetch(path: path, sql: PriceTableReader.query(table: "old", key: "application_id",
                                                                                      ordered: false))
            defer { prefetch.stop() }
            let newTable = PriceTableReader.query(table: "new", key: "application_id", ordered: false)
            var merge = PriceTableMerge(old: prefetch, new: PriceTableReader(try connection.prepare(newTable)))
            var found: [Key] = []
            do {
                try merge.run { found.append(Key(item: $0.item, storefront: $0.storefront)) }
                #expect(found == expected(old, new).map(\.key), "\(layout): \(old) -> \(new)")
            } catch is PriceTableOutOfOrder {
                #expect(layout == .itemsShuffled)
            }
        }
    }

    /// The merge run while the indexes are built (`BackgroundPriceMerge`): on committed tables in WAL mode, while
    /// this connection holds a write transaction, it keeps the same changes, texts and NULLs included, in order,
    /// whether they stay in memory or go through its scratch file (blocks of 64 bytes here); a table that is not
    /// grouped by item ends it `outOfOrder`; its scratch file has no name left in the directory.
    @Test(arguments: [(Layout.storefrontsShuffled, 64), (.keyOrder, 1 << 20), (.itemsShuffled, 64)])
    func backgroundMergeKeepsTheSameChangesThroughItsScratchFile(_ layout: Layout, blockBytes: Int) throws {
        let scratch = try TemporaryDirectory()
        try inWALDatabases(layout, in: scratch) { path, _, old, new in
            let merge = BackgroundPriceMerge(
                path: path, oldSQL: PriceTableReader.query(table: "old", key: "application_id", ordered: false),
                newSQL: PriceTableReader.query(table: "new", key: "application_id", ordered: false),
                directory: scratch.path, blockBytes: blockBytes)
            switch try merge.result() {
            case .found(let changes):
                var found: [Found] = []
                func text(_ bytes: UnsafeRawBufferPointer?) -> String? {
                    bytes.map { String(decoding: $0, as: UTF8.self) }
                }
                try changes.replay { change in
                    found.append(Found(key: Key(item: change.item, storefront: change.storefront),
                                       change: "\(change.change.word)", old: text(change.oldPrice),
                                       new: text(change.newPrice), currency: text(change.currency)))
                }
                #expect(found == expected(old, new), "\(layout): \(old) -> \(new)")
                #expect(changes.count == found.count)
            case .outOfOrder:
                #expect(layout == .itemsShuffled, "\(layout) is grouped by item")
            }
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: scratch.path)
        #expect(left.allSatisfy { !$0.hasPrefix(".epf-price-changes") }, "\(left)")
    }

    /// Cancelling a background merge that is still reading ends its thread and closes its connections: the
    /// database can then be written and its tables dropped, and `result()` reports the cancellation.
    @Test func cancellingABackgroundMergeEndsIt() throws {
        let scratch = try TemporaryDirectory()
        let path = scratch.file("db.sqlite")
        let connection = try SQLiteConnection(path: path, mode: .readWriteCreate)
        try connection.execute("PRAGMA journal_mode = WAL")
        let old = (1...20_000).map { (Key(item: Int64($0), storefront: 143_441), Price(text: "1", currency: "USD")) }
        let new = (1...20_000).map { (Key(item: Int64($0), storefront: 143_441), Price(text: "2", currency: "USD")) }
        try write(old, as: "old", to: connection)
        try write(new, as: "new", to: connection)
        let merge = BackgroundPriceMerge(
            path: path, oldSQL: PriceTableReader.query(table: "old", key: "application_id", ordered: false),
            newSQL: PriceTableReader.query(table: "new", key: "application_id", ordered: false),
            directory: scratch.path, blockBytes: 256)
        merge.cancel()
        do {
            guard case .found(let changes) = try merge.result() else {
                Issue.record("the tables are grouped by item")
                return
            }
            #expect(changes.count == 20_000, "a merge that ended before the cancel has every change")
        } catch is CancellationError {
            // Stopped before its end: nothing of it is given.
        }
        try connection.execute("DROP TABLE old; DROP TABLE new; PRAGMA wal_checkpoint(TRUNCATE)")
    }

    @Test func stoppingAPrefetchThatIsAheadEndsIt() throws {
        let scratch = try TemporaryDirectory()
        let path = scratch.file("db.sqlite")
        let connection = try SQLiteConnection(path: path, mode: .readWriteCreate)
        try connection.execute("PRAGMA journal_mode = WAL")
        let rows = (1...2_000).map { (Key(item: Int64($0), storefront: 1), Price(text: "1", currency: "USD")) }
        try write(rows, as: "old", to: connection)
        let prefetch = PriceTablePrefetch(path: path, sql: "SELECT application_id, storefront_id, retail_price, "
                                          + "currency_code FROM old")
        var item = PriceItemRows()
        #expect(try prefetch.next(into: &item))
        #expect(item.item == 1)
        Thread.sleep(forTimeInterval: 0.05) // the thread fills its queue and waits
        prefetch.stop()
        #expect(try !prefetch.next(into: &item), "a stopped prefetch has nothing more")
    }
}
