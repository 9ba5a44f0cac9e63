import EPFTestSupport
import Foundation
import Testing
@testable import EPFFormat

/// The fast validator against Swift's own strict UTF-8 decoding, on random and adversarial inputs, at every
/// alignment and with the damage at every position of a vector block.
@Suite struct UTF8ValidatorTests {
    /// Deterministic, so failures can be replayed.
    typealias Random = SeededGenerator

    /// Characters of every length and script, the edges of every range included.
    static let pieces: [[UInt8]] = [
        "a", "Z", "0", " ", "\n", "\u{01}", "\u{7f}", "é", "ß", "Ж", "\u{80}", "\u{7ff}", "\u{800}", "中", "日本",
        "\u{d7ff}", "\u{e000}", "\u{fffd}", "\u{ffff}", "😀", "\u{10000}", "\u{10ffff}", "ĀāĂă", "한국어",
    ].map { Array($0.utf8) }

    /// Byte sequences that are never valid, alone or as the start of a sequence.
    static let damage: [[UInt8]] = [
        [0x80], [0xbf], [0xc0, 0x80], [0xc1, 0xbf], [0xc2], [0xe0, 0x80, 0x80], [0xe0, 0x9f, 0xbf], [0xe1, 0x80],
        [0xed, 0xa0, 0x80], [0xed, 0xbf, 0xbf], [0xf0, 0x80, 0x80, 0x80], [0xf0, 0x8f, 0xbf, 0xbf],
        [0xf4, 0x90, 0x80, 0x80], [0xf5, 0x80, 0x80, 0x80], [0xf8], [0xfe], [0xff], [0xf0, 0x9f, 0x98],
        [0xc3, 0x28], [0xe2, 0x28, 0xa1], [0xe2, 0x82, 0x28], [0x00],
    ]

    static func reference(_ bytes: ArraySlice<UInt8>) -> (valid: Bool, clean: Bool) {
        let valid = String(validating: bytes, as: UTF8.self) != nil
        return (valid, valid && !bytes.contains(0))
    }

    /// Checks `bytes` placed at every offset 0..<16 of a buffer, with junk bytes around it that must not count.
    static func agree(_ bytes: [UInt8], _ note: @autoclosure () -> String = "") {
        let expected = reference(bytes[...])
        for alignment in 0..<16 {
            var buffer = [UInt8](repeating: 0xe0, count: alignment) + bytes + [0xf0, 0x80, 0xc2]
            buffer.withUnsafeMutableBytes { raw in
                let start = raw.baseAddress! + alignment
                let valid = UTF8Validator.isValid(start, count: bytes.count)
                let clean = UTF8Validator.isCleanText(start, count: bytes.count)
                #expect(valid == expected.valid, "isValid, alignment \(alignment) \(note()): \(bytes)")
                #expect(clean == expected.clean, "isCleanText, alignment \(alignment) \(note()): \(bytes)")
            }
        }
    }

    static func validText(length: Int, random: inout Random, asciiShare: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        while bytes.count < length {
            if random.below(100) < asciiShare {
                bytes.append(UInt8(0x20 + random.below(0x5f)))
            } else {
                bytes += pieces[random.below(pieces.count)]
            }
        }
        return bytes
    }

    @Test(arguments: [0, 30, 90, 100]) func randomValidTextAgrees(asciiShare: Int) {
        var random = Random(seed: UInt64(asciiShare) &+ 1)
        for length in [0, 1, 2, 3, 4, 5, 15, 16, 17, 31, 32, 33, 35, 47, 48, 63, 64, 65, 100, 257, 1000] {
            for _ in 0..<3 {
                let text = Self.validText(length: length, random: &random, asciiShare: asciiShare)
                Self.agree(text, "length \(length)")
            }
        }
    }

    @Test func damageAtEveryPositionOfABlockIsFound() {
        var random = Random(seed: 42)
        for share in [0, 50, 100] {
            let text = Self.validText(length: 80, random: &random, asciiShare: share)
            for bad in Self.damage {
                // Every insertion point in the first 70 bytes: all 16 positions of several blocks, and the edges
                // of the byte-by-byte prefix and of the final, overlapping block.
                for position in 0...70 where position <= text.count {
                    var bytes = text
                    bytes.insert(contentsOf: bad, at: position)
                    Self.agree(bytes, "damage \(bad) at \(position)")
                }
                // At the very end: a cut sequence.
                Self.agree(text + bad, "damage \(bad) at the end")
            }
        }
    }

    @Test func randomBytesAgree() {
        var random = Random(seed: 7)
        for _ in 0..<3000 {
            let length = random.below(80)
            var bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            // Mostly high bytes with a few continuation-shaped ones, so some inputs are valid by chance.
            if random.below(2) == 0 { bytes = bytes.map { $0 & 0x3f | 0x80 } }
            if random.below(3) == 0, !bytes.isEmpty { bytes[random.below(bytes.count)] = 0xe4 }
            Self.agree(bytes)
        }
        // Long valid text with one random byte changed, anywhere.
        for round in 0..<400 {
            var text = Self.validText(length: 200, random: &random, asciiShare: round % 2 == 0 ? 20 : 95)
            text[random.below(text.count)] = UInt8(truncatingIfNeeded: random.next())
            Self.agree(text)
        }
    }

    @Test func everyTwoByteCombinationAfterALeadAgrees() {
        // Each lead byte with every possible second byte, inside a run long enough for the vector path.
        let padding = [UInt8](repeating: 0x61, count: 40)
        for lead in [0xc2, 0xdf, 0xe0, 0xe1, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf4] as [UInt8] {
            for second in 0...255 {
                let tail: [UInt8] = lead >= 0xf0 ? [0x80, 0x80] : lead >= 0xe0 ? [0x80] : []
                Self.agree(padding + [lead, UInt8(second)] + tail + padding)
            }
        }
    }

    /// The validator must agree with the standard library's own UTF-8 validation on random and tricky bytes.
    @Test func agreesWithTheStandardLibrary() {
        var generator = SystemRandomNumberGenerator()
        let interesting: [UInt8] = [0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf,
                                    0xe0, 0xe1, 0xec, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xff]
        for round in 0..<20_000 {
            let length = Int.random(in: 0...40, using: &generator)
            var bytes: [UInt8] = (0..<length).map { _ in
                Bool.random(using: &generator) ? interesting.randomElement(using: &generator) ?? 0
                    : UInt8.random(in: 0x20...0x7e, using: &generator)
            }
            if round % 3 == 0 {
                bytes += Array("日本語 émoji 🎮".utf8).prefix(Int.random(in: 0...20, using: &generator))
            }
            let expected = String(validating: bytes, as: UTF8.self) != nil
            let actual = bytes.withUnsafeBytes { raw in
                UTF8Validator.isValid(raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1).unsafelyUnwrapped,
                                      count: raw.count)
            }
            #expect(actual == expected, "bytes \(bytes.map { String($0, radix: 16) })")
            if actual != expected { break }
        }
    }
}

/// Chunks the reading thread passes over unchecked are never reported clean, nor is a chunk after them that
/// starts inside a character.
@Suite struct ChunkValidationSkipTests {
    @Test func skippedChunksAndWhatFollowsThemAreNotKnownClean() {
        let tracker = ChunkValidation()
        let text = Array("abcdefgh".utf8)
        let split = Array("é".utf8) // 2 bytes: the first ends chunk 2, the second starts chunk 3
        let chunks: [[UInt8]] = [text, text + [split[0]], [split[1]] + text, text]
        for (index, chunk) in chunks.enumerated() {
            chunk.withUnsafeBytes { raw in
                if index == 1 {
                    tracker.skip(count: raw.count)
                } else {
                    tracker.analyze(raw.baseAddress!, count: raw.count)
                }
            }
        }
        #expect(tracker.isClean(start: 0, end: 8))
        #expect(!tracker.isClean(start: 8, end: 17))
        #expect(!tracker.isClean(start: 17, end: 26))
        #expect(tracker.isClean(start: 26, end: 34))
    }
}
