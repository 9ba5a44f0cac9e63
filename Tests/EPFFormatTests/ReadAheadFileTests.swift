import Foundation
import Testing
import EPFTestSupport
@testable import EPFFormat

@Suite struct ReadAheadFileTests {
    /// Writes `compressed` as `name` in a new directory; returns the directory and the file's path.
    static func file(_ name: String, _ compressed: [UInt8]) throws -> (TemporaryDirectory, String) {
        let directory = try TemporaryDirectory(prefix: "epf-read-ahead")
        try directory.write(name, compressed)
        return (directory, directory.file(name))
    }

    /// Descriptors of this process open on a read-ahead spill file in `directory` (unlinked, so only /proc shows it).
    static func openSpillFiles(in directory: String) -> Int {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return descriptors.filter { name in
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)")) ?? ""
            return target.hasPrefix(directory + "/.epf-read-ahead")
        }.count
    }

    /// Waits (bounded) until the read-ahead has spilled at least `bytes`, so a test sees the kept bytes used.
    static func waitForSpill(_ file: ReadAheadFile, atLeast bytes: Int64) {
        for _ in 0..<2000 where file.spillHighWater < bytes { usleep(5000) }
    }

    /// The bytes are those of `bzip2 -dc` whatever the limits: memory only, memory then spill, spill only with a
    /// bound below the file, several streams; read before or after the thread has filled what it may keep.
    @Test(arguments: [
        ReadAheadFile.Limits(memoryBytes: 16 << 20, spillBytes: 0, chunkBytes: 1 << 20),
        ReadAheadFile.Limits(memoryBytes: 64 << 10, spillBytes: 1 << 30, chunkBytes: 16 << 10),
        ReadAheadFile.Limits(memoryBytes: 0, spillBytes: 50_000, chunkBytes: 4096),
        ReadAheadFile.Limits(memoryBytes: 0, spillBytes: 1 << 30, chunkBytes: 777),
    ])
    func givesTheBytesOfTheDecoder(limits: ReadAheadFile.Limits) throws {
        for name in ["multi-stream", "runs", "empty"] {
            let sample = Bzip2Samples.sample(name)
            let (directory, path) = try Self.file("table.bz2", sample.compressed)
            var options = ReadOptions()
            options.decompressionThreads = 2
            let ahead = ReadAheadFile(path: path, options: options, spillDirectory: directory.path, limits: limits)
            if limits.memoryBytes == 0 && sample.plain.count > 100_000 {
                Self.waitForSpill(ahead, atLeast: min(limits.spillBytes, Int64(sample.plain.count)) / 2)
            }
            let opened = try ahead.open()
            #expect(opened.totalSize == Int64(sample.compressed.count))
            #expect(opened.digest == nil)
            let (bytes, error) = drain(ahead, chunk: 7777)
            #expect(error == nil)
            #expect(bytes == sample.plain, "\(name)")
            #expect(ahead.spillHighWater <= max(limits.spillBytes, 0))
        }
    }

    /// With a tiny memory bound the spill file is used, is never visible in the directory, never holds more than
    /// the compressed file's size at once, and is closed (its space freed) when the reader lets go, whether the
    /// reader read everything or nothing.
    @Test(arguments: [true, false])
    func theSpillFileIsUsedBoundedAndCleanedUp(readEverything: Bool) throws {
        let sample = Bzip2Samples.sample("text -9")
        let (directory, path) = try Self.file("table.bz2", sample.compressed)
        let bound = Int64(sample.compressed.count)
        let limits = ReadAheadFile.Limits(memoryBytes: 0, spillBytes: bound, chunkBytes: 8192)
        var ahead: ReadAheadFile? = ReadAheadFile(path: path, options: ReadOptions(),
                                                  spillDirectory: directory.path, limits: limits)
        if let ahead { Self.waitForSpill(ahead, atLeast: bound - 8192) }
        #expect(ahead?.spillFileCreated == true)
        #expect((ahead?.spillHighWater ?? 0) > 0)
        #expect((ahead?.spillHighWater ?? .max) <= bound, "the spill never outgrows its bound")
        #expect(Self.openSpillFiles(in: directory.path) == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["table.bz2"])
        if let ahead, readEverything {
            let (bytes, error) = drain(ahead)
            #expect(error == nil)
            #expect(bytes == sample.plain)
        }
        ahead = nil
        // The thread lets go of the file once it sees the cancellation; give it a moment.
        for _ in 0..<400 where Self.openSpillFiles(in: directory.path) > 0 { usleep(5000) }
        #expect(Self.openSpillFiles(in: directory.path) == 0)
    }

    /// Corrupt and truncated data fail with the decoder's own error after the same bytes, whether the thread ran
    /// into it long before the reader or not.
    @Test(arguments: [0, 1 << 20])
    func corruptDataFailsAsTheDecoderDoes(memoryBytes: Int) throws {
        let sample = Bzip2Samples.sample("text -1")
        var corrupt = sample.compressed
        corrupt[corrupt.count / 2] ^= 0x55
        for (label, bytes) in [("corrupt", corrupt), ("truncated", Array(sample.compressed.prefix(60_000)))] {
            let (directory, path) = try Self.file("table.bz2", bytes)
            let direct = drain(try Bzip2Decompression.source(FileByteSource(path: path), path: path, threads: 2))
            #expect(direct.error != nil, "\(label)")
            let limits = ReadAheadFile.Limits(memoryBytes: memoryBytes, spillBytes: 1 << 30, chunkBytes: 4096)
            let ahead = ReadAheadFile(path: path, options: ReadOptions(), spillDirectory: directory.path,
                                      limits: limits)
            usleep(50_000)
            _ = try ahead.open()
            let read = drain(ahead, chunk: 1000)
            #expect(read.bytes == direct.bytes, "\(label)")
            #expect(read.error as? EPFError == direct.error as? EPFError, "\(label)")
            #expect("\(read.error.map { "\($0)" } ?? "")".contains(path), "\(label)")
        }
    }

    /// The sidecar is checked before anything is decompressed, and a mismatch or a missing file is thrown by
    /// `open()` as reading the file directly throws it.
    @Test func sidecarAndOpenFailuresComeFromOpen() throws {
        let sample = Bzip2Samples.sample("one block")
        let (directory, path) = try Self.file("table.tbz", sample.compressed)
        try directory.write("table.tbz.md5", Array("MD5 (table.tbz) = 0123456789abcdef0123456789abcdef\n".utf8))
        let expected = #expect(throws: EPFError.self) { try FeedInput.verifySidecar(of: path) }
        let ahead = ReadAheadFile(path: path, options: ReadOptions(), spillDirectory: directory.path)
        let thrown = #expect(throws: EPFError.self) { try ahead.open() }
        #expect(thrown == expected)
        #expect(ahead.spillHighWater == 0)

        let missing = ReadAheadFile(path: directory.file("gone.tbz"), options: ReadOptions(), spillDirectory: nil)
        #expect(throws: EPFError.notFound(path: directory.file("gone.tbz"))) { try missing.open() }
    }
}
