import EPFParquet
import EPFTestSupport
import Foundation
import JSONText
import Testing

/// Random tables written by `ParquetFileWriter` and read back by the readers people use, pyarrow and DuckDB
/// (Tests/clients/parquet_roundtrip.py, in the test venv scripts/prerequisites makes): every value, type and
/// statistic must come back. Seeded, so a failure replays; `EPF_PARQUET_ROUNDS=N` runs N tables (the long mode).
@Suite struct ParquetRoundTripTests {
    static var python: String {
        ProcessInfo.processInfo.environment["EPF_TEST_PYTHON"]
            ?? BuiltEPF.packageRoot.appendingPathComponent(".build/test-venv/bin/python").path
    }

    static var rounds: Int { Int(ProcessInfo.processInfo.environment["EPF_PARQUET_ROUNDS"] ?? "") ?? 12 }

    @Test func randomTablesReadBackExactly() throws {
        let directory = try TemporaryDirectory(prefix: "epf-parquet")
        let seed = UInt64(ProcessInfo.processInfo.environment["EPF_PARQUET_SEED"] ?? "") ?? 20261127
        var random = SeededGenerator(seed: seed)
        var expectedRows = 0
        for round in 0..<Self.rounds {
            expectedRows += try RandomTable(random: &random).write(to: directory.file("t\(100_000 + round)"))
        }
        let (status, output) = try Self.runChecker(directory.path)
        #expect(status == 0, "seed \(seed): \(output)")
        #expect(output.hasPrefix("ok \(Self.rounds) \(expectedRows)"), "\(output)")
    }

    @Test func emptyFileHasItsSchema() throws {
        let directory = try TemporaryDirectory(prefix: "epf-parquet")
        let columns = [ParquetColumn(name: "id", type: .int64), ParquetColumn(name: "name", type: .string)]
        let writer = try ParquetFileWriter(path: directory.file("empty.parquet"), columns: columns)
        try writer.finish()
        try RandomTable.writeExpected(columns: columns, rows: [], to: directory.file("empty"))
        let (status, output) = try Self.runChecker(directory.path)
        #expect(status == 0 && output.hasPrefix("ok 1 0"), "\(output)")
    }

    @Test func abandonedWriterLeavesNoFile() throws {
        let directory = try TemporaryDirectory(prefix: "epf-parquet")
        let path = directory.file("t.parquet")
        let writer = try ParquetFileWriter(path: path, columns: [ParquetColumn(name: "id", type: .int64)])
        try writer.append(Int64(1), column: 0)
        try writer.endRow()
        #expect(FileManager.default.fileExists(atPath: writer.temporaryPath))
        #expect(!FileManager.default.fileExists(atPath: path))
        writer.abandon()
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    static func runChecker(_ directory: String) throws -> (Int32, String) {
        #expect(FileManager.default.isExecutableFile(atPath: python),
                "no \(python): run scripts/prerequisites --test (it installs pyarrow and duckdb)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [BuiltEPF.packageRoot.appendingPathComponent("Tests/clients/parquet_roundtrip.py").path,
                             directory]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let (stdout, stderr) = BuiltEPF.readToEnd(process, output: output, errors: errors)
        return (process.terminationStatus, String(decoding: stdout + stderr, as: UTF8.self))
    }
}

/// One random table: random columns, rows, NULLs, extremes, texts (CJK, emoji, line breaks, long), row groups.
struct RandomTable {
    enum Value { case null, integer(Int64), double(Double), text(String) }

    var columns: [ParquetColumn] = []
    var rows: [[Value]] = []
    var rowGroupRows: Int
    var compression: ParquetCompression

    static let pool = ["USD", "EUR", "JPY", "", "ja", "zh-Hans", "日本語", "😀", "a\nb", "x\r\ny", "ümlaut"]
    static let pieces = ["a", "Z", "0", " ", "\n", "\r\n", "\t", "é", "中", "文", "𝄞", "😀", "👍🏽", "\"", "\\", ",",
                         "\u{1}"]

    init(random: inout SeededGenerator) {
        let columnCount = 1 + random.below(7)
        let types: [ParquetColumnType] = [.int64, .timestampMillis, .decimal(precision: 18, scale: 3), .double,
                                          .string]
        for index in 0..<columnCount {
            let type = types[random.below(types.count)]
            columns.append(ParquetColumn(name: "c\(index)", type: type, dictionary: random.below(4) != 0))
        }
        let rowCount = [0, 1, 7, 100, 2_000, 30_000][random.below(6)]
        rowGroupRows = [1, 3, 1000, 1_000_000][random.below(4)]
        compression = random.below(3) == 0 ? .none : .gzip(level: Int32(1 + random.below(9)))
        if rowGroupRows == 1 && rowCount > 100 { rowGroupRows = 1000 }
        let nullChance = columns.map { _ in [0, 0, 10, 50, 100][random.below(5)] }
        let textStyle = columns.map { _ in random.below(3) }
        for _ in 0..<rowCount {
            var row: [Value] = []
            for (index, column) in columns.enumerated() {
                if random.below(100) < nullChance[index] {
                    row.append(.null)
                    continue
                }
                row.append(Self.value(of: column.type, style: textStyle[index], random: &random))
            }
            rows.append(row)
        }
    }

    static func value(of type: ParquetColumnType, style: Int, random: inout SeededGenerator) -> Value {
        switch type {
        case .int64:
            let extremes: [Int64] = [.min, .max, 0, -1, 1, 364709193, 143441]
            return .integer(random.below(4) == 0 ? extremes[random.below(extremes.count)]
                            : Int64(bitPattern: random.next()) >> Int64(random.below(63)))
        case .timestampMillis:
            // Years 1000 ... 9999, the range of EPF's dates.
            let low: Int64 = -30_610_224_000_000
            let high: Int64 = 253_402_300_799_999
            return .integer(low + Int64(random.next() % UInt64(high - low + 1)))
        case .decimal:
            let limit: Int64 = 999_999_999_999_999_999
            let extremes: [Int64] = [limit, -limit, 0, 990, 1_225_000_000, -1]
            return .integer(random.below(4) == 0 ? extremes[random.below(extremes.count)]
                            : Int64(bitPattern: random.next()) % (limit + 1))
        case .double:
            let special: [Double] = [0, -0.0, .infinity, -.infinity, .nan, .leastNonzeroMagnitude,
                                     .greatestFiniteMagnitude, 0.1]
            return .double(random.below(5) == 0 ? special[random.below(special.count)]
                           : Double(bitPattern: random.next()))
        case .string:
            switch style {
            case 0: return .text(pool[random.below(pool.count)])
            case 1:
                let length = random.below(random.below(10) == 0 ? 3000 : 40)
                return .text(String((0..<length).map { _ in pieces[random.below(pieces.count)] }.joined()))
            default: return .text("item \(random.below(50))")
            }
        }
    }

    /// Writes NAME.parquet and NAME.expected.json; returns the row count.
    func write(to base: String) throws -> Int {
        let options = ParquetWriterOptions(rowGroupRows: rowGroupRows, compression: compression)
        let writer = try ParquetFileWriter(path: base + ".parquet", columns: columns, options: options)
        for row in rows {
            for (index, value) in row.enumerated() {
                switch value {
                case .null: try writer.appendNull(column: index)
                case .integer(let number): try writer.append(number, column: index)
                case .double(let number): try writer.append(number, column: index)
                case .text(let text):
                    var copy = text
                    try copy.withUTF8 { try writer.append(bytes: UnsafeRawBufferPointer($0), column: index) }
                }
            }
            try writer.endRow()
        }
        try writer.finish()
        try Self.writeExpected(columns: columns, rows: rows, to: base)
        return rows.count
    }

    static func writeExpected(columns: [ParquetColumn], rows: [[Value]], to base: String) throws {
        func kind(_ type: ParquetColumnType) -> String {
            switch type {
            case .int64: return "int64"
            case .timestampMillis: return "timestamp"
            case .decimal: return "decimal"
            case .double: return "double"
            case .string: return "string"
            }
        }
        func json(_ value: Value, _ type: ParquetColumnType) -> JSONValue {
            switch value {
            case .null: return .null
            case .integer(let number):
                guard case .decimal = type else { return .int(number) }
                let magnitude = number.magnitude
                let fraction = String(magnitude % 1000)
                return .string((number < 0 ? "-" : "") + "\(magnitude / 1000)."
                               + String(repeating: "0", count: 3 - fraction.count) + fraction)
            case .double(let number):
                let bits = String(number.bitPattern, radix: 16)
                return .string(String(repeating: "0", count: 16 - bits.count) + bits)
            case .text(let text): return .string(text)
            }
        }
        let document = JSONValue.object([
            ("columns", .array(columns.map {
                .object([("name", .string($0.name)), ("type", .string(kind($0.type)))])
            })),
            ("rows", .array(rows.map { row in .array(row.enumerated().map { json($1, columns[$0].type) }) })),
        ])
        try Data(document.serialized()).write(to: URL(fileURLWithPath: base + ".expected.json"))
    }
}
