import Foundation
import EPFTestSupport
import Testing
@testable import EPFGenerator

@Suite struct ArchiveTests {
    @Test func v5ArchivesAreReadableByTarAndMatchTheirSidecars() throws {
        let directory = try TemporaryDirectory()
        var options = smallOptions()
        options.layout = .v5
        options.tables = ["application", "genre", "application_price"]
        let feed = try FeedGenerator.write(options, to: directory.url)
        #expect(feed.tables.count == 3)
        for table in feed.tables {
            #expect(table.path == directory.file("\(table.feed.rawValue)20260105", "\(table.table).tbz"))
            let member = "\(table.feed.rawValue)20260105/\(table.table)"
            #expect(table.member == member)
            let listing = try run("/usr/bin/tar", ["-tjf", table.path])
            #expect(listing.status == 0)
            #expect(String(decoding: listing.output, as: UTF8.self) == member + "\n")
            let content = try run("/usr/bin/tar", ["-xjOf", table.path, member])
            #expect(content.status == 0)
            #expect(content.output == (try FeedGenerator.tableBytes(table.table, options: options)))
            let sidecar = String(decoding: try readBytes(table.path + ".md5"), as: UTF8.self)
            let md5sum = String(decoding: try run("/usr/bin/md5sum", [table.path]).output, as: UTF8.self)
            let digest = String(md5sum.prefix(32))
            #expect(sidecar == "MD5 (\(table.table).tbz) = \(digest)\n")
            #expect(feed.files.first { $0.path == table.path }?.md5 == digest)
        }
    }

    @Test func v3ArchiveHoldsTheWholeDirectory() throws {
        let directory = try TemporaryDirectory()
        var options = smallOptions()
        options.layout = .v3Archive
        options.tables = ["application", "storefront", "artist_type", "application_price"]
        let feed = try FeedGenerator.write(options, to: directory.url)
        let archive = directory.file("itunes20260105.tbz")
        #expect(feed.feedPaths[.itunes]?.path == archive)
        let listing = String(decoding: try run("/usr/bin/tar", ["-tjf", archive]).output, as: UTF8.self)
        #expect(listing == "itunes20260105/\nitunes20260105/application\nitunes20260105/artist_type\n"
            + "itunes20260105/storefront\n")
        let plain = try TemporaryDirectory()
        let extracted = try run("/usr/bin/tar", ["-xjf", archive, "-C", plain.url.path])
        #expect(extracted.status == 0)
        for table in ["application", "storefront", "artist_type"] {
            #expect(try readBytes(plain.file("itunes20260105", table))
                == FeedGenerator.tableBytes(table, options: options))
        }
        let pricing = directory.file("pricing20260105.tbz")
        let md5sum = String(decoding: try run("/usr/bin/md5sum", [pricing]).output, as: UTF8.self).prefix(32)
        #expect(String(decoding: try readBytes(pricing + ".md5"), as: UTF8.self)
            == "MD5 (pricing20260105.tbz) = \(md5sum)\n")
    }

    @Test func longMemberNamesUseGnuLongLinkEntries() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("long.tbz")
        let file = try FileSink(path: path)
        let tar = TarWriter(sink: try Bzip2Sink(next: file, path: path))
        let name = "itunes20260105/" + String(repeating: "very_long_table_name_", count: 8)
        let content = Array("hello\u{02}\n".utf8)
        try tar.beginFile(name, size: Int64(content.count), mtime: 1_767_571_200)
        try content.withUnsafeBytes { try tar.writeContent($0) }
        try tar.endFile()
        try tar.beginFile("short", size: 0, mtime: 0)
        try tar.endFile()
        try tar.finish()
        #expect(name.utf8.count > 100)
        let listing = String(decoding: try run("/usr/bin/tar", ["-tjf", path]).output, as: UTF8.self)
        #expect(listing == name + "\nshort\n")
        #expect(try run("/usr/bin/tar", ["-xjOf", path, name]).output == content)
    }

    @Test func tarRejectsAMemberOfTheWrongSize() throws {
        let sink = MemorySink()
        let tar = TarWriter(sink: sink)
        try tar.beginFile("x", size: 10, mtime: 0)
        try Array("abc".utf8).withUnsafeBytes { try tar.writeContent($0) }
        #expect(throws: GeneratorError.tarSizeMismatch(member: "x", announced: 10, written: 3)) { try tar.endFile() }
    }

    @Test(arguments: FileCompression.allCases)
    func singleTableFilesDecompressToThePlainBytes(compression: FileCompression) throws {
        let directory = try TemporaryDirectory()
        let options = smallOptions()
        let path = directory.file("application.\(compression.rawValue)")
        let table = try FeedGenerator.writeTable("application", options: options, to: URL(fileURLWithPath: path),
                                                 compression: compression)
        let plain = try FeedGenerator.tableBytes("application", options: options)
        #expect(table.rows == options.apps)
        let bytes: [UInt8]
        switch compression {
        case .none: bytes = try readBytes(path)
        case .gzip: bytes = try run("/bin/gzip", ["-dc", path]).output
        case .bzip2: bytes = try run("/bin/bzip2", ["-dc", path]).output
        case .tarBzip2: bytes = try run("/usr/bin/tar", ["-xjOf", path]).output
        }
        #expect(bytes == plain)
    }
}
