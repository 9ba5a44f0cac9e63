import Foundation
#if arch(x86_64)
import _Builtin_intrinsics.intel
#endif

/// Strict UTF-8 validation of raw bytes: rejects stray continuation bytes, overlongs (C0, C1, E0 80..9F,
/// F0 80..8F), surrogates (ED A0..BF), code points above U+10FFFF (F4 90.., F5..FF) and sequences cut by the
/// end of the input. `isCleanText` also rejects NUL bytes, in the same pass.
///
/// Long inputs are checked 64 bytes at a time with 16-byte SIMD vectors: 64 ASCII bytes cost one test (and one
/// more for NUL); otherwise each 16-byte block is checked whole, without branching per byte, by comparing each
/// byte with the three before it (unaligned loads at offsets -1, -2, -3): a byte must be a continuation exactly
/// when one of those starts a sequence long enough to reach it, and the second byte of E0, ED, F0 and F4
/// sequences has a narrower range. Short inputs, and the first bytes of long ones, take a byte-by-byte path
/// (8 ASCII bytes at a time). The answer is exactly that of a byte-by-byte validator; callers that need to
/// know which byte is wrong check the (rare) failing input again byte by byte.
package enum UTF8Validator {
    typealias Block = SIMD16<UInt8>

    /// True when every byte sequence is well-formed UTF-8 (NUL is valid UTF-8).
    @inline(__always)
    package static func isValid(_ start: UnsafeRawPointer, count: Int) -> Bool {
        check(start, count: count, rejectNUL: false)
    }

    /// True when the bytes are well-formed UTF-8 and none is NUL: the checks of a clean EPF record in one pass.
    @inline(__always)
    package static func isCleanText(_ start: UnsafeRawPointer, count: Int) -> Bool {
        check(start, count: count, rejectNUL: true)
    }

    /// Inputs shorter than this take the byte-by-byte path.
    static let vectorThreshold = 32

    @inline(__always)
    static func check(_ start: UnsafeRawPointer, count: Int, rejectNUL: Bool) -> Bool {
        if count < vectorThreshold {
            return scalarPrefix(start, count: count, stopAfter: count, rejectNUL: rejectNUL) != nil
        }
        // Byte by byte up to the first sequence boundary at or after byte 3, so that every vector block has
        // three bytes before it in memory, all belonging to complete sequences or to the block's own.
        guard let first = scalarPrefix(start, count: count, stopAfter: 3, rejectNUL: rejectNUL) else { return false }
        var index = first
        var previousWasASCII = true
        // 64 bytes at a time: all ASCII (one test, and one for NUL), or all four blocks checked in full without
        // a branch per block, so mixed text does not mispredict at every change of script.
        while index &+ 64 <= count {
            let block0 = start.loadUnaligned(fromByteOffset: index, as: Block.self)
            let block1 = start.loadUnaligned(fromByteOffset: index &+ 16, as: Block.self)
            let block2 = start.loadUnaligned(fromByteOffset: index &+ 32, as: Block.self)
            let block3 = start.loadUnaligned(fromByteOffset: index &+ 48, as: Block.self)
            if highBitsClear(block0 | block1 | block2 | block3)
                && (previousWasASCII || !needsContinuation(start, before: index)) {
                // ASCII bytes are 0 exactly when adding 0x7f leaves the high bit clear.
                if rejectNUL
                    && !highBitsClear(~((block0 &+ 0x7f) & (block1 &+ 0x7f) & (block2 &+ 0x7f) & (block3 &+ 0x7f))) {
                    return false
                }
                previousWasASCII = true
            } else {
                let bad = problems(start, at: index, block0, rejectNUL: rejectNUL)
                    | problems(start, at: index &+ 16, block1, rejectNUL: rejectNUL)
                    | problems(start, at: index &+ 32, block2, rejectNUL: rejectNUL)
                    | problems(start, at: index &+ 48, block3, rejectNUL: rejectNUL)
                if !highBitsClear(bad) { return false }
                previousWasASCII = false
            }
            index &+= 64
        }
        while index &+ 16 <= count {
            let block = start.loadUnaligned(fromByteOffset: index, as: Block.self)
            if !highBitsClear(problems(start, at: index, block, rejectNUL: rejectNUL)) { return false }
            index &+= 16
        }
        if index < count {
            // The last, partial block: check the final 16 bytes again (rechecking bytes is harmless).
            let last = count &- 16
            let block = start.loadUnaligned(fromByteOffset: last, as: Block.self)
            if !highBitsClear(problems(start, at: last, block, rejectNUL: rejectNUL)) { return false }
        }
        // A sequence cut by the end of the input.
        return !needsContinuation(start, before: count)
    }

    /// True when one of the three bytes before `index` starts a sequence that reaches `index` or beyond.
    @inline(__always)
    static func needsContinuation(_ start: UnsafeRawPointer, before index: Int) -> Bool {
        start.load(fromByteOffset: index &- 1, as: UInt8.self) >= 0xc0
            || start.load(fromByteOffset: index &- 2, as: UInt8.self) >= 0xe0
            || start.load(fromByteOffset: index &- 3, as: UInt8.self) >= 0xf0
    }

    /// True when no byte of `block` has its high bit set.
    @inline(__always)
    static func highBitsClear(_ block: Block) -> Bool {
        #if arch(x86_64)
        return _mm_movemask_epi8(vector(block)) == 0
        #else
        let words = unsafeBitCast(block & 0x80, to: SIMD2<UInt64>.self)
        return words[0] | words[1] == 0
        #endif
    }

    // The block checks below are written with lane-wise `&`, `|`, `^` and wrapping `&+` only, which compile to
    // single SSE/NEON instructions (the comparison operators and masks of Swift's SIMD types do not, here), and,
    // on x86-64, SSE2's byte comparison (part of every x86-64 CPU), which replaces four of them.
    // Each predicate leaves its answer in the high bit of every byte; other bits are don't-care.

    #if arch(x86_64)
    @inline(__always)
    static func vector(_ block: Block) -> __m128i { unsafeBitCast(block, to: __m128i.self) }
    #endif

    /// High bit set in the bytes that are 0 (exact: no carry crosses lanes).
    @inline(__always)
    static func isZero(_ block: Block) -> Block {
        #if arch(x86_64)
        return unsafeBitCast(_mm_cmpeq_epi8(vector(block), _mm_setzero_si128()), to: Block.self)
        #else
        return ~(((block & 0x7f) &+ 0x7f) | block)
        #endif
    }

    /// High bit set in the bytes that are at least `value` (itself at least 0x80).
    @inline(__always)
    static func atLeast(_ block: Block, _ value: UInt8) -> Block {
        #if arch(x86_64)
        let bytes = vector(block)
        return unsafeBitCast(_mm_cmpeq_epi8(_mm_max_epu8(bytes, vector(Block(repeating: value))), bytes),
                             to: Block.self)
        #else
        // x >= c is the high bit of x & ((x & 0x7f) + 0x100 - c).
        return block & ((block & 0x7f) &+ Block(repeating: 0 &- value))
        #endif
    }

    /// High bit set in the bytes equal to `value`.
    @inline(__always)
    static func equal(_ block: Block, _ value: UInt8) -> Block {
        #if arch(x86_64)
        return unsafeBitCast(_mm_cmpeq_epi8(vector(block), vector(Block(repeating: value))), to: Block.self)
        #else
        return isZero(block ^ Block(repeating: value))
        #endif
    }

    /// The problems of the 16 bytes at `index` (which must be at least 3), checked against each other and the 3
    /// bytes before: high bit set in each byte that is invalid where it stands.
    @inline(__always)
    static func problems(_ start: UnsafeRawPointer, at index: Int, _ block: Block, rejectNUL: Bool) -> Block {
        let previous1 = start.loadUnaligned(fromByteOffset: index &- 1, as: Block.self)
        let previous2 = start.loadUnaligned(fromByteOffset: index &- 2, as: Block.self)
        let previous3 = start.loadUnaligned(fromByteOffset: index &- 3, as: Block.self)
        // Bits 6, 5 and 4 moved up to the high bit (lane-wise doubling: no bit crosses into the next byte).
        let block6 = block &+ block
        let block5 = block6 &+ block6
        let block4 = block5 &+ block5
        let previous1Bit6 = previous1 &+ previous1
        // A continuation is 10xxxxxx; one is required after a lead C0+ at -1, E0+ at -2 or F0+ at -3.
        let isContinuation = block & ~block6
        let mustContinue = atLeast(previous1, 0xc0) | atLeast(previous2, 0xe0) | atLeast(previous3, 0xf0)
        var bad = isContinuation ^ mustContinue
        // Bytes that never occur: F5..FF and C0, C1.
        bad |= atLeast(block, 0xf5)
        bad |= equal(block & 0xfe, 0xc0)
        // Second bytes with a narrower range (a continuation is 10xxxxxx, so bits 5 and 4 decide):
        // after E0 A0..BF (bit 5 set), F0 90..BF (bit 5 or 4), ED 80..9F (bit 5 clear), F4 80..8F (neither).
        // E0 and F0 differ only in bit 4, which is also the bit that F0 accepts.
        let previous1Bit5 = previous1Bit6 &+ previous1Bit6
        let previous1Bit4 = previous1Bit5 &+ previous1Bit5
        bad |= equal(previous1 & 0xef, 0xe0) & ~(block5 | block4 & previous1Bit4)
        bad |= equal(previous1, 0xed) & block5 | equal(previous1, 0xf4) & (block5 | block4)
        if rejectNUL { bad |= isZero(block) }
        return bad & 0x80
    }

    /// Validates byte by byte from the start until at least `stopAfter` bytes are done (ending on a sequence
    /// boundary) or the input ends. Returns where it stopped, or nil at the first invalid sequence (or NUL when
    /// `rejectNUL`). ASCII runs go 8 bytes at a time.
    @inline(__always)
    static func scalarPrefix(_ start: UnsafeRawPointer, count: Int, stopAfter: Int, rejectNUL: Bool) -> Int? {
        var index = 0
        while index < stopAfter {
            while index &+ 8 <= count {
                let word = start.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                if word & 0x8080_8080_8080_8080 != 0 { break }
                if rejectNUL && (word &- 0x0101_0101_0101_0101) & ~word & 0x8080_8080_8080_8080 != 0 {
                    return nil
                }
                index &+= 8
            }
            guard index < count else { return index }
            let byte = start.load(fromByteOffset: index, as: UInt8.self)
            if byte < 0x80 {
                if rejectNUL && byte == 0 { return nil }
                index &+= 1
                continue
            }
            let left = count &- index
            if byte >= 0xc2 && byte <= 0xdf {
                guard left >= 2, start.load(fromByteOffset: index &+ 1, as: UInt8.self) & 0xc0 == 0x80 else {
                    return nil
                }
                index &+= 2
            } else if byte >= 0xe0 && byte <= 0xef {
                guard left >= 3 else { return nil }
                let second = start.load(fromByteOffset: index &+ 1, as: UInt8.self)
                let third = start.load(fromByteOffset: index &+ 2, as: UInt8.self)
                guard second & 0xc0 == 0x80, third & 0xc0 == 0x80 else { return nil }
                // No overlongs (E0 80..9F) and no surrogates (ED A0..BF).
                if byte == 0xe0 && second < 0xa0 { return nil }
                if byte == 0xed && second > 0x9f { return nil }
                index &+= 3
            } else if byte >= 0xf0 && byte <= 0xf4 {
                guard left >= 4 else { return nil }
                let second = start.load(fromByteOffset: index &+ 1, as: UInt8.self)
                let third = start.load(fromByteOffset: index &+ 2, as: UInt8.self)
                let fourth = start.load(fromByteOffset: index &+ 3, as: UInt8.self)
                guard second & 0xc0 == 0x80, third & 0xc0 == 0x80, fourth & 0xc0 == 0x80 else { return nil }
                // No overlongs (F0 80..8F) and nothing above U+10FFFF (F4 90..BF).
                if byte == 0xf0 && second < 0x90 { return nil }
                if byte == 0xf4 && second > 0x8f { return nil }
                index &+= 4
            } else {
                return nil
            }
        }
        return index
    }
}
