import Foundation
import Testing
@testable import EPFFormat

/// A temporary directory removed when the test ends.
final class TemporaryDirectory {
    let url: URL
    var path: String { url.path }

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("epf-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    func file(_ relative: String) -> String { url.appendingPathComponent(relative).path }

    func write(_ relative: String, _ bytes: [UInt8]) throws {
        let target = url.appendingPathComponent(relative)
        try FileManager.default.createDirectory(at: target.deletingLastPathComponent(),
                                                withIntermediateDirectories: true)
        try Data(bytes).write(to: target)
    }
}

/// Runs a command line tool and fails the test if it fails.
@discardableResult
func shell(_ arguments: [String], in directory: String) throws -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    process.currentDirectoryURL = URL(fileURLWithPath: directory)
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus
}

func collect(_ path: String, readSize: Int = 1 << 20) throws -> [(TableFile, [[String?]], EPFReadSummary)] {
    var result: [(TableFile, [[String?]], EPFReadSummary)] = []
    try FeedInput.forEachTable(at: path, options: ReadOptions(readSize: readSize)) { file, reader in
        var rows: [[String?]] = []
        let summary = try reader.forEachRecord { record in
            rows.append((0..<record.fieldCount).map { record.string($0) })
        }
        result.append((file, rows, summary))
    }
    return result
}

@Suite struct ArchiveTests {
    static func sample(_ table: String, rows: Int) -> [UInt8] {
        var fixture = EPFFixture()
        fixture.rows = (0..<rows).map { index in
            EPFFixture.row("1452074401007", "\(100 + index)", "\(table) \(index) Ünïcödé",
                           "multi\r\nline \(index)\n")
        }
        return fixture.bytes()
    }

    @Test func v3DirectoryAndGzipAndTbzReadTheSameRows() throws {
        let directory = try TemporaryDirectory()
        try directory.write("itunes20260105/application", Self.sample("application", rows: 50))
        try directory.write("itunes20260105/genre", Self.sample("genre", rows: 5))
        let plain = try collect(directory.file("itunes20260105"))
        #expect(plain.map(\.0.table) == ["application", "genre"])
        #expect(plain.allSatisfy { $0.0.feed == "itunes" && $0.0.feedDate == "20260105" })

        try shell(["sh", "-c", "gzip -k -c itunes20260105/application > application.gz"], in: directory.path)
        let gzip = try collect(directory.file("application.gz"), readSize: 7)
        #expect(gzip.first?.1 == plain.first?.1)

        try shell(["tar", "-cjf", "itunes20260105.tbz", "itunes20260105"], in: directory.path)
        let tbz = try collect(directory.file("itunes20260105.tbz"), readSize: 1)
        #expect(tbz.map(\.0.table).sorted() == ["application", "genre"])
        for (file, rows, summary) in tbz {
            let expected = plain.first { $0.0.table == file.table }
            #expect(rows == expected?.1)
            #expect(!summary.truncated)
            #expect(file.location.contains("itunes20260105.tbz:itunes20260105/"))
        }
    }

    @Test(arguments: ["gnu", "posix", "ustar"])
    func longMemberNamesInEveryTarFormat(format: String) throws {
        let directory = try TemporaryDirectory()
        let longDirectory = "itunes20260105/" + String(repeating: "deep_folder_name/", count: 7)
        try directory.write(longDirectory + "application_detail", Self.sample("detail", rows: 3))
        let status = try shell(["tar", "--format=\(format)", "-czf", "feed.tar.gz", "itunes20260105"],
                               in: directory.path)
        #expect(status == 0)
        let tables = try collect(directory.file("feed.tar.gz"))
        #expect(tables.map(\.0.table) == ["application_detail"])
        #expect(tables.first?.1.count == 3)
        #expect(tables.first?.0.location.hasSuffix(longDirectory + "application_detail") == true)
    }

    @Test func v5DirectoryWithSidecarsAndParts() throws {
        let directory = try TemporaryDirectory()
        try directory.write("src/itunes20260105/application", Self.sample("application", rows: 4))
        try directory.write("src/itunes20260105/application_detail.1", Self.sample("d1", rows: 2))
        try directory.write("src/itunes20260105/application_detail.2", Self.sample("d2", rows: 3))
        try FileManager.default.createDirectory(atPath: directory.file("v5/itunes20260105"),
                                                withIntermediateDirectories: true)
        for name in ["application", "application_detail.1", "application_detail.2"] {
            try shell(["tar", "-cjf", "../v5/itunes20260105/\(name).tbz", "itunes20260105/\(name)"],
                      in: directory.file("src"))
            let digest = try MD5.hexDigest(ofFile: directory.file("v5/itunes20260105/\(name).tbz"))
            try directory.write("v5/itunes20260105/\(name).tbz.md5", Array("MD5 (\(name).tbz) = \(digest)\n".utf8))
        }
        let tables = try collect(directory.file("v5/itunes20260105"))
        #expect(tables.map(\.0.table) == ["application", "application_detail", "application_detail"])
        #expect(tables.map(\.0.part) == [nil, 1, 2])
        #expect(tables.allSatisfy { $0.0.verifiedMD5 != nil })

        // A wrong sidecar names the archive and reads nothing from it.
        try directory.write("v5/itunes20260105/application.tbz.md5",
                            Array("MD5 (application.tbz) = 00000000000000000000000000000000\n".utf8))
        do {
            _ = try collect(directory.file("v5/itunes20260105/application.tbz"))
            Issue.record("expected a checksum mismatch")
        } catch let error as EPFError {
            guard case .checksumMismatch(let archive, _, _, _) = error else {
                Issue.record("wrong error \(error)")
                return
            }
            #expect(archive.hasSuffix("application.tbz"))
        }
    }

    @Test func truncatedArchivesAreErrorsNotSilentSuccess() throws {
        let directory = try TemporaryDirectory()
        try directory.write("itunes20260105/application", Self.sample("application", rows: 2000))
        try shell(["tar", "-cjf", "full.tbz", "itunes20260105"], in: directory.path)
        let data = try Data(contentsOf: directory.url.appendingPathComponent("full.tbz"))
        try Data(data.prefix(data.count / 2)).write(to: directory.url.appendingPathComponent("cut.tbz"))
        #expect(throws: EPFError.self) { _ = try collect(directory.file("cut.tbz")) }

        var corrupt = data
        corrupt[corrupt.count / 2] ^= 0xff
        try corrupt.write(to: directory.url.appendingPathComponent("corrupt.tbz"))
        #expect(throws: EPFError.self) { _ = try collect(directory.file("corrupt.tbz")) }
    }

    @Test func aTableSplitByBytesIntoHeaderlessPartsIsReadAsOne() throws {
        let directory = try TemporaryDirectory()
        let whole = Self.sample("application_detail", rows: 300)
        try directory.write("whole/itunes20260105/application_detail", whole)
        let cuts = [0, whole.count / 3 + 7, 2 * whole.count / 3 + 1, whole.count]
        try FileManager.default.createDirectory(atPath: directory.file("v5/itunes20260105"),
                                                withIntermediateDirectories: true)
        for part in 1...3 {
            let name = "application_detail.00\(part)"
            try directory.write("src/itunes20260105/\(name)", Array(whole[cuts[part - 1]..<cuts[part]]))
            try shell(["tar", "-cjf", "../v5/itunes20260105/\(name).tbz", "itunes20260105/\(name)"],
                      in: directory.file("src"))
        }
        let expected = try collect(directory.file("whole/itunes20260105"))
        let split = try collect(directory.file("v5/itunes20260105"), readSize: 3)
        #expect(split.count == 1)
        #expect(split.first?.0.table == "application_detail")
        #expect(split.first?.1 == expected.first?.1)
        #expect(split.first?.2.truncated == false)
        #expect(split.first?.2.countMismatch == false)
    }

    /// Checks done ahead on the reading thread must find exactly what per-record checks find, wherever the
    /// 1 MiB chunk boundaries fall (inside multi-byte characters included).
    @Test func checksAheadFindExactlyWhatPerRecordChecksFind() throws {
        let directory = try TemporaryDirectory()
        var fixture = EPFFixture()
        var rows: [[[UInt8]]] = []
        for index in 0..<40_000 {
            var description = Array("日本語 текст é 🎮 \(index) ".utf8)
            if index % 997 == 5 { description += [0xff] }
            if index % 1499 == 7 { description += [0x00] }
            if index % 2003 == 11 { description += [0xe6, 0x97] }
            rows.append([Array("1".utf8), Array("\(index)".utf8), Array("t".utf8), description])
        }
        fixture.rows = rows
        try directory.write("itunes20260105/application", fixture.bytes())
        try shell(["sh", "-c", "gzip -k -c itunes20260105/application > application.gz"], in: directory.path)
        func problems(_ path: String, prefetch: Bool) throws -> ([RecordProblem], [String: Int]) {
            var options = ReadOptions(problemSamples: 1000, prefetch: prefetch)
            options.validate = true
            var result: ([RecordProblem], [String: Int]) = ([], [:])
            try FeedInput.forEachTable(at: path, options: options) { _, reader in
                let summary = try reader.forEachRecord { _ in }
                result = (summary.problemSamples, summary.problemCounts)
            }
            return result
        }
        let exact = try problems(directory.file("itunes20260105/application"), prefetch: false)
        #expect(exact.1["invalid-utf8"] ?? 0 > 50)
        #expect(exact.1["nul-byte"] ?? 0 > 20)
        let ahead = try problems(directory.file("itunes20260105/application"), prefetch: true)
        #expect(ahead.0 == exact.0)
        #expect(ahead.1 == exact.1)
        let gzip = try problems(directory.file("application.gz"), prefetch: true)
        #expect(gzip.0 == exact.0)
        try shell(["tar", "-czf", "feed.tar.gz", "itunes20260105"], in: directory.path)
        let tar = try problems(directory.file("feed.tar.gz"), prefetch: true)
        #expect(tar.0 == exact.0)
    }
}
