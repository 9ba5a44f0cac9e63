@testable import EPFFormat
import EPFTestSupport
import Foundation
import Testing

/// What a reader reported about a file, record by record, or the error it threw.
private struct Transcript: Equatable {
    struct Record: Equatable {
        var number: Int
        var offset: Int64
        var bytes: [UInt8]
        var fields: Int
        var issues: RecordIssues
    }
    var records: [Record] = []
    var summary = ""
    var error: String?

    init(_ read: () throws -> EPFTableReader) {
        do {
            let reader = try read()
            let found = try reader.forEachRecord { record in
                records.append(Record(number: record.number, offset: record.offset, bytes: Array(record.bytes),
                                      fields: record.fieldCount, issues: record.issues))
            }
            summary = "\(found.records) \(found.declaredRecords ?? -2) \(found.truncated) \(found.bytes) "
                + "\(found.problemCounts.sorted { $0.key < $1.key }) \(found.problemSamples) \(found.badRecords) "
                + "\(found.recordsAfterFooter) \(reader.header.columns) \(reader.header.byteCount)"
        } catch {
            self.error = "\(error)"
        }
    }
}

/// Reading a mapped file in place, with its windows checked on a second thread, reports exactly what reading it
/// with `read(2)` does, wherever the dirt falls against the windows.
@Suite struct MappedReadTests {
    /// Reads `bytes` from a file both ways and expects the same transcript.
    private func expectSameReports(_ bytes: [UInt8], windowSizes: [Int] = [16, 17, 64, 1 << 20],
                                   options: ReadOptions = ReadOptions(),
                                   sourceLocation: SourceLocation = #_sourceLocation) throws {
        let work = try TemporaryDirectory()
        let path = work.file("application")
        try work.write("application", bytes)
        let expected = Transcript { try EPFTableReader(source: FileByteSource(path: path), location: path,
                                                       options: options) }
        for windowSize in windowSizes {
            let mapped = try #require(try MappedFile(path: path))
            let actual = Transcript { try EPFTableReader(mapped: mapped, location: path, options: options,
                                                         windowSize: windowSize) }
            #expect(actual == expected, "window \(windowSize)", sourceLocation: sourceLocation)
        }
    }

    @Test func cleanMultiByteTextAcrossEveryWindowEdgeIsClean() throws {
        var fixture = EPFFixture()
        for index in 0..<40 {
            fixture.rows.append(EPFFixture.row("1", "\(index)", "Ünïcødé ★ 🎉 title", "漢字のテキスト € é 🎉 \(index)"))
        }
        let bytes = fixture.bytes()
        try expectSameReports(bytes)
        // And the mapped reader finds nothing wrong.
        let work = try TemporaryDirectory()
        try work.write("t", bytes)
        let mapped = try #require(try MappedFile(path: work.file("t")))
        let reader = try EPFTableReader(mapped: mapped, location: "t", options: ReadOptions(), windowSize: 16)
        #expect(try reader.forEachRecord { _ in }.badRecords == 0)
    }

    @Test func windowsCutThroughCharactersAreStillClean() {
        let text = Array("aé★🎉漢€ü🎉b".utf8)
        text.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            for start in 0..<text.count {
                for end in start + 1...text.count {
                    #expect(WindowValidation.isClean(base, count: text.count, start: start, end: end))
                }
            }
        }
        // A window is dirty when a bad byte is in it, or when it holds part of a broken sequence.
        let broken: [UInt8] = Array("ab".utf8) + [0xE2, 0x82] + Array("cd".utf8) + [0x00] + Array("e".utf8)
        broken.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            let clean = (0..<broken.count).map { WindowValidation.isClean(base, count: broken.count, start: $0,
                                                                          end: $0 + 1) }
            #expect(clean == [true, true, false, false, true, true, false, true])
        }
    }

    @Test func badBytesAtEveryPositionAgainstTheWindows() throws {
        var fixture = EPFFixture()
        for index in 0..<6 { fixture.rows.append(EPFFixture.row("1", "\(index)", "t é", "🎉 description ★")) }
        let clean = fixture.bytes()
        let dataStart = clean.count - 200
        // Each kind of damage at every byte of the data: a NUL, a stray continuation, a lead without its tail,
        // an overlong, a surrogate.
        let damage: [[UInt8]] = [[0x00], [0x80], [0xE2, 0x82], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90]]
        for bad in damage {
            for position in stride(from: dataStart, to: clean.count - 20, by: 3) {
                var bytes = clean
                bytes.replaceSubrange(position..<position + bad.count, with: bad)
                try expectSameReports(bytes, windowSizes: [16, 19, 32])
            }
        }
    }

    @Test func randomDirtMatchesTheReadingPath() throws {
        var generator = SeededGenerator(seed: 7)
        let alphabet: [[UInt8]] = [Array("a".utf8), Array("é".utf8), Array("★".utf8), Array("🎉".utf8), [0x01],
                                   [0x02], [0x0A], [0x00], [0x80], [0xC3], [0xF0, 0x9F], [0xFF], [0xE0, 0x80]]
        for _ in 0..<60 {
            var fixture = EPFFixture()
            for index in 0..<Int.random(in: 1...12, using: &generator) {
                var text: [UInt8] = []
                for _ in 0..<Int.random(in: 0...80, using: &generator) {
                    let pick = Int.random(in: 0..<100, using: &generator)
                    text += pick < 60 ? alphabet[pick % 4] : alphabet[pick % alphabet.count]
                }
                fixture.rows.append([Array("1".utf8), Array("\(index)".utf8), text, Array("d".utf8)])
            }
            try expectSameReports(fixture.bytes(writeFooter: Bool.random(using: &generator)),
                                  windowSizes: [16, Int.random(in: 17...300, using: &generator)])
        }
    }

    @Test func fileEndsWithoutARecordSeparator() throws {
        var fixture = EPFFixture()
        fixture.rows = [EPFFixture.row("1", "1", "a", "b"), EPFFixture.row("1", "2", "é", "★")]
        var bytes = fixture.bytes(writeFooter: false)
        bytes.removeLast(2)
        try expectSameReports(bytes)
        // Cut inside a multi-byte character.
        bytes.removeLast(1)
        try expectSameReports(bytes)
    }

    @Test func tooLargeRecordsFailAtTheSameRecord() throws {
        var fixture = EPFFixture()
        let long = String(repeating: "x", count: (1 << 16) - 10)
        fixture.rows = [EPFFixture.row("1", "1", "a", "b"), EPFFixture.row("1", "2", long, long)]
        var options = ReadOptions(readSize: 1 << 16)
        options.maximumRecordBytes = 1 << 16
        try expectSameReports(fixture.bytes(), options: options)
        // Without its terminator, and exactly at the limit.
        var bytes = EPFFixture().bytes(writeFooter: false) + Array(long.utf8)
        try expectSameReports(bytes, options: options)
        bytes += Array(repeating: UInt8(ascii: "y"), count: 9)
        try expectSameReports(bytes, options: options)
        bytes += Array(repeating: UInt8(ascii: "y"), count: 1)
        try expectSameReports(bytes, options: options)
    }

    @Test func emptyAndUnmappableFilesAreReadTheUsualWay() throws {
        let work = try TemporaryDirectory()
        try work.write("application", [])
        #expect(try MappedFile(path: work.file("application")) == nil)
        var options = ReadOptions()
        options.memoryMap = true
        options.verifySidecars = false
        #expect(throws: EPFError.badHeader(location: work.file("application"), message: "the file is empty",
                                           offset: 0)) {
            try FeedInput.forEachTable(inUnit: [work.file("application")], options: options) { _, _ in }
        }
        #expect(try MappedFile(path: "/dev/null") == nil)
        #expect(throws: EPFError.notFound(path: work.file("missing"))) { try MappedFile(path: work.file("missing")) }
    }

    @Test func feedInputMapsPlainFilesWhenAsked() throws {
        var fixture = EPFFixture()
        fixture.rows = [EPFFixture.row("1", "1", "a", "b"), EPFFixture.row("1", "2", "c\u{0}", "d")]
        let work = try TemporaryDirectory()
        try work.write("itunes20260105/application", fixture.bytes())
        var summaries: [String] = []
        for memoryMap in [false, true] {
            var options = ReadOptions()
            options.memoryMap = memoryMap
            let unit = [work.file("itunes20260105/application")]
            try FeedInput.forEachTable(inUnit: unit, options: options) { file, reader in
                #expect(file.table == "application" && file.feed == "itunes" && file.archive == nil)
                let summary = try reader.forEachRecord { _ in }
                #expect(reader.inputPosition?().read == Int64(fixture.bytes().count))
                summaries.append("\(summary.records) \(summary.problemSamples) \(summary.bytes)")
            }
        }
        #expect(summaries.count == 2 && summaries[0] == summaries[1])
    }
}
