@testable import EPFFormat
import Foundation
import Testing

/// `PrefetchingSource`: the bytes and errors of its inner source, in order, and no thread or memory left behind
/// when its reader stops early.
@Suite struct PrefetchingSourceTests {
    /// An endless stream of a repeated byte pattern that says when it is freed.
    final class EndlessSource: ByteSource, @unchecked Sendable {
        let freed: NSCondition
        nonisolated(unsafe) static var freedCount = 0
        private var position = 0

        init(freed: NSCondition) { self.freed = freed }

        deinit {
            freed.lock()
            Self.freedCount += 1
            freed.broadcast()
            freed.unlock()
        }

        func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            for index in buffer.indices {
                buffer[index] = UInt8(truncatingIfNeeded: position + index)
            }
            position += buffer.count
            return buffer.count
        }
    }

    /// A source that fails after `count` bytes.
    final class FailingSource: ByteSource {
        private var left: Int
        init(after count: Int) { left = count }
        func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            if left == 0 { throw EPFError.io(path: "test", call: "read", errno: EIO) }
            let count = min(left, buffer.count)
            for index in 0..<count { buffer[index] = 7 }
            left -= count
            return count
        }
    }

    static func readAll(_ source: ByteSource) throws -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1000)
        while true {
            let count = try chunk.withUnsafeMutableBytes { try source.read(into: $0) }
            if count == 0 { return bytes }
            bytes += chunk[..<count]
        }
    }

    @Test func bytesAndErrorsComeThroughInOrder() throws {
        let bytes = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("prefetch-\(UUID().uuidString)")
        try Data(bytes).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let source = PrefetchingSource(try FileByteSource(path: file.path), chunkSize: 4096, depth: 2)
        #expect(try Self.readAll(source) == bytes)

        let failing = PrefetchingSource(FailingSource(after: 10_000), chunkSize: 4096, depth: 3)
        var chunk = [UInt8](repeating: 0, count: 3000)
        var total = 0
        #expect(throws: EPFError.self) {
            while true {
                let count = try chunk.withUnsafeMutableBytes { try failing.read(into: $0) }
                total += count
            }
        }
        #expect(total == 10_000)
    }

    /// A reader that stops before the end (a table refused mid-load) drops the source: its thread must stop and
    /// free the inner source instead of waiting forever for buffers nobody will return.
    @Test func aReaderThatStopsEarlyFreesTheThreadAndItsSource() throws {
        let freed = NSCondition()
        freed.lock()
        let before = EndlessSource.freedCount
        freed.unlock()
        do {
            let source = PrefetchingSource(EndlessSource(freed: freed), chunkSize: 1024, depth: 2)
            var chunk = [UInt8](repeating: 0, count: 100)
            let count = try chunk.withUnsafeMutableBytes { try source.read(into: $0) }
            #expect(count == 100 && chunk[99] == 99)
            // Let the worker fill every buffer and wait for a free one.
            Thread.sleep(forTimeInterval: 0.05)
        }
        freed.lock()
        let deadline = Date().addingTimeInterval(10)
        while EndlessSource.freedCount == before && Date() < deadline {
            _ = freed.wait(until: deadline)
        }
        let after = EndlessSource.freedCount
        freed.unlock()
        #expect(after == before + 1, "the prefetch thread kept its inner source alive")
    }
}
