import Foundation
import Testing
@testable import EPFFormat

/// Builds EPF bytes by hand, so each fixture shows exactly the case it tests.
struct EPFFixture {
    var columns = ["export_date", "application_id", "title", "description"]
    var primaryKey = "application_id"
    var types = ["BIGINT", "INTEGER", "VARCHAR(1000)", "LONGTEXT"]
    var mode = "FULL"
    var rows: [[[UInt8]]] = []
    var footer: Int? = nil
    var legal = 3

    static let soh: [UInt8] = [0x01]
    static let end: [UInt8] = [0x02, 0x0A]

    func bytes(writeFooter: Bool = true) -> [UInt8] {
        var out: [UInt8] = []
        func record(_ parts: [[UInt8]]) {
            for (index, part) in parts.enumerated() {
                if index > 0 { out += Self.soh }
                out += part
            }
            out += Self.end
        }
        record([Array(("#" + columns[0]).utf8)] + columns.dropFirst().map { Array($0.utf8) })
        record([Array("#primaryKey:\(primaryKey)".utf8)])
        record([Array("#dbTypes:\(types[0])".utf8)] + types.dropFirst().map { Array($0.utf8) })
        record([Array("#exportMode:\(mode)".utf8)])
        for index in 0..<legal { record([Array("##legal: line \(index)".utf8)]) }
        for row in rows { record(row) }
        if writeFooter { record([Array("#recordsWritten:\(footer ?? rows.count)".utf8)]) }
        return out
    }

    static func row(_ values: String?...) -> [[UInt8]] {
        values.map { Array(($0 ?? "").utf8) }
    }
}

struct ReadResult {
    var header: EPFHeader
    var rows: [[String?]]
    var numbers: [Int]
    var offsets: [Int64]
    var issues: [RecordIssues]
    var summary: EPFReadSummary
}

func readAll(_ bytes: [UInt8], maximumRead: Int = .max, readSize: Int = 1 << 20) throws -> ReadResult {
    let source = MemoryByteSource(bytes, maximumRead: maximumRead)
    let reader = try EPFTableReader(source: source, location: "fixture",
                                    options: ReadOptions(readSize: readSize, prefetch: false))
    var rows: [[String?]] = []
    var numbers: [Int] = []
    var offsets: [Int64] = []
    var issues: [RecordIssues] = []
    let summary = try reader.forEachRecord { record in
        rows.append((0..<record.fieldCount).map { record.string($0) })
        numbers.append(record.number)
        offsets.append(record.offset)
        issues.append(record.issues)
    }
    return ReadResult(header: reader.header, rows: rows, numbers: numbers, offsets: offsets, issues: issues,
                      summary: summary)
}

@Suite struct RecordReaderTests {
    static let awkward = EPFFixture(rows: [
        EPFFixture.row("1452074401007", "364709193", "Café Crème ☕️", "line one\nline two\r\nline three"),
        EPFFixture.row("1452074401007", "2", nil, "NULL"),
        EPFFixture.row("1452074401007", "3", "日本語のゲーム 🎮", "a\u{02}b stays, 0x02 alone is data"),
        EPFFixture.row("1452074401007", "4", "مرحبا", ""),
    ])

    @Test func headerTagsAndValuesAreReadByteExact() throws {
        let result = try readAll(Self.awkward.bytes())
        #expect(result.header.columns == ["export_date", "application_id", "title", "description"])
        #expect(result.header.primaryKey == ["application_id"])
        #expect(result.header.dbTypes == ["BIGINT", "INTEGER", "VARCHAR(1000)", "LONGTEXT"])
        #expect(result.header.exportMode == .full)
        #expect(result.header.legalLines == 3)
        #expect(result.rows.count == 4)
        #expect(result.rows[0][3] == "line one\nline two\r\nline three")
        #expect(result.rows[1][2] == nil)
        #expect(result.rows[1][3] == "NULL")
        #expect(result.rows[2][2] == "日本語のゲーム 🎮")
        #expect(result.rows[2][3] == "a\u{02}b stays, 0x02 alone is data")
        #expect(result.summary.declaredRecords == 4)
        #expect(!result.summary.truncated && !result.summary.countMismatch && result.summary.badRecords == 0)
        #expect(result.numbers == [1, 2, 3, 4])
    }

    @Test(arguments: [1, 2, 3, 5, 7, 64, 4096])
    func chunkBoundariesDoNotChangeAnything(maximumRead: Int) throws {
        let expected = try readAll(Self.awkward.bytes())
        let chunked = try readAll(Self.awkward.bytes(), maximumRead: maximumRead, readSize: maximumRead)
        #expect(chunked.rows == expected.rows)
        #expect(chunked.offsets == expected.offsets)
        #expect(chunked.header == expected.header)
    }

    @Test func offsetsPointAtRecordStarts() throws {
        let bytes = Self.awkward.bytes()
        let result = try readAll(bytes)
        for (index, offset) in result.offsets.enumerated() {
            let prefix = Array(bytes[Int(offset)..<Int(offset) + 13])
            #expect(String(decoding: prefix, as: UTF8.self) == "1452074401007", "record \(index + 1)")
        }
    }

    @Test func straySeparatorIsReportedWithNumberAndOffset() throws {
        var fixture = EPFFixture()
        fixture.rows = [
            EPFFixture.row("1", "10", "ok", "fine"),
            EPFFixture.row("1", "11", "title", "desc with \u{01} stray separator"),
        ]
        let bytes = fixture.bytes()
        let result = try readAll(bytes)
        #expect(result.issues[0].isEmpty)
        #expect(result.issues[1] == .fieldCount)
        #expect(result.rows[1].count == 5)
        #expect(result.summary.problemSamples.first?.record == 2)
        #expect(result.summary.problemSamples.first?.fields == 5)
        let offset = Int(result.summary.problemSamples.first?.offset ?? 0)
        #expect(Array(bytes[offset..<offset + 4]) == Array("1\u{01}11".utf8))
    }

    @Test func invalidUTF8AndNULAreReported() throws {
        var fixture = EPFFixture()
        fixture.rows = [
            [Array("1".utf8), Array("1".utf8), [0x41, 0xff, 0xfe], Array("x".utf8)],
            [Array("1".utf8), Array("2".utf8), Array("ok".utf8), [0x61, 0x00, 0x62]],
            [Array("1".utf8), Array("3".utf8), [0xed, 0xa0, 0x80], Array("surrogate".utf8)],
            [Array("1".utf8), Array("4".utf8), [0xc0, 0xaf], Array("overlong".utf8)],
            [Array("1".utf8), Array("5".utf8), Array("𝄞 ok 4-byte".utf8), Array("y".utf8)],
        ]
        let result = try readAll(fixture.bytes())
        #expect(result.issues == [.invalidUTF8, .nulByte, .invalidUTF8, .invalidUTF8, []])
        #expect(result.summary.problemCounts["invalid-utf8"] == 3)
        #expect(result.summary.problemCounts["nul-byte"] == 1)
    }

    @Test func missingFooterIsTruncationWithEndOffset() throws {
        var fixture = EPFFixture()
        fixture.rows = [EPFFixture.row("1", "1", "a", "b"), EPFFixture.row("1", "2", "c", "d")]
        let bytes = fixture.bytes(writeFooter: false)
        let result = try readAll(bytes)
        #expect(result.summary.truncated)
        #expect(result.summary.bytes == Int64(bytes.count))
        #expect(result.summary.declaredRecords == nil)
        // Cut inside the last record: the partial record is flagged unterminated.
        let cut = try readAll(Array(bytes.dropLast(3)))
        #expect(cut.summary.truncated)
        #expect(cut.issues.last?.contains(.unterminated) == true)
    }

    @Test func declaredCountLargerThanRowsIsAMismatch() throws {
        var fixture = EPFFixture()
        fixture.rows = [EPFFixture.row("1", "1", "a", "b")]
        fixture.footer = 155
        let result = try readAll(fixture.bytes())
        #expect(result.summary.countMismatch)
        #expect(result.summary.declaredRecords == 155)
        #expect(result.summary.records == 1)
    }

    @Test func zeroRowFileIsSound() throws {
        var fixture = EPFFixture()
        fixture.columns = ["export_date", "storefront_id", "country_code", "name"]
        fixture.primaryKey = "storefront_id"
        fixture.types = ["BIGINT", "INTEGER", "VARCHAR(3)", "VARCHAR(200)"]
        let result = try readAll(fixture.bytes())
        #expect(result.rows.isEmpty)
        #expect(result.summary.declaredRecords == 0)
        #expect(!result.summary.truncated && !result.summary.countMismatch)
    }

    /// A zero-row file with rows glued after its footer: the rows are counted as after the footer, and the whole
    /// file is read, at every read size. Found by the epf-records fuzz target
    /// (fuzz/regressions/epf-records/rows-after-footer-of-empty-table): they were ignored, and `bytes` depended on
    /// the read size.
    @Test(arguments: [1, 7, 1 << 20])
    func rowsAfterTheFooterOfAZeroRowFileAreCounted(readSize: Int) throws {
        let glued = EPFFixture().bytes() + EPFFixture(rows: [EPFFixture.row("1", "2", "c", "d")]).bytes()
        let result = try readAll(glued, maximumRead: readSize, readSize: readSize)
        #expect(result.rows.isEmpty)
        #expect(result.summary.declaredRecords == 0)
        #expect(result.summary.recordsAfterFooter == 9)
        #expect(result.summary.countMismatch)
        #expect(result.summary.bytes == Int64(glued.count))
    }

    /// Tags and column names are read as bytes: a combining mark right after the '#' or a tag's ':' stays in the
    /// value, and does not hide the tag. Found by the epf-records fuzz target
    /// (fuzz/regressions/epf-records/combining-mark-after-hash): the first column lost its mark.
    @Test func combiningMarksAfterTagsStayInTheValues() throws {
        var bytes: [UInt8] = []
        for line in ["#\u{59E}export_date\u{01}id", "#primaryKey:\u{301}id", "#dbTypes:\u{301}BIGINT\u{01}INTEGER",
                     "#exportMode:FULL", "1\u{01}2", "#recordsWritten:\u{301}1"] {
            bytes += Array(line.utf8) + EPFFixture.end
        }
        let result = try readAll(bytes)
        #expect(result.header.columns == ["\u{59E}export_date", "id"])
        #expect(result.header.primaryKey == ["\u{301}id"])
        #expect(result.header.dbTypes == ["\u{301}BIGINT", "INTEGER"])
        #expect(result.header.otherTags.isEmpty)
        #expect(result.rows == [["1", "2"]])
        #expect(result.summary.declaredRecords == -1)
        #expect(!result.summary.truncated)
    }

    @Test func compositeAndEmptyPrimaryKeysAndTagsInAnyOrder() throws {
        var bytes: [UInt8] = []
        for line in ["#export_date\u{01}application_id\u{01}storefront_id", "##legal: first",
                     "#exportMode:INCREMENTAL", "#dbTypes:BIGINT\u{01}INTEGER\u{01}INTEGER",
                     "#primaryKey:application_id\u{01}storefront_id", "1\u{01}2\u{01}3", "#recordsWritten:1"] {
            bytes += Array(line.utf8) + EPFFixture.end
        }
        let result = try readAll(bytes)
        #expect(result.header.primaryKey == ["application_id", "storefront_id"])
        #expect(result.header.exportMode == .incremental)
        #expect(result.rows == [["1", "2", "3"]])

        var none = EPFFixture()
        none.primaryKey = ""
        #expect(try readAll(none.bytes()).header.primaryKey.isEmpty)
    }

    @Test func recordsLargerThanTheBufferAreReadWhole() throws {
        var fixture = EPFFixture()
        let big = String(repeating: "ß\r\n", count: 2_000_000)
        fixture.rows = [EPFFixture.row("1", "1", "big", big), EPFFixture.row("1", "2", "small", "x")]
        let result = try readAll(fixture.bytes(), readSize: 1 << 16)
        #expect(result.rows[0][3] == big)
        #expect(result.rows[1][2] == "small")
    }

    @Test func notEPFIsABadHeaderError() throws {
        #expect(throws: EPFError.self) { try readAll(Array("hello world, not a feed".utf8)) }
        #expect(throws: EPFError.self) { try readAll([]) }
    }

    @Test func flatFilesAreRecognised() throws {
        let text = "#export_date\tepisode_id\tname\n#dbTypes:BIGINT\tINTEGER\tVARCHAR(100)\n1\t5\tPilot\r\n1\t6\t\n"
        let result = try readAll(Array(text.utf8))
        #expect(result.header.flavor == .flat)
        #expect(result.header.columns == ["export_date", "episode_id", "name"])
        #expect(result.header.dbTypes == ["BIGINT", "INTEGER", "VARCHAR(100)"])
        #expect(result.rows == [["1", "5", "Pilot"], ["1", "6", nil]])
        #expect(!result.summary.truncated)
    }
}

@Suite struct ValueParsingTests {
    static func integer(_ text: String) -> Int64? {
        Array(text.utf8).withUnsafeBytes { EPFValues.integer($0) }
    }

    static func datetime(_ text: String) -> String? {
        Array(text.utf8).withUnsafeBytes { EPFValues.datetime($0) }
    }

    /// Int64.min too: found by the epf-records fuzz target (fuzz/regressions/epf-records/integer-int64-min).
    @Test(arguments: [("123", Int64(123)), ("-5", -5), ("0", 0), ("9223372036854775807", Int64.max),
                      ("-9223372036854775808", Int64.min), ("-0", 0), ("+7", 7)])
    func integersParse(text: String, value: Int64) {
        #expect(Self.integer(text) == value)
    }

    /// Junk seen in real integer columns, and near misses.
    @Test(arguments: ["[123]", "[int]", "<UnknownKeyException>", "12\u{07}", "12\u{07}3", " 1", "1 ", "1.5", "",
                      "-", "+", "99999999999999999999", "1e5", "0x10", "１２",
                      "9223372036854775808", "-9223372036854775809", "18446744073709551616"])
    func junkIsNotAnInteger(text: String) {
        #expect(Self.integer(text) == nil)
    }

    /// Every DATETIME shape seen in real feeds (and close relatives) maps to the one canonical form.
    @Test(arguments: [
        ("2012 09 25", "2012-09-25T00:00:00Z"), ("2009 06 21", "2009-06-21T00:00:00Z"),
        ("2011 03 15", "2011-03-15T00:00:00Z"), ("2012-09-25", "2012-09-25T00:00:00Z"),
        ("2012/09/25", "2012-09-25T00:00:00Z"), ("2012 9 5", "2012-09-05T00:00:00Z"),
        ("2012", "2012-01-01T00:00:00Z"), ("2012-09", "2012-09-01T00:00:00Z"),
        ("2012-09-25-10:00:00-Etc/GMT", "2012-09-25T10:00:00Z"),
        ("2005-09-06-00:00:00-Etc/GMT", "2005-09-06T00:00:00Z"),
        ("2012-09-25 10:11:12", "2012-09-25T10:11:12Z"), ("2012 09 25 10 11 12", "2012-09-25T10:11:12Z"),
        ("2011 03 15 12:30:00", "2011-03-15T12:30:00Z"), ("2012-09-25T10:11:12Z", "2012-09-25T10:11:12Z"),
        ("2012-09-25T10:11:12.250Z", "2012-09-25T10:11:12Z"), ("2012-09-25 10:11", "2012-09-25T10:11:00Z"),
        ("2012 02 29", "2012-02-29T00:00:00Z"), ("2000 02 29", "2000-02-29T00:00:00Z"),
        ("1999 12 31 23:59:59", "1999-12-31T23:59:59Z"), ("2016-05-26T21:15:49Z", "2016-05-26T21:15:49Z"),
    ])
    func datetimesNormalise(text: String, iso: String) {
        #expect(Self.datetime(text) == iso)
    }

    /// Broken dates (1-3 digit years, impossible days, junk) are not dates: the importer stores NULL.
    @Test(arguments: [
        "12 9 25", "1 01 01", "09 06 21", "201 06 21", "0012 01 01", "20120 09 25", "2012 13 01", "2012 00 10",
        "2012 09 00", "2011 02 29", "1900 02 29", "2012 04 31", "2012 009 25", "2012 09 25 24:00:00",
        "2012 09 25 10:60:00", "2012 09 25 10", "2012--09-25", " 2012 09 25", "2012 09 25 ", "soon", "[int]",
        "<UnknownKeyException>", "2012-09-25-10:00:00-Etc/UTC", "2012 09 25\u{07}", "2012-09-25T10:11:12.5.6",
        "2012-09-25 10:11:12 13", "",
    ])
    func brokenDatetimesAreNil(text: String) {
        #expect(Self.datetime(text) == nil)
    }

    @Test func decimalsAreCheckedNotRounded() {
        for good in ["0.99", "0.000", "1234567.990", "-1.5", "12"] {
            #expect(Array(good.utf8).withUnsafeBytes { EPFValues.decimal($0) }, "\(good)")
        }
        for bad in ["1.2.3", "$1", "", ".", "1e5"] {
            #expect(!Array(bad.utf8).withUnsafeBytes { EPFValues.decimal($0) }, "\(bad)")
        }
    }

    @Test func exportDateFormatsAsUTC() {
        #expect(EPFValues.isoTimestamp(milliseconds: 1_452_074_401_007) == "2016-01-06T10:00:01Z")
        #expect(EPFValues.isoDate(milliseconds: 1_452_074_401_007) == "2016-01-06")
    }

    /// The timestamps written digit by digit are those `String(format:)` wrote, for any instant: before 1970, in
    /// year 0, past 9999 (where the format's own text is kept), and random ones between.
    @Test func timestampsAreTheFormattedOnes() {
        func reference(_ milliseconds: Int64) -> String {
            var seconds = time_t(milliseconds / 1000)
            var parts = tm()
            gmtime_r(&seconds, &parts)
            return String(format: "%04d-%02d-%02dT%02d:%02d:%02dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
                          Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
        }
        var random = SystemRandomNumberGenerator()
        let edges: [Int64] = [0, -1, -999, -1000, -1001, 951_782_400_000, 253_402_300_799_999, 253_402_300_800_000,
                              -62_167_219_200_000, -62_167_219_200_001, 4_102_444_800_000]
        let randoms = (0..<20_000).map { _ in Int64.random(in: -62_200_000_000_000...300_000_000_000_000, using: &random) }
        for milliseconds in edges + randoms {
            let want = reference(milliseconds)
            #expect(EPFValues.isoTimestamp(milliseconds: milliseconds) == want, "\(milliseconds)")
            #expect(EPFValues.isoDate(milliseconds: milliseconds) == String(want.prefix(10)), "\(milliseconds)")
        }
    }

    @Test func md5MatchesRFC1321Vectors() {
        let vectors = [
            ("", "d41d8cd98f00b204e9800998ecf8427e"), ("a", "0cc175b9c0f1b6a831c399e269772661"),
            ("abc", "900150983cd24fb0d6963f7d28e17f72"),
            ("12345678901234567890123456789012345678901234567890123456789012345678901234567890",
             "57edf4a22be3c955ac49da2e2107b67a"),
        ]
        for (text, digest) in vectors {
            var hash = MD5()
            hash.update(Array(text.utf8))
            #expect(hash.finalizeHex() == digest)
        }
    }

    @Test(arguments: [("application", "application", nil), ("application_detail.2", "application_detail", 2),
                      ("application_price_part_003.tbz", "application_price", 3), ("genre.tbz", "genre", nil),
                      ("free_application_popularity_per_genre-01", "free_application_popularity_per_genre", 1)])
    func tableNamesAndParts(file: String, table: String, part: Int?) {
        let parsed = FeedInput.tableName(fromFileName: file)
        #expect(parsed.table == table)
        #expect(parsed.part == part)
    }
}
