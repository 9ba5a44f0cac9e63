import EPFSQLite
import EPFTestSupport
import Foundation
import Testing

/// End to end: prices are stored as numbers, so `epf sql` (and any SQLite client) answers `max`, `> 0` and `= 0`
/// as numbers, on a new database and on one from before (prices as TEXT) converted by the next import; epf still
/// prints them as plain decimals.
@Suite struct NumericPricesCLITests {
    /// A price file: header, then `rows` (application_id, retail_price, currency_code, storefront_id).
    static func priceFile(_ rows: [[String]], mode: String = "FULL", exportDate: String = "1767571200000")
        -> [UInt8] {
        let field = "\u{01}", end = "\u{02}\n"
        var text = "#export_date\(field)application_id\(field)retail_price\(field)currency_code\(field)storefront_id"
            + end + "#primaryKey:application_id\(field)storefront_id" + end
            + "#dbTypes:BIGINT\(field)INTEGER\(field)DECIMAL(9,3)\(field)VARCHAR(20)\(field)INTEGER" + end
            + "#exportMode:\(mode)" + end
        for row in rows { text += ([exportDate] + row).joined(separator: field) + end }
        text += "#recordsWritten:\(rows.count)" + end
        return Array(text.utf8)
    }

    /// Apple's texts: zeros in several spellings, a price whose text sorts last (`99.990`) and one whose number is
    /// largest (`1225000.000` dong).
    static let rows = [
        ["1", "0.000", "USD", "143441"], ["1", "99.990", "USD", "143444"], ["2", "0", "USD", "143441"],
        ["2", "1225000.000", "VND", "143471"], ["3", "0.990", "USD", "143441"], ["3", "120.000", "JPY", "143462"],
        ["4", "00.00", "EUR", "143443"],
    ]

    /// The three traps in one query: the largest price, how many are above zero, how many are zero.
    static let traps = "SELECT max(retail_price), (SELECT count(*) FROM application_price WHERE retail_price > 0), "
        + "(SELECT count(*) FROM application_price WHERE retail_price = 0), "
        + "(SELECT group_concat(DISTINCT typeof(retail_price)) FROM application_price) FROM application_price"

    static func sql(_ query: String, _ database: String, in work: WorkDirectory) throws -> String {
        let run = try runEPF(["sql", query, "--csv", "--db", database], in: work.path)
        #expect(run.status == 0, "\(run.stderr)")
        return run.stdout.split(separator: "\r\n").dropFirst().joined(separator: "\n")
    }

    @Test func pricesCompareAsNumbersOnANewDatabase() throws {
        let work = try WorkDirectory()
        try work.write("feed/pricing20260105/application_price", Self.priceFile(Self.rows + [
            // 16 significant digits: more than a REAL holds exactly, so a bad value (stored NULL, row kept).
            ["5", "1234567890.123456", "USD", "143441"],
        ]))
        let database = work.file("epf.sqlite")
        let imported = try runEPF(["import", work.file("feed/pricing20260105"), "--db", database, "--quiet"],
                                  in: work.path)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stderr.contains("1 repaired"), "\(imported.stderr)")
        #expect(try Self.sql(Self.traps, database, in: work) == "1225000,4,3,\"real,null\"")
        // epf writes the prices back as plain decimals, and as SQLite compares them.
        #expect(try Self.sql("SELECT retail_price FROM application_price WHERE application_id IN (1, 3) "
                             + "ORDER BY retail_price", database, in: work) == "0\n0.99\n99.99\n120")
        #expect(try Self.sql("SELECT count(*) FROM application_price WHERE retail_price = 0.99", database,
                             in: work) == "1")
        let prices = try runEPF(["prices", "3", "--json", "--db", database], in: work.path)
        #expect(prices.stdout.contains("\"price\":0.99") && prices.stdout.contains("\"price\":120"),
                "\(prices.stdout)")
        let rejects = try String(contentsOfFile: database + ".rejects/pricing20260105-application_price.rejects",
                                 encoding: .utf8)
        #expect(rejects.contains("bad-decimal") && rejects.contains("1234567890.123456"), "\(rejects)")
    }

    @Test func aDatabaseWithTextPricesIsConvertedByTheNextImport() throws {
        let work = try WorkDirectory()
        try work.write("feed/pricing20260105/application_price", Self.priceFile(Self.rows))
        let database = work.file("epf.sqlite")
        let first = try runEPF(["import", work.file("feed/pricing20260105"), "--db", database, "--quiet",
                                "--history", "prices"], in: work.path)
        #expect(first.status == 0, "\(first.stderr)")
        // Made as epf made it before prices were numbers: the column TEXT, the feed's texts as they were.
        try Self.makeTextPrices(database, rows: Self.rows)
        // The traps: text order (`99.990` > `1225000.000`), and 0 compared as the text '0' (only `0` equals it).
        #expect(try Self.sql(Self.traps, database, in: work) == "99.990,6,1,text")

        // The next import (an incremental changing one price) converts the table, then applies the file.
        try work.write("feed/pricing20260106/application_price", Self.priceFile([
            ["3", "1.990", "USD", "143441"], ["1", "0.00", "USD", "143441"],
        ], mode: "INCREMENTAL", exportDate: "1767657600000"))
        let next = try runEPF(["import", work.file("feed/pricing20260106"), "--db", database, "--quiet"],
                              in: work.path)
        #expect(next.status == 0, "\(next.stderr)")
        #expect(try Self.sql(Self.traps, database, in: work) == "1225000,4,3,real")
        #expect(try Self.sql("SELECT count(*) FROM sqlite_schema WHERE sql LIKE '%\"retail_price\" REAL%'",
                             database, in: work) == "1")
        // The rows, their key index and the history: only the real change (0.990 -> 1.990) is recorded, not the
        // same zero spelled another way.
        #expect(try Self.sql("SELECT count(*), group_concat(name LIKE '%__pk__%') FROM sqlite_schema "
                             + "WHERE type = 'index' AND tbl_name = 'application_price'", database, in: work) == "1,1")
        #expect(try Self.sql("SELECT count(*) FROM application_price", database, in: work) == "7")
        let changes = try runEPF(["changes", "--since", "2026-01-01", "--kind", "price", "--csv", "--db", database],
                                 in: work.path)
        #expect(changes.status == 0, "\(changes.stderr)")
        let lines = changes.stdout.split(separator: "\r\n").dropFirst()
        #expect(lines.count == 1 && lines.first?.hasSuffix(",0.99,1.99") == true, "\(changes.stdout)")
    }

    /// Rebuilds `application_price` as epf made it before prices were numbers: `retail_price TEXT` holding the
    /// feed's texts, with the same key index.
    static func makeTextPrices(_ database: String, rows: [[String]]) throws {
        let connection = try SQLiteConnection(path: database, mode: .readWrite)
        let index = try connection.scalar(
            "SELECT sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'application_price'")
        guard case .text(let indexSQL) = index else { throw Failure(text: "no key index") }
        try connection.execute("""
            DROP TABLE application_price;
            CREATE TABLE application_price ("export_date" INTEGER, "application_id" INTEGER, "retail_price" TEXT,
                "currency_code" TEXT, "storefront_id" INTEGER);
            """)
        let insert = try connection.prepare("INSERT INTO application_price VALUES (1767571200000, ?1, ?2, ?3, ?4)")
        for row in rows {
            try insert.bind([.integer(Int64(row[0]) ?? 0), .text(row[1]), .text(row[2]),
                             .integer(Int64(row[3]) ?? 0)])
            _ = try insert.step()
            insert.reset()
        }
        try connection.execute(indexSQL)
    }

    struct Failure: Error { let text: String }
}
