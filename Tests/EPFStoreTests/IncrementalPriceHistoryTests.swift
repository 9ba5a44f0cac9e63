import EPFImport
import EPFSchema
import EPFSQLite
import EPFTestSupport
import Foundation
import Testing
@testable import EPFStore

/// The history an incremental records, case by case: a key's first change goes straight to the history, later
/// changes of the same key in the same file settle it (a key written twice, as Apple's files do).
@Suite struct IncrementalPriceHistoryTests {
    /// Writes `pricing<date>/application_price` with rows `[application_id, retail_price, currency_code,
    /// storefront_id]`; returns the feed directory.
    static func write(_ root: String, date: String, mode: String, rows: [[String]]) throws -> String {
        let feed = (root as NSString).appendingPathComponent("pricing\(date)")
        let milliseconds = "\(Int64(ISO8601DateFormatter().date(from: "\(date.prefix(4))-\(date.dropFirst(4).prefix(2))-\(date.suffix(2))T00:00:00Z")!.timeIntervalSince1970) * 1000)"
        var text = "#export_date\u{01}application_id\u{01}retail_price\u{01}currency_code\u{01}storefront_id\u{02}\n"
        text += "#primaryKey:application_id\u{01}storefront_id\u{02}\n"
        text += "#dbTypes:BIGINT\u{01}INTEGER\u{01}DECIMAL(9,3)\u{01}VARCHAR(20)\u{01}INTEGER\u{02}\n"
        text += "#exportMode:\(mode)\u{02}\n"
        for row in rows { text += ([milliseconds] + row).joined(separator: "\u{01}") + "\u{02}\n" }
        text += "#recordsWritten:\(rows.count)\u{02}\n"
        try FileManager.default.createDirectory(atPath: feed, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: (feed as NSString).appendingPathComponent("application_price")))
        return feed
    }

    static func history(_ database: String) throws -> [String] {
        guard try SQLiteConnection(path: database, mode: .readOnly).tableExists("epf_price_history") else { return [] }
        return try dump(database, "SELECT id, storefront_id, change, coalesce(old_price, '-'), coalesce(new_price, '-'), "
                 + "coalesce(currency, '-') FROM epf_price_history")
    }

    /// What `epf status` reports as the number of changes.
    static func reportedChanges(_ database: String) throws -> Int64 {
        try StoreStatus.read(try SQLiteConnection(path: database, mode: .readOnly), databasePath: database).priceChanges
    }

    @Test func aKeyWrittenAgainInOneIncrementalIsOneChangeFromItsFirstValuesToItsLast() throws {
        let scratch = try Scratch()
        let database = scratch.file("epf.sqlite")
        let baseline = (1...9).map { ["\($0)", "1.99", "USD", "143441"] }
            + [["12", "1.99", "", "143441"], ["13", "", "", "143441"]]
        let full = try Self.write(scratch.path, date: "20260105", mode: "FULL", rows: baseline)
        #expect(try importPaths([full], database: database) {
            $0.historyRequest = HistoryRequest(prices: true, ranks: false)
        }.succeeded)
        #expect(try Self.history(database).isEmpty, "the first load is the baseline")

        let rows = [
            ["1", "2.99", "USD", "143441"], ["1", "1.990", "USD", "143441"],   // back to its price: no change
            ["2", "2.99", "USD", "143441"], ["2", "3.99", "USD", "143441"],    // one change, 1.99 -> 3.99
            ["3", "1.990", "USD", "143441"], ["3", "2.99", "USD", "143441"],   // equal as a number, then a change
            ["4", "1.99", "EUR", "143441"],                                   // only the currency changes
            ["11", "0.99", "USD", "143441"], ["11", "1.49", "USD", "143441"],  // appears, then changes again
            ["6", "2.99", "USD", "143441"],                                   // a plain change
            ["7", "1.99", "USD", "143441"],                                   // unchanged
            ["8", "2.99", "USD", "143441"], ["8", "1.99", "EUR", "143441"],    // back to its price, other currency
            ["9", "1.990", "USD", "143441"],                                  // equal as a number: no change
            ["10", "4.99", "USD", "143441"], ["10", "4.99", "USD", "143441"],  // appears, written twice
            ["12", "1.99", "USD", "143441"],                                  // an empty currency gets one
            ["13", "", "", "143441"],                                         // empty stays empty
        ]
        let daily = try Self.write(scratch.path, date: "20260106", mode: "INCREMENTAL", rows: rows)
        #expect(try importPaths([daily], database: database).succeeded)
        let expected = [
            "10|143441|appeared|-|4.99|USD", "11|143441|appeared|-|1.49|USD", "12|143441|changed|1.99|1.99|USD",
            "2|143441|changed|1.99|3.99|USD", "3|143441|changed|1.99|2.99|USD", "4|143441|changed|1.99|1.99|EUR",
            "6|143441|changed|1.99|2.99|USD", "8|143441|changed|1.99|1.99|EUR",
        ]
        let recorded = try Self.history(database)
        #expect(recorded == expected, "recorded: \(recorded)")
        #expect(try Self.reportedChanges(database) == Int64(expected.count), "a removed row is not counted")

        // Applied again, the file changes nothing and records nothing more.
        #expect(try importPaths([daily], database: database) { $0.force = true }.succeeded)
        #expect(try Self.history(database) == expected)
        #expect(try Self.reportedChanges(database) == Int64(expected.count))
    }

    /// The two layouts of the history before it was packed: a rowid table with a date index, and a table
    /// clustered by (export_date, seq), both with a row per change.
    static let earlierLayouts = [
        PriceHistory.schema(qualifiedTable: PriceHistory.table, serial: "INTEGER PRIMARY KEY"),
        """
        CREATE TABLE epf_price_history (seq INTEGER NOT NULL, export_date BIGINT NOT NULL, kind TEXT NOT NULL,
            id BIGINT NOT NULL, storefront_id BIGINT NOT NULL, change TEXT NOT NULL, old_price TEXT, new_price TEXT,
            currency TEXT, PRIMARY KEY (export_date, seq)) WITHOUT ROWID;
        CREATE UNIQUE INDEX epf_price_history_item ON epf_price_history (id, kind, storefront_id, export_date);
        """,
    ]

    /// A history of an earlier layout (a row per change) is moved into the packed table by the next load that
    /// records history: its changes come first, in their order, and are counted.
    @Test(arguments: earlierLayouts)
    func aHistoryOfAnEarlierLayoutIsMovedAndGoesOn(_ layout: String) throws {
        let scratch = try Scratch()
        let database = scratch.file("epf.sqlite")
        let full = try Self.write(scratch.path, date: "20260105", mode: "FULL",
                                  rows: (1...4).map { ["\($0)", "1.99", "USD", "143441"] })
        #expect(try importPaths([full], database: database) {
            $0.historyRequest = HistoryRequest(prices: true, ranks: false)
        }.succeeded)
        do {
            let connection = try SQLiteConnection(path: database, mode: .readWrite)
            try connection.execute("DROP VIEW IF EXISTS epf_price_history; DROP TABLE IF EXISTS epf_price_changes;")
            try connection.execute(layout)
            try connection.execute("""
                INSERT INTO epf_price_history (seq, export_date, kind, id, storefront_id, change, old_price,
                    new_price, currency) VALUES (1, 1, 'app', 1, 143441, 'changed', '0.99', '1.99', 'USD'),
                    (2, 1, 'app', 1, 143442, 'changed', '0.99', '1.99', 'USD'),
                    (3, 1, 'app', 4, 143441, 'appeared', NULL, '1.99', 'USD');
                DELETE FROM epf_settings WHERE name LIKE 'price_history%';
                """)
        }
        #expect(try Self.reportedChanges(database) == 3, "a table not yet moved is counted")
        let daily = try Self.write(scratch.path, date: "20260106", mode: "INCREMENTAL",
                                   rows: [["2", "2.99", "USD", "143441"], ["3", "1.99", "EUR", "143441"],
                                          ["2", "3.99", "USD", "143441"]])
        #expect(try importPaths([daily], database: database).succeeded)
        // `dump` sorts its lines: each starts with its place in (export_date, seq) order.
        let recorded = try dump(database, "SELECT row_number() OVER (ORDER BY export_date, seq), id, storefront_id, "
                                + "coalesce(old_price, '-'), new_price, currency FROM epf_price_history")
        #expect(recorded == ["1|1|143441|0.99|1.99|USD", "2|1|143442|0.99|1.99|USD", "3|4|143441|-|1.99|USD",
                             "4|2|143441|1.99|3.99|USD", "5|3|143441|1.99|1.99|EUR"])
        #expect(try Self.reportedChanges(database) == 5)
        #expect(try dump(database, "SELECT type FROM sqlite_schema WHERE name = 'epf_price_history'") == ["view"])
        #expect(try dump(database, "SELECT count(*) FROM epf_price_changes WHERE export_date = 1") == ["2"],
                "item 1's two changes are one row")
    }

    /// An item changed in several storefronts is one row; its entries written again in the same file are settled
    /// one by one: one taken back (removed), one changed again (its new price), one left alone.
    @Test func anItemsEntriesAreSettledOneByOne() throws {
        let scratch = try Scratch()
        let database = scratch.file("epf.sqlite")
        let storefronts = ["143441", "143442", "143443", "143444"]
        let full = try Self.write(scratch.path, date: "20260105", mode: "FULL",
                                  rows: storefronts.flatMap { [["1", "1.99", "USD", $0], ["2", "1.99", "USD", $0]] })
        #expect(try importPaths([full], database: database) {
            $0.historyRequest = HistoryRequest(prices: true, ranks: false)
        }.succeeded)
        let rows = storefronts.map { ["1", "2.99", "USD", $0] } + [["2", "0.99", "USD", "143441"]]
            + [["1", "1.99", "USD", "143442"], ["1", "4.99", "USD", "143443"]]
        let daily = try Self.write(scratch.path, date: "20260106", mode: "INCREMENTAL", rows: rows)
        #expect(try importPaths([daily], database: database).succeeded)
        let expected = ["1|143441|changed|1.99|2.99|USD", "1|143443|changed|1.99|4.99|USD",
                        "1|143444|changed|1.99|2.99|USD", "2|143441|changed|1.99|0.99|USD"]
        #expect(try Self.history(database).sorted() == expected)
        #expect(try Self.reportedChanges(database) == 4)
        #expect(try dump(database, "SELECT count(*) FROM epf_price_changes") == ["2"])
        #expect(try importPaths([daily], database: database) { $0.force = true }.succeeded)
        #expect(try Self.history(database).sorted() == expected, "applied again, nothing more")
    }

    /// Entries are JSON built byte by byte: texts with quotes, backslashes, control characters and non-ASCII come
    /// back from the view as they went in, NULL stays NULL and empty stays empty; a row is never written twice
    /// for a storefront already recorded in its export.
    @Test func packedEntriesGiveBackTheirTextsExactly() throws {
        let scratch = try Scratch()
        let connection = try SQLiteConnection(path: scratch.file("h.sqlite"), mode: .readWriteCreate)
        try connection.execute(StoreDatabase.bookkeepingSchema)
        try PriceHistoryLayout.prepare(connection)
        let texts: [String?] = ["1\"9", "a\\b\\", "\u{1}\u{1F}\t\n", "€ 1,99", "", nil, "\u{7F}x\"", "1e1"]
        let writer = try PackedHistoryWriter(connection, date: 7, kind: "app", sequence: .init(last: 0, rows: 0))
        for (index, text) in texts.enumerated() {
            try writer.add(item: 5, storefront: Int64(-1 - index), change: "changed")
            for value in [text, texts[(index + 1) % texts.count], text] {
                if let value {
                    Array(value.utf8).withUnsafeBytes { writer.appendText($0) }
                } else {
                    writer.appendText(nil)
                }
            }
        }
        try writer.add(item: 9, storefront: Int64.max, change: "appeared")
        (0..<3).forEach { _ in writer.appendText(nil) }
        try writer.add(item: 5, storefront: -2, change: "changed")   // item 5 again: -2 is recorded, -100 is not
        (0..<3).forEach { _ in writer.appendText(nil) }
        try writer.add(item: 5, storefront: -100, change: "changed")
        (0..<3).forEach { _ in writer.appendText(nil) }
        try writer.finish()
        #expect(writer.sequence.rows == Int64(texts.count + 2))
        let rows = try connection.query("""
            SELECT id, storefront_id, old_price, new_price, currency FROM epf_price_history ORDER BY seq
            """)
        #expect(rows.count == texts.count + 2)
        for (index, text) in texts.enumerated() {
            let expected: [SQLValue] = [.integer(5), .integer(Int64(-1 - index)), text.map { .text($0) } ?? .null,
                                        texts[(index + 1) % texts.count].map { .text($0) } ?? .null,
                                        text.map { .text($0) } ?? .null]
            #expect(rows[index] == expected)
        }
        #expect(rows[texts.count] == [.integer(9), .integer(Int64.max), .null, .null, .null])
        #expect(rows[texts.count + 1][1] == .integer(-100))
    }

    /// `DecimalText.certainlyDiffer` sends a note straight to the history only for plain decimals that differ;
    /// everything else is left to SQLite's comparison.
    @Test(arguments: [
        ("1.99", "2.99", true), ("0.99", "0.990", false), ("1", "1.000", false), ("-0", "0.0", false),
        ("007.5", "7.50", false), ("-1.5", "1.5", true), ("1.99", "1.9", true), ("", "0", false),
        ("1e2", "100", false), (" 1", "2", false), ("1.", "2", true), (".5", "0.5", false),
        ("1234567890123", "1234567890124", false), ("123456789012", "123456789013", true), ("1,99", "2", false),
    ])
    func plainDecimalsDifferOnlyWhenTheirValuesDo(_ left: String, _ right: String, _ differ: Bool) {
        let result = Array(left.utf8).withUnsafeBytes { leftBytes in
            Array(right.utf8).withUnsafeBytes { DecimalText.certainlyDiffer(leftBytes, $0) }
        }
        #expect(result == differ)
        #expect(Array(right.utf8).withUnsafeBytes { DecimalText.certainlyDiffer(nil, $0) } == false)
    }

    /// The exact keys of Apple's storefronts: never a key claimed seen that was not, in any order of items and
    /// storefronts, an item seen again after others included; other storefronts go to the filter.
    @Test func notedKeysAreExactForApplesStorefronts() {
        let keys = NotedKeys()
        var random = SystemRandomNumberGenerator()
        var inserted = Set<[Int64]>()
        for _ in 0..<60_000 {
            let item = Int64.random(in: 1...2_000, using: &random)
            let storefront = Int64.random(in: 143_441...143_696, using: &random)
            let seen = keys.insert(item: item, storefront: storefront)
            #expect(seen == !inserted.insert([item, storefront]).inserted, "\(item) \(storefront)")
        }
        #expect(keys.itemCount == Set(inserted.map { $0[0] }).count)
        #expect(!keys.insert(item: 5, storefront: 143_440), "below the maps: the filter")
        #expect(keys.insert(item: 5, storefront: 143_440))
        #expect(!keys.insert(item: 5, storefront: 143_697), "above the maps: the filter")
        #expect(keys.insert(item: 5, storefront: 143_697))
    }

    /// Past its largest number of items, new items' keys go to the filter: still never forgotten.
    @Test func notedKeysStopGivingMapsAtTheirLargestItemCount() {
        let keys = NotedKeys(largestItemCount: 100)
        for item in Int64(0)..<1_000 {
            for storefront in Int64(143_441)..<143_444 { #expect(!keys.insert(item: item, storefront: storefront)) }
        }
        #expect(keys.itemCount == 100)
        var forgotten = 0
        for item in Int64(0)..<1_000 {
            for storefront in Int64(143_441)..<143_444 where !keys.insert(item: item, storefront: storefront) {
                forgotten += 1
            }
        }
        #expect(forgotten == 0)
    }

    /// The key filter never forgets a key, across its growing levels, and rarely claims one it has not seen.
    @Test func seenKeysRemembersEveryKeyAndRarelyImaginesOne() {
        let keys = SeenKeys()
        var imagined = 0
        let count = 700_000  // past the first three levels (65,536 + 262,144 + 1,048,576 would be the fourth)
        for item in 0..<count where keys.insert(item: Int64(300_000_000 + item / 7), storefront: Int64(143_441 + item % 7)) {
            imagined += 1
        }
        #expect(Double(imagined) / Double(count) < 0.02, "\(imagined) of \(count) new keys called seen")
        var forgotten = 0
        for item in 0..<count where !keys.insert(item: Int64(300_000_000 + item / 7), storefront: Int64(143_441 + item % 7)) {
            forgotten += 1
        }
        #expect(forgotten == 0)
    }

    /// Past its largest level the filter stops growing: every key is still remembered, more are imagined.
    @Test func seenKeysStopsGrowingAtItsLargestLevel() {
        let keys = SeenKeys(largestCapacity: 1 << 18)
        let count = 1_000_000
        for item in 0..<count { _ = keys.insert(item: Int64(item), storefront: 143_441) }
        #expect(keys.levelCount == 2, "65,536 then 262,144 keys: no third level")
        var forgotten = 0
        for item in 0..<count where !keys.insert(item: Int64(item), storefront: 143_441) { forgotten += 1 }
        #expect(forgotten == 0)
    }
}
