import EPFSQLite
import EPFTestSupport
import Testing

/// Prices stored as REAL come back as the decimal the feed wrote, without trailing zeros, noise or exponent.
@Suite struct DecimalNumberTests {
    @Test(arguments: [
        (0.99, "0.99"), (1_225_000, "1225000"), (-1.5, "-1.5"), (0, "0"), (-0.0, "0"), (0.001, "0.001"),
        (1e-7, "0.0000001"), (1e16, "10000000000000000"), (1_234_567.99, "1234567.99"), (1e300, "1e+300"),
        (0.1 + 0.2, "0.30000000000000004"),
    ])
    func plainDecimals(_ value: Double, _ text: String) {
        #expect(DecimalNumber.text(value) == text)
    }

    /// `withText` (no allocation for at most three decimals) writes what `text` writes, for any value.
    @Test func withTextWritesWhatTextWrites() {
        var random = SeededGenerator(seed: 9)
        var values: [Double] = [0, -0.0, 0.5, 0.0005, -1.5, 1e15, 999_999_999_999.999, 1e-7, .nan, 0.1 + 0.2]
        for _ in 0..<20_000 {
            let digits = Double(random.next() % 10_000_000_000)
            let scale = [1.0, 10, 100, 1000, 10_000, 1e6, 1e-3][random.below(7)]
            values.append((random.below(2) == 0 ? 1 : -1) * digits / scale)
        }
        for value in values {
            #expect(DecimalNumber.withText(value) { String(decoding: $0, as: UTF8.self) } == DecimalNumber.text(value),
                    "\(value)")
        }
    }

    /// Every DECIMAL(9,3) value, as SQLite's REAL affinity stores it, is written back as itself: random ones
    /// through SQLite (its own text-to-double conversion, as the importer's bound text gets), across the range.
    @Test func everyPriceComesBackAsWritten() throws {
        let connection = try SQLiteConnection(path: ":memory:", mode: .readWriteCreate)
        try connection.execute("CREATE TABLE t (price REAL)")
        let insert = try connection.prepare("INSERT INTO t VALUES (?1)")
        let select = try connection.prepare("SELECT price FROM t")
        var random = SeededGenerator(seed: 32)
        for _ in 0..<20_000 {
            let thousandths = Int(random.next() % 1_000_000_000)
            let fraction = String(thousandths % 1000)
            let written = "\(thousandths / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
            try insert.bind([.text(written)])
            _ = try insert.step()
            insert.reset()
            _ = try select.step()
            var expected = written
            while expected.hasSuffix("0") { expected.removeLast() }
            if expected.hasSuffix(".") { expected.removeLast() }
            #expect(select.decimalText(at: 0) == expected, "\(written)")
            select.reset()
            try connection.execute("DELETE FROM t")
        }
    }
}
