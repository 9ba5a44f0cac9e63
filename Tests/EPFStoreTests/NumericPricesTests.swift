@testable import EPFStore
import EPFSQLite
import EPFTestSupport
import Foundation
import Testing

/// `NumericPrices`: a database from before prices were numbers is converted table by table, each atomically, and a
/// conversion that stopped part-way resumes with the tables it did not finish.
@Suite struct NumericPricesTests {
    /// Two price tables as epf made them before (prices TEXT, the key a unique index), and a table it does not know.
    static func oldDatabase(_ path: String) throws -> SQLiteConnection {
        let connection = try SQLiteConnection(path: path, mode: .readWriteCreate)
        try connection.execute("""
            CREATE TABLE application_price ("export_date" INTEGER, "application_id" INTEGER, "retail_price" TEXT,
                "currency_code" TEXT, "storefront_id" INTEGER);
            CREATE UNIQUE INDEX "application_price__pk__a" ON application_price (application_id, storefront_id);
            INSERT INTO application_price VALUES (1, 1, '0.990', 'USD', 143441), (1, 1, '1225000.000', 'VND', 143471),
                (1, 2, '99.990', 'USD', 143441), (1, 3, NULL, 'USD', 143441);
            CREATE TABLE song_price ("export_date" INTEGER, "song_id" INTEGER, "retail_price" TEXT,
                "currency_code" TEXT, "storefront_id" INTEGER, "availability_date" TEXT, "hq_price" TEXT);
            INSERT INTO song_price VALUES (1, 7, '0.990', 'USD', 143441, '2020-01-01T00:00:00Z', '1.29'),
                (1, 8, '0.99', 'USD', 143441, NULL, '1.290');
            CREATE TABLE mine (retail_price TEXT);
            """)
        return connection
    }

    static func types(_ connection: SQLiteConnection, _ table: String) throws -> [String] {
        try connection.query("SELECT name || ' ' || type FROM pragma_table_info(?1) ORDER BY cid", [.text(table)])
            .compactMap { if case .text(let text) = $0.first { text } else { nil } }
    }

    @Test func aStoppedConversionLeavesEachTableWholeAndResumes() throws {
        let scratch = try TemporaryDirectory(prefix: "epf-numeric-prices")
        let connection = try Self.oldDatabase(scratch.file("old.sqlite"))
        #expect(try NumericPrices.textTables(connection) == [
            .init(table: "application_price", columns: ["retail_price"]),
            .init(table: "song_price", columns: ["retail_price", "hq_price"]),
        ])
        // An index the conversion cannot make again stops it at song_price: 0.990 and 0.99 are one number.
        try connection.execute("CREATE UNIQUE INDEX song_price_unique ON song_price (retail_price)")
        #expect(throws: SQLiteError.self) { try NumericPrices.convert(connection) }
        // application_price, converted first, stays converted; song_price is as it was, rows and index.
        #expect(try Self.types(connection, "application_price").contains("retail_price REAL"))
        #expect(try connection.scalar("SELECT max(retail_price) FROM application_price") == .real(1_225_000))
        #expect(try Self.types(connection, "song_price").contains("retail_price TEXT"))
        #expect(try connection.scalar("SELECT group_concat(retail_price || ' ' || typeof(retail_price), ', ') "
                                      + "FROM (SELECT retail_price FROM song_price ORDER BY rowid)")
                == .text("0.990 text, 0.99 text"))
        #expect(try connection.scalar("SELECT count(*) FROM sqlite_schema WHERE name LIKE '%__epf_numeric'")
                == .integer(0))

        // Without the index, the next run converts what is left, and nothing more.
        try connection.execute("DROP INDEX song_price_unique")
        #expect(try NumericPrices.convert(connection) == ["song_price"])
        #expect(try Self.types(connection, "song_price") == [
            "export_date INTEGER", "song_id INTEGER", "retail_price REAL", "currency_code TEXT",
            "storefront_id INTEGER", "availability_date TEXT", "hq_price REAL",
        ])
        #expect(try connection.scalar("SELECT count(*) FROM song_price WHERE retail_price = 0.99 AND hq_price = 1.29")
                == .integer(2))
        #expect(try NumericPrices.convert(connection).isEmpty)
        // The unknown table keeps its column; the key index is still there and still unique.
        #expect(try Self.types(connection, "mine") == ["retail_price TEXT"])
        #expect(throws: SQLiteError.self) {
            try connection.execute("INSERT INTO application_price VALUES (2, 1, 1, 'USD', 143441)")
        }
        #expect(try connection.scalar("PRAGMA integrity_check") == .text("ok"))
    }
}
