import Foundation

/// Reads a compressed bzip2 file in chunks and cuts it, at every bit offset where a block or end-of-stream magic
/// occurs, into spans that the parallel decoder decodes independently.
///
/// A magic can also occur by chance inside compressed data; the scanner does not judge, it reports every
/// candidate and the decoder merges spans whose decoding shows the boundary was false. Memory is bounded: the
/// window holds the span being cut plus one read; a span longer than any encoder writes ends the scan with a
/// `tooLong` span, which the decoder reports as an error.
final class Bzip2BlockScanner {
    /// One piece of the compressed file, between two candidate boundaries.
    struct Span {
        enum Kind {
            /// The file's first header (not a candidate; always first, `bitCount` 0).
            case start
            /// Starts with the block magic.
            case block
            /// Starts with the end-of-stream magic.
            case end
        }
        var kind: Kind
        /// Absolute bit offset in the compressed file.
        var startBit: Int64
        /// Bits up to the next candidate (or the end of the input).
        var bitCount: Int
        /// The span runs to the end of the input rather than to another candidate.
        var endsAtInputEnd: Bool
        /// The span is longer than any block and was cut; its bits are not kept.
        var tooLong: Bool
        /// The stream level the scanner believes applies (from the last header it saw).
        var level: Int
        /// The span as a standalone stream (nil for `start` and `tooLong`).
        var buffer: Bzip2SpanBuffer?
        /// For `start` and `end`: what follows the header or the end-of-stream magic.
        var trailer: Trailer?

        var endBit: Int64 { startBit + Int64(bitCount) }
    }

    /// What comes after an end-of-stream magic (its CRC, padding, then the next stream or the end).
    struct Trailer {
        /// The stored combined CRC; nil when the input ends before it.
        var storedCRC: UInt32?
        var following: Following
    }

    enum Following: Equatable {
        /// The input ends right after the padding.
        case endOfInput
        /// Another stream starts at `byte` with this level.
        case header(level: Int, byte: Int64)
        /// The input ends inside the CRC or the next header.
        case truncated
        /// Bytes at `byte` that are not a bzip2 header.
        case garbage(byte: Int64)
    }

    private let inner: ByteSource
    private let readSize: Int
    private let maximumSpanBytes = Bzip2Bits.maximumBlockBytes(level: 9)
    private var window: UnsafeMutableRawPointer
    private var capacity: Int
    /// Absolute offset of `window[0]`, always a multiple of 8 so probe positions keep their alignment.
    private var windowStart: Int64 = 0
    private var validBytes = 0
    private var inputEnded = false
    private var finished = false
    private var startEmitted = false
    /// Next probe position, relative to the window, a multiple of 4.
    private var probe = 0
    /// Candidates found and not yet emitted, absolute bits; the first is the open span's start.
    private var candidates: [(bit: Int64, kind: UInt8)] = []
    private var found: [(bit: Int, kind: UInt8)] = []
    /// Test hook: positions treated as candidates although no magic is there, to exercise false boundaries.
    private var injected: [(bit: Int64, kind: UInt8)]
    private var level = 9
    /// Compressed bytes read so far.
    private(set) var totalBytes: Int64 = 0

    /// Scans `inner`, reading `readSize` bytes at a time. `injectedCandidates` (tests only) adds false boundaries.
    init(_ inner: ByteSource, readSize: Int = 1 << 20, injectedCandidates: [(bit: Int64, isEnd: Bool)] = []) {
        self.inner = inner
        self.readSize = max(64, readSize)
        capacity = self.readSize * 2
        window = UnsafeMutableRawPointer.allocate(byteCount: capacity + 32, alignment: 16)
        window.initializeMemory(as: UInt8.self, repeating: 0, count: capacity + 32)
        injected = injectedCandidates.sorted { $0.bit < $1.bit }.map { ($0.bit, $0.isEnd ? 1 : 0) }
    }

    deinit {
        window.deallocate()
    }

    /// The next span in file order, or nil when the input is exhausted. Throws only what `inner` throws.
    func next() throws -> Span? {
        while true {
            if !startEmitted {
                if validBytes >= 4 || inputEnded {
                    startEmitted = true
                    let following = headerAt(byte: 0)
                    if case .header(let headerLevel, _) = following { level = headerLevel }
                    return Span(kind: .start, startBit: 0, bitCount: 0, endsAtInputEnd: false, tooLong: false,
                                level: level, buffer: nil, trailer: Trailer(storedCRC: nil, following: following))
                }
            } else if let span = readySpan() {
                return span
            } else if finished {
                return nil
            }
            if inputEnded {
                finishScan()
                continue
            }
            try readMore()
        }
    }

    // MARK: - Input

    private func readMore() throws {
        // Keep the open span and the bytes the next probes look back at.
        let lookBack = probe - 8
        var keep = max(0, lookBack)
        if let open = candidates.first { keep = min(keep, Int(open.bit / 8 - windowStart)) }
        keep &= ~7
        if keep > 0 {
            window.copyMemory(from: window + keep, byteCount: validBytes - keep)
            validBytes -= keep
            probe -= keep
            windowStart += Int64(keep)
        }
        if capacity - validBytes < readSize {
            let grown = max(capacity * 2, validBytes + readSize)
            let bigger = UnsafeMutableRawPointer.allocate(byteCount: grown + 32, alignment: 16)
            bigger.copyMemory(from: window, byteCount: validBytes)
            (bigger + validBytes).initializeMemory(as: UInt8.self, repeating: 0, count: grown + 32 - validBytes)
            window.deallocate()
            window = bigger
            capacity = grown
        }
        let count = try inner.read(into: UnsafeMutableRawBufferPointer(start: window + validBytes,
                                                                      count: capacity - validBytes))
        if count == 0 {
            inputEnded = true
            return
        }
        validBytes += count
        totalBytes += Int64(count)
        scan(final: false)
    }

    private func scan(final: Bool) {
        // A probe needs 8 valid bytes after it, or at the end 2 (matches must then fit in the valid bits).
        let limit = final ? validBytes - 1 : validBytes - 7
        guard probe < limit else { return }
        var end = probe
        while end < limit { end += 4 }
        found.removeAll(keepingCapacity: true)
        Bzip2MagicScan.scan(window, validBytes: validBytes, probeStart: probe, probeEnd: end, found: &found)
        probe = end
        for match in found {
            candidates.append((windowStart * 8 + Int64(match.bit), match.kind))
        }
        // Every magic starting at or before this bit has been found.
        let frontier = final ? Int64.max : (windowStart + Int64(end - 4)) * 8
        if let first = injected.first, first.bit <= frontier {
            let taken = injected.prefix { $0.bit <= frontier }
            injected.removeFirst(taken.count)
            let validBits = (windowStart + Int64(validBytes)) * 8
            candidates += taken.filter { $0.bit < validBits && $0.bit >= (candidates.first?.bit ?? 0) }
            candidates.sort { $0.bit < $1.bit }
            var unique: [(bit: Int64, kind: UInt8)] = []
            for candidate in candidates where unique.last?.bit != candidate.bit { unique.append(candidate) }
            candidates = unique
        }
    }

    private func finishScan() {
        if !finished { scan(final: true) }
        finished = true
    }

    // MARK: - Spans

    /// The open span when its end is known (and, for an end-of-stream span, its trailer is in the window).
    private func readySpan() -> Span? {
        guard let open = candidates.first else {
            if !finished && windowStart + Int64(probe) > Int64(maximumSpanBytes) {
                // No boundary at all within a block's size: not bzip2 data past the header.
                finished = true
                return tooLongSpan(startBit: windowStart * 8 + Int64(probe) * 8)
            }
            return nil
        }
        let endBit: Int64
        let atEnd: Bool
        if candidates.count >= 2 {
            endBit = candidates[1].bit
            atEnd = false
        } else if finished {
            endBit = (windowStart + Int64(validBytes)) * 8
            atEnd = true
        } else {
            if (windowStart + Int64(validBytes)) - open.bit / 8 > Int64(maximumSpanBytes) {
                finished = true
                candidates.removeAll()
                return tooLongSpan(startBit: open.bit)
            }
            return nil
        }
        let isEnd = open.kind == 1
        var trailer: Trailer?
        if isEnd {
            guard let ready = trailerAt(bit: open.bit) else { return nil }
            trailer = ready
            if case .header(let headerLevel, _) = ready.following { level = headerLevel }
        }
        candidates.removeFirst()
        let bitCount = Int(endBit - open.bit)
        let relative = Int(open.bit - windowStart * 8)
        if bitCount > maximumSpanBytes * 8 {
            var span = tooLongSpan(startBit: open.bit)
            span.kind = isEnd ? .end : .block
            span.trailer = trailer
            return span
        }
        let buffer = Bzip2SpanBuffer(level: isEnd ? 9 : level,
                                     parts: [.init(base: window, bit: relative, count: bitCount)])
        return Span(kind: isEnd ? .end : .block, startBit: open.bit, bitCount: bitCount, endsAtInputEnd: atEnd,
                    tooLong: false, level: level, buffer: buffer, trailer: trailer)
    }

    private func tooLongSpan(startBit: Int64) -> Span {
        Span(kind: .block, startBit: startBit, bitCount: 0, endsAtInputEnd: false, tooLong: true, level: level,
             buffer: nil, trailer: nil)
    }

    /// The trailer after an end-of-stream magic at `bit`, or nil while more input is needed to tell.
    private func trailerAt(bit: Int64) -> Trailer? {
        let available = windowStart + Int64(validBytes)
        let crcEndBit = bit + 80
        let padEnd = (crcEndBit + 7) / 8
        if !finished && available < padEnd + 4 { return nil }
        guard available * 8 >= crcEndBit else { return Trailer(storedCRC: nil, following: .truncated) }
        let crc = UInt32(Bzip2Bits.bits(window, bit: Int(bit + 48 - windowStart * 8), count: 32))
        return Trailer(storedCRC: crc, following: headerAt(byte: padEnd))
    }

    /// What the bytes at absolute `byte` are: a header, the end of the input, or something else.
    private func headerAt(byte: Int64) -> Following {
        let available = windowStart + Int64(validBytes)
        let count = Int(max(0, min(4, available - byte)))
        if count == 0 && inputEnded { return byte == 0 ? .truncated : .endOfInput }
        let bytes = (0..<count).map { window.load(fromByteOffset: Int(byte - windowStart) + $0, as: UInt8.self) }
        let expected: [ClosedRange<UInt8>] = [0x42...0x42, 0x5A...0x5A, 0x68...0x68, 0x31...0x39]
        for (index, value) in bytes.enumerated() where !expected[index].contains(value) {
            return .garbage(byte: byte)
        }
        guard count == 4 else { return .truncated }
        return .header(level: Int(bytes[3] - 0x30), byte: byte)
    }
}
