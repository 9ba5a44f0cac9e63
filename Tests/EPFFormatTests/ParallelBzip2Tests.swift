import Foundation
import Testing
import EPFTestSupport
@testable import EPFFormat

@Suite struct ParallelBzip2Tests {
    static let names = ["empty", "one block", "text -1", "text -9", "runs", "random", "multi-stream"]

    @Test(arguments: names, 1...4)
    func outputIsByteIdenticalToTheBzip2Tool(name: String, threads: Int) throws {
        let sample = Bzip2Samples.sample(name)
        #expect(!sample.compressed.isEmpty)
        let expected = try Bzip2Samples.bzip2Tool(sample.compressed)
        #expect(expected == sample.plain)
        let source = try Bzip2Decompression.source(MemoryByteSource(sample.compressed), path: "x.bz2",
                                                   threads: threads)
        let parallel = drain(source)
        #expect(parallel.error == nil, "\(String(describing: parallel.error))")
        #expect(parallel.bytes == expected)
        let serial = drain(try Bzip2ByteSource(MemoryByteSource(sample.compressed), path: "x.bz2"))
        #expect(serial.error == nil)
        #expect(serial.bytes == parallel.bytes)
    }

    @Test func manyBlocksReallyAreMany() throws {
        #expect(try boundaries(Bzip2Samples.sample("text -1").compressed).count > 12)
        let multi = try boundaries(Bzip2Samples.sample("multi-stream").compressed)
        #expect(multi.filter(\.isEnd).count == 5)
    }

    /// Tiny and odd-sized reads on both sides: compressed input a byte at a time, output into 1, 7 or 4093
    /// bytes per call, a scanner window of 64 bytes, and blocks larger than the output limit.
    @Test(arguments: [(1, 1, 64), (13, 7, 100), (4093, 4093, 1000), (1 << 20, 1, 1 << 20)])
    func smallReadsOnBothSidesGiveTheSameBytes(maximumRead: Int, chunk: Int, outputLimit: Int) throws {
        let text = Bzip2Samples.text(bytes: 120_000, seed: 5)
        let compressed = try Bzip2Samples.compress(text, level: 1) + Bzip2Samples.compress(text, level: 2)
        let source = parallelSource(compressed, threads: 3, maximumRead: maximumRead, readSize: 64,
                                    outputLimit: outputLimit)
        let result = drain(source, chunk: chunk)
        #expect(result.error == nil, "\(String(describing: result.error))")
        #expect(result.bytes == text + text)
    }

    @Test(arguments: [1, 1000, 1 << 16])
    func blocksLargerThanTheOutputLimitAreFinishedInOrder(outputLimit: Int) throws {
        for name in ["runs", "text -9"] {
            let sample = Bzip2Samples.sample(name)
            let result = drain(parallelSource(sample.compressed, threads: 2, outputLimit: outputLimit))
            #expect(result.error == nil)
            #expect(result.bytes == sample.plain, "\(name)")
        }
    }

    @Test(arguments: 2...4)
    func truncationIsAnErrorAtTheEndOfTheFileAfterEveryWholeBlock(threads: Int) throws {
        let sample = Bzip2Samples.sample("text -1")
        let compressed = sample.compressed
        let marks = try boundaries(compressed)
        let blockStart = Int(marks[3].bit / 8)
        #expect(marks[3].bit % 8 != 0)
        let cuts = [0, 3, 4, 10, 1000, blockStart, blockStart + 1, compressed.count / 2,
                    Int(marks[marks.count - 1].bit / 8) + 3, compressed.count - 3, compressed.count - 1]
        var wholeBlocks: [Int] = []
        for cut in cuts {
            let source = parallelSource(Array(compressed.prefix(cut)), threads: threads)
            let result = drain(source)
            let failure = bzip2Failure(result.error)
            #expect(failure?.message == "unexpected end of file (the archive is truncated)", "cut at \(cut)")
            #expect(failure?.offset == Int64(cut), "cut at \(cut)")
            #expect(sample.plain.starts(with: result.bytes), "cut at \(cut)")
            let serial = drain(try Bzip2ByteSource(MemoryByteSource(Array(compressed.prefix(cut))), path: "x"))
            #expect(bzip2Failure(serial.error)?.message == failure?.message, "cut at \(cut)")
            // The blocks wholly before the cut came out: those before the block cut short, as the serial decoder
            // gives them, and when the cut falls in the next magic, the block before it too.
            if cut == blockStart {
                #expect(result.bytes.count > 0 && result.bytes.count == serial.bytes.count)
                wholeBlocks.append(result.bytes.count)
            }
            if cut == blockStart + 1 { wholeBlocks.append(result.bytes.count) }
        }
        #expect(wholeBlocks.count == 2 && wholeBlocks[0] < wholeBlocks[1])
    }

    @Test(arguments: 2...4)
    func aCorruptByteIsADataErrorInsideItsBlockAfterTheBlocksBefore(threads: Int) throws {
        let sample = Bzip2Samples.sample("text -1")
        let marks = try boundaries(sample.compressed)
        for index in [1, 4, marks.count - 2] {
            let (start, end) = (marks[index].bit / 8, marks[index + 1].bit / 8)
            for target in [start + 6, (start + end) / 2, end - 2] {
                var corrupt = sample.compressed
                corrupt[Int(target)] ^= 0x55
                let result = drain(parallelSource(corrupt, threads: threads))
                let failure = bzip2Failure(result.error)
                #expect(failure?.message.contains("data integrity error") == true, "byte \(target)")
                let offset = failure?.offset ?? -1
                #expect((start...end + 8).contains(offset), "byte \(target): offset \(offset)")
                #expect(sample.plain.starts(with: result.bytes))
                // Every block before the damaged one was delivered.
                let cut = Int((marks[index].bit + 7) / 8)
                let before = drain(parallelSource(Array(sample.compressed.prefix(cut)), threads: threads))
                #expect(result.bytes.count == before.bytes.count, "byte \(target)")
            }
        }
    }

    @Test func aWrongStreamCRCIsAnErrorAfterAllTheStreamsBlocks() throws {
        let sample = Bzip2Samples.sample("text -9")
        var corrupt = sample.compressed
        corrupt[corrupt.count - 2] ^= 0x01
        let result = drain(parallelSource(corrupt, threads: 2))
        let failure = bzip2Failure(result.error)
        #expect(failure?.message.hasPrefix("stream CRC mismatch") == true)
        let end = try boundaries(sample.compressed).last?.bit ?? 0
        #expect(failure?.offset == end / 8)
        #expect(result.bytes == sample.plain)
    }

    @Test func garbageIsRefusedWithAnOffset() throws {
        let random = Bzip2Samples.random(bytes: 100_000, seed: 9)
        let notBzip2 = bzip2Failure(drain(parallelSource(random, threads: 2)).error)
        #expect(notBzip2?.message == "not bzip2 data (BZ_DATA_ERROR_MAGIC)")
        #expect(notBzip2?.offset == 0)

        let headerThenNoise = bzip2Failure(drain(parallelSource(Array("BZh9".utf8) + random, threads: 2)).error)
        #expect(headerThenNoise?.offset == 4)

        let sample = Bzip2Samples.sample("one block")
        let trailing = drain(parallelSource(sample.compressed + Array("trailing junk".utf8), threads: 2))
        #expect(trailing.bytes == sample.plain)
        #expect(bzip2Failure(trailing.error)?.offset == Int64(sample.compressed.count))
    }

    /// A block magic can occur by chance inside compressed data. Such positions are injected into the scanner's
    /// output (block and end-of-stream kinds, mid-block, a bit before and after true boundaries, inside a
    /// stream's trailer) and the output must not change; the merge counter proves the merge path ran.
    @Test(arguments: 2...4)
    func falseBoundariesAreMergedAway(threads: Int) throws {
        let sample = Bzip2Samples.sample("multi-stream")
        let marks = try boundaries(sample.compressed)
        let blocks = marks.filter { !$0.isEnd }
        let ends = marks.filter(\.isEnd)
        let middle = { (index: Int) -> Int64 in (marks[index].bit + marks[index + 1].bit) / 2 }
        var fake: [(bit: Int64, isEnd: Bool)] = [
            (middle(1), false), (middle(1) + 1001, false), (middle(3), true),
            (blocks[5].bit - 1, false), (blocks[6].bit + 1, false), (blocks[7].bit + 47, true),
            (ends[0].bit + 50, false), (ends[0].bit + 90, true),
        ]
        fake.append((marks[marks.count - 2].bit + 100, false))
        fake.append((ends[ends.count - 1].bit + 60, false))
        let source = parallelSource(sample.compressed, threads: threads, readSize: 4096, inject: fake)
        let result = drain(source)
        #expect(result.error == nil, "\(String(describing: result.error))")
        #expect(result.bytes == sample.plain)
        #expect(source.mergedSpans >= 6)
    }

    /// Many lookalikes in one block still decode up to a bound; past it (a crafted file), a clear error instead of
    /// work that grows with the square of their number.
    @Test func manyFalseBoundariesInOneBlockAreBounded() throws {
        let sample = Bzip2Samples.sample("text -1")
        let marks = try boundaries(sample.compressed)
        let (start, end) = (marks[2].bit + 200, marks[3].bit - 200)
        func lookalikes(_ count: Int) -> [(bit: Int64, isEnd: Bool)] {
            (0..<count).map { (start + (end - start) * Int64($0) / Int64(count), $0 % 5 == 4) }
        }
        let some = parallelSource(sample.compressed, threads: 2, inject: lookalikes(20))
        let decoded = drain(some)
        #expect(decoded.error == nil)
        #expect(decoded.bytes == sample.plain)
        #expect(some.mergedSpans == 20)
        let tooMany = drain(parallelSource(sample.compressed, threads: 2,
                                           inject: lookalikes(ParallelBzip2ByteSource.maximumMerges + 5)))
        let failure = bzip2Failure(tooMany.error)
        #expect(failure?.message.contains("lookalikes") == true)
        #expect(failure?.offset == marks[2].bit / 8)
        #expect(sample.plain.starts(with: tooMany.bytes))
    }

    @Test func aFalseBoundaryBeforeACorruptBlockStillReportsTheCorruption() throws {
        let sample = Bzip2Samples.sample("text -1")
        let marks = try boundaries(sample.compressed)
        var corrupt = sample.compressed
        let (start, end) = (marks[2].bit / 8, marks[3].bit / 8)
        corrupt[Int((start + end) / 2)] ^= 0x10
        let fake: [(bit: Int64, isEnd: Bool)] = [((marks[2].bit + marks[3].bit) / 2 - 800, false)]
        let result = drain(parallelSource(corrupt, threads: 2, inject: fake))
        let failure = bzip2Failure(result.error)
        #expect(failure?.message.contains("data integrity error") == true)
        #expect((start...end + 8).contains(failure?.offset ?? -1))
    }

    /// The scanner finds every magic at every bit shift, across read boundaries, exactly as a bit-by-bit search.
    @Test(arguments: [64, 100, 4096])
    func theScannerFindsEveryMagicLikeABitByBitSearch(readSize: Int) throws {
        var bytes = Array("BZh9".utf8) + Bzip2Samples.random(bytes: 20_000, seed: 3)
        var planted: [Int] = []
        var position = 40
        while position < bytes.count * 8 - 200 {
            planted.append(position)
            position += 97 + (position % 61)
        }
        bytes += [UInt8](repeating: 0, count: 16)
        bytes.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress else { return }
            for (index, bit) in planted.enumerated() {
                let magic = index % 3 == 0 ? Bzip2Bits.endMagic : Bzip2Bits.blockMagic
                for offset in 0..<48 {
                    let value = (magic >> UInt64(47 - offset)) & 1
                    let at = bit + offset
                    let byte = base.load(fromByteOffset: at / 8, as: UInt8.self)
                    let mask = UInt8(0x80) >> UInt8(at % 8)
                    base.storeBytes(of: value == 1 ? byte | mask : byte & ~mask, toByteOffset: at / 8, as: UInt8.self)
                }
            }
        }
        bytes.removeLast(16)
        var naive: [(Int64, Bool)] = []
        bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            let padded = UnsafeMutableRawPointer.allocate(byteCount: raw.count + 16, alignment: 8)
            defer { padded.deallocate() }
            padded.initializeMemory(as: UInt8.self, repeating: 0, count: raw.count + 16)
            padded.copyMemory(from: base, byteCount: raw.count)
            for bit in 0...(raw.count * 8 - 48) {
                let value = Bzip2Bits.bits(padded, bit: bit, count: 48)
                if value == Bzip2Bits.blockMagic { naive.append((Int64(bit), false)) }
                if value == Bzip2Bits.endMagic { naive.append((Int64(bit), true)) }
            }
        }
        #expect(naive.count >= planted.count)
        let scanner = Bzip2BlockScanner(MemoryByteSource(bytes, maximumRead: 777), readSize: readSize)
        var found: [(Int64, Bool)] = []
        while let span = try scanner.next() {
            if span.kind != .start { found.append((span.startBit, span.kind == .end)) }
        }
        #expect(found.map(\.0) == naive.map(\.0))
        #expect(found.map(\.1) == naive.map(\.1))
    }
}
