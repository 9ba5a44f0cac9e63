import Foundation
import Testing
import EPFTestSupport
@testable import EPFFormat

/// Inputs for the bzip2 decoder tests, compressed once with the `bzip2` tool and shared by the tests.
enum Bzip2Samples {
    /// Deterministic text: words, numbers, EPF-like separators, a few long runs.
    static func text(bytes: Int, seed: UInt64) -> [UInt8] {
        var state = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        let words = (0..<3000).map { _ in
            (0..<(2 + Int(next() % 9))).map { _ in UInt8(ascii: "a") + UInt8(next() % 26) }
        }
        var result: [UInt8] = []
        result.reserveCapacity(bytes + 64)
        while result.count < bytes {
            for _ in 0..<(3 + Int(next() % 12)) {
                result += words[Int(next() % UInt64(words.count))]
                result.append(next() % 7 == 0 ? 0x01 : 0x20)
            }
            result += Array("\(next())".utf8)
            if next() % 50 == 0 { result += [UInt8](repeating: UInt8(ascii: "="), count: Int(next() % 300)) }
            result += [0x02, 0x0A]
        }
        return Array(result.prefix(bytes))
    }

    /// Pseudo-random bytes that bzip2 cannot compress.
    static func random(bytes: Int, seed: UInt64) -> [UInt8] {
        var state = seed | 1
        return (0..<bytes).map { _ in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return UInt8(truncatingIfNeeded: state >> 24)
        }
    }

    /// `bytes` compressed by the `bzip2` tool at `level`.
    static func compress(_ bytes: [UInt8], level: Int) throws -> [UInt8] {
        let directory = try TemporaryDirectory(prefix: "epf-bz2")
        try directory.write("input", bytes)
        let status = try shell(["bzip2", "-\(level)", "-k", "-f", "input"], in: directory.path)
        #expect(status == 0)
        return try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory.file("input.bz2"))))
    }

    /// What `bzip2 -dc` makes of `compressed`.
    static func bzip2Tool(_ compressed: [UInt8]) throws -> [UInt8] {
        let directory = try TemporaryDirectory(prefix: "epf-bz2")
        try directory.write("input.bz2", compressed)
        let status = try shell(["sh", "-c", "bzip2 -dc input.bz2 > output"], in: directory.path)
        #expect(status == 0)
        return try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory.file("output"))))
    }

    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var compressed: [UInt8]
        var plain: [UInt8]
        var description: String { name }
    }

    /// One sample per shape the decoder must handle, made once.
    static let cases: [Case] = {
        do {
            let text = Self.text(bytes: 1_500_000, seed: 1)
            let random = Self.random(bytes: 400_000, seed: 2)
            var runs = [UInt8](repeating: 0, count: 3_000_000)
            runs += Array("a break in the run".utf8)
            runs += [UInt8](repeating: UInt8(ascii: "x"), count: 2_000_000)
            let small = Array("one small block\n".utf8)
            var result: [Case] = []
            result.append(Case(name: "empty", compressed: try compress([], level: 9), plain: []))
            result.append(Case(name: "one block", compressed: try compress(small, level: 9), plain: small))
            let level1 = try compress(text, level: 1)
            result.append(Case(name: "text -1", compressed: level1, plain: text))
            let level9 = try compress(text, level: 9)
            result.append(Case(name: "text -9", compressed: level9, plain: text))
            result.append(Case(name: "runs", compressed: try compress(runs, level: 9), plain: runs))
            let noisy = try compress(random, level: 5)
            result.append(Case(name: "random", compressed: noisy, plain: random))
            let empty = try compress([], level: 3)
            result.append(Case(name: "multi-stream", compressed: level1 + empty + noisy + level9 + empty,
                               plain: text + random + text))
            return result
        } catch {
            Issue.record("cannot prepare bzip2 samples: \(error)")
            return []
        }
    }()

    static func sample(_ name: String) -> Case {
        cases.first { $0.name == name } ?? Case(name: name, compressed: [], plain: [])
    }
}

/// Reads a whole source with reads of `chunk` bytes; returns what came out before any error, and the error.
func drain(_ source: ByteSource, chunk: Int = 1 << 16) -> (bytes: [UInt8], error: Error?) {
    var result: [UInt8] = []
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
    defer { buffer.deallocate() }
    do {
        while true {
            let count = try source.read(into: buffer)
            if count == 0 { return (result, nil) }
            result += buffer[0..<count]
        }
    } catch {
        return (result, error)
    }
}

/// A parallel decoder over in-memory bytes, with test-sized knobs.
func parallelSource(_ compressed: [UInt8], threads: Int, maximumRead: Int = .max, readSize: Int = 1 << 16,
                    outputLimit: Int = 4 << 20, inject: [(bit: Int64, isEnd: Bool)] = [])
    -> ParallelBzip2ByteSource {
    ParallelBzip2ByteSource(MemoryByteSource(compressed, maximumRead: maximumRead), path: "test.bz2",
                            threads: threads, readSize: readSize, outputLimit: outputLimit,
                            injectedCandidates: inject)
}

/// The true block boundaries of a valid file (bit offsets of every block and end-of-stream magic), from the
/// scanner, so tests can aim at them.
func boundaries(_ compressed: [UInt8]) throws -> [(bit: Int64, isEnd: Bool)] {
    let scanner = Bzip2BlockScanner(MemoryByteSource(compressed))
    var result: [(bit: Int64, isEnd: Bool)] = []
    while let span = try scanner.next() {
        if span.kind != .start { result.append((span.startBit, span.kind == .end)) }
    }
    return result
}

/// The message and offset of a bzip2 error, or nil for any other outcome.
func bzip2Failure(_ error: Error?) -> (message: String, offset: Int64)? {
    guard let error = error as? EPFError, case .bzip2(_, let message, let offset) = error else { return nil }
    return (message, offset)
}
