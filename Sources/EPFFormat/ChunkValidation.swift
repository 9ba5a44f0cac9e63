import EPFConcurrency
import Foundation

/// UTF-8 and NUL checks done ahead, chunk by chunk, on the thread that reads the file, so the parsing thread can
/// skip them for records that lie wholly in clean chunks.
///
/// A chunk is clean when all its bytes are well-formed UTF-8 (sequences across chunk boundaries included) and
/// none is NUL. Records touching a chunk that is not clean are checked one by one as before, so reports stay
/// exact; this only moves the common case off the critical path.
package final class ChunkValidation: Sendable {
    /// The regions in stream order, each covering the bytes up to `end`, and where the consumer's unread ones start.
    private struct Regions {
        var list: [(end: Int64, clean: Bool)] = []
        var first = 0
        var firstStart: Int64 = 0
    }

    /// What the producer carries from one chunk to the next: a sequence cut at the chunk's end, the bytes so far.
    /// Only the reading thread takes its lock, once per chunk.
    private struct Produced {
        var carry: [UInt8] = []
        var bytes: Int64 = 0
    }

    private let regions = Mutex(Regions())
    private let produced = Mutex(Produced())

    /// A fresh tracker for one stream.
    package init() {}

    /// Producer side: checks the next chunk of the stream.
    func analyze(_ base: UnsafeRawPointer, count: Int) {
        let (end, clean) = produced.withLock { produced in
            let clean = UTF8Validator.chunkIsClean(base, count: count, carry: &produced.carry)
            produced.bytes += Int64(count)
            return (produced.bytes, clean)
        }
        regions.withLock { $0.list.append((end, clean)) }
    }

    /// Producer side: passes over the next chunk unchecked; its records are checked one by one by the consumer.
    func skip(count: Int) {
        // A sequence cut at the end of the previous chunk is not followed up: the next checked chunk then starts
        // with continuation bytes and is (conservatively) not clean.
        let end = produced.withLock { produced in
            produced.carry = []
            produced.bytes += Int64(count)
            return produced.bytes
        }
        regions.withLock { $0.list.append((end, false)) }
    }

    /// Consumer side: whether the stream bytes `start..<end` are known clean. Queries must come in increasing
    /// order of `start`.
    func isClean(start: Int64, end: Int64) -> Bool { cleanEnd(start: start, end: end) != nil }

    /// Consumer side: where the clean regions that cover `start..<end` end (so the records up to there need no
    /// further question, `Cursor`), nil when the bytes are not known clean. Queries must come in increasing order
    /// of `start`.
    func cleanEnd(start: Int64, end: Int64) -> Int64? {
        regions.withLock { regions in
            // Forget regions that end before this record.
            while regions.first < regions.list.count && regions.list[regions.first].end <= start {
                regions.firstStart = regions.list[regions.first].end
                regions.first += 1
            }
            if regions.first > 4096 {
                regions.list.removeFirst(regions.first)
                regions.first = 0
            }
            var index = regions.first
            var regionStart = regions.firstStart
            while index < regions.list.count {
                let region = regions.list[index]
                // This region holds the bytes regionStart..<region.end.
                if region.end > start && regionStart < end && !region.clean { return nil }
                // Every region from this record's start to the end of the last one it touches is clean.
                if region.end >= end { return region.end }
                regionStart = region.end
                index += 1
            }
            return nil
        }
    }

    /// The consumer's own memory of a span known clean, so that most records are answered without the lock:
    /// kept by the parsing thread (a local of its loop), never shared.
    struct Cursor {
        private var knownCleanStart: Int64 = 0
        private var knownCleanEnd: Int64 = 0

        /// Whether the stream bytes `start..<end` are known clean; queries in increasing order of `start`.
        @inline(__always)
        mutating func isClean(_ validation: ChunkValidation, start: Int64, end: Int64) -> Bool {
            if start >= knownCleanStart && end <= knownCleanEnd { return true }
            guard let cleanUpTo = validation.cleanEnd(start: start, end: end) else { return false }
            knownCleanStart = start
            knownCleanEnd = cleanUpTo
            return true
        }
    }
}

extension UTF8Validator {
    /// The length of the sequence a lead byte starts (1 for ASCII and for bytes that cannot start one).
    @inline(__always)
    static func sequenceLength(_ lead: UInt8) -> Int {
        switch lead {
        case 0xc2...0xdf: return 2
        case 0xe0...0xef: return 3
        case 0xf0...0xf4: return 4
        default: return 1
        }
    }

    /// Checks one chunk of a stream: valid UTF-8 and no NUL, carrying an incomplete final sequence into the next
    /// chunk's check. False means "not known clean" (the caller falls back to exact per-record checks).
    static func chunkIsClean(_ base: UnsafeRawPointer, count: Int, carry: inout [UInt8]) -> Bool {
        var start = 0
        var clean = true
        if !carry.isEmpty {
            let length = sequenceLength(carry[0])
            let needed = max(0, length - carry.count)
            let take = min(needed, count)
            var sequence = carry
            sequence += UnsafeRawBufferPointer(start: base, count: take)
            carry = []
            if sequence.count < length {
                carry = sequence
                return false
            }
            clean = sequence.withUnsafeBytes { raw in
                raw.baseAddress.map { isValid($0, count: raw.count) } ?? false
            }
            start = take
        }
        // Leave an incomplete final sequence for the next chunk.
        var tailStart = count
        var back = 1
        while back <= 3 && count - back >= start {
            let byte = base.load(fromByteOffset: count - back, as: UInt8.self)
            if byte < 0x80 { break }
            if byte >= 0xc0 {
                if sequenceLength(byte) > back { tailStart = count - back }
                break
            }
            back += 1
        }
        if tailStart > start {
            clean = clean && isCleanText(base + start, count: tailStart - start)
        }
        if clean && tailStart < count && memchr(base + tailStart, 0, count - tailStart) != nil { clean = false }
        if tailStart < count {
            carry = Array(UnsafeRawBufferPointer(start: base + tailStart, count: count - tailStart))
        }
        return clean
    }
}
