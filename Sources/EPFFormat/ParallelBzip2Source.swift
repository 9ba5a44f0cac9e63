import Foundation

/// Picks the bzip2 decoder for a thread count.
package enum Bzip2Decompression {
    /// A source of the decompressed bytes of `inner`: the parallel decoder for `threads` > 1, else the serial
    /// `Bzip2ByteSource`. `path` names the file in errors.
    package static func source(_ inner: ByteSource, path: String, threads: Int) throws -> ByteSource {
        if threads <= 1 { return try Bzip2ByteSource(inner, path: path) }
        return ParallelBzip2ByteSource(inner, path: path, threads: threads)
    }

    /// Cuts a bzip2 stream into re-aligned block spans as the parallel decoder does, without decoding them, and
    /// returns how many spans there were: the cost of finding blocks, for benchmarks.
    package static func scanBlocks(_ inner: ByteSource) throws -> Int {
        let scanner = Bzip2BlockScanner(inner)
        var count = 0
        while try scanner.next() != nil { count += 1 }
        return count
    }
}

/// Decompresses bzip2 (one or several concatenated streams) on several threads, with output identical to
/// `bzip2 -dc`.
///
/// The reading thread cuts the compressed file at every block magic (`Bzip2BlockScanner`), re-aligns each span as
/// a standalone one-block stream and queues it; `threads` workers decode spans with libbz2, which checks each
/// block's CRC; the reading thread hands out the output in order and checks each stream's combined CRC. A magic
/// that occurs by chance inside a block shows itself as a span that does not decode past its end; such a span is
/// merged with the next and decoded again. At most `3 × threads` spans are in flight, each buffering at most
/// 4 MiB of output (a block of long runs that decodes to more is finished by the reading thread), so memory is
/// bounded whatever the file's size.
///
/// Corrupt or truncated data throws `EPFError.bzip2` with the compressed byte offset, after all the output of
/// the blocks before it, as the serial decoder does.
package final class ParallelBzip2ByteSource: ByteSource {
    private typealias Span = Bzip2BlockScanner.Span
    /// Most spans merged into one block before giving up.
    static let maximumMerges = 64

    private let path: String
    private let scanner: Bzip2BlockScanner
    private let pool: Bzip2WorkerPool
    private let inFlight: Int
    private let outputLimit: Int
    private var queued: [(span: Span, job: Bzip2Job?)] = []
    private var scannerDone = false
    private var scannerError: Error?

    // Stream state, in file order.
    private var level = 9
    private var combinedCRC: UInt32 = 0
    /// Where the next span must start (bits); spans before it lie in a stream's trailer and are skipped.
    private var expectedBit: Int64 = 0
    private var finished = false
    /// Spans since the last good boundary whose decoding ran past their end, to merge with the next.
    private var pending: [Span] = []
    private var pendingFailure: Bzip2DecodeFailure?

    // What is being handed out.
    private var output: Bzip2BlockOutput?
    private var outputPosition = 0
    /// Where the block being handed out starts, and whether its span ran to the end of the input.
    private var outputSpan: (startBit: Int64, atInputEnd: Bool) = (0, false)
    private var rest: Bzip2LiveDecoder?
    /// An error found after a block whose output is whole: thrown once that output is handed out.
    private var deferredError: Error?
    private var failure: Error?
    /// Merge attempts so far (a test checks that false boundaries really took this path).
    private(set) var mergedSpans = 0

    /// Decodes `inner` on `threads` worker threads; `path` names the file in errors. `readSize` (compressed
    /// bytes per read) and `outputLimit` (bytes buffered per block) are for tests and the fuzz targets.
    package convenience init(_ inner: ByteSource, path: String, threads: Int) {
        self.init(inner, path: path, threads: threads, readSize: 1 << 20, outputLimit: 4 << 20)
    }

    package init(_ inner: ByteSource, path: String, threads: Int, readSize: Int, outputLimit: Int,
         injectedCandidates: [(bit: Int64, isEnd: Bool)] = []) {
        self.path = path
        scanner = Bzip2BlockScanner(inner, readSize: readSize, injectedCandidates: injectedCandidates)
        pool = Bzip2WorkerPool(threads: threads)
        inFlight = max(3, 3 * threads)
        self.outputLimit = max(1, outputLimit)
    }

    deinit {
        pool.shutdown()
    }

    package func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        if let failure { throw failure }
        do {
            return try readSome(base, count: buffer.count)
        } catch {
            failure = error
            output = nil
            rest = nil
            throw error
        }
    }

    private func readSome(_ base: UnsafeMutableRawPointer, count: Int) throws -> Int {
        while true {
            if let current = output {
                let available = current.count - outputPosition
                if available > 0 {
                    let take = min(available, count)
                    base.copyMemory(from: current.pointer + outputPosition, byteCount: take)
                    outputPosition += take
                    return take
                }
                output = nil
                rest = current.rest
                continue
            }
            if let decoder = rest {
                do {
                    switch try decoder.decode(into: base, count: count) {
                    case .more(let written):
                        if written > 0 { return written }
                    case .finished(let written):
                        rest = nil
                        if written > 0 { return written }
                    }
                } catch {
                    throw self.error(error, startBit: outputSpan.startBit, atInputEnd: outputSpan.atInputEnd)
                }
                continue
            }
            if let deferredError { throw deferredError }
            if finished { return 0 }
            guard let (span, job) = try nextSpan() else {
                throw endOfSpans()
            }
            try handle(span, job)
        }
    }

    // MARK: - Spans in order

    private func nextSpan() throws -> (Span, Bzip2Job?)? {
        topUp()
        guard !queued.isEmpty else {
            if let scannerError { throw scannerError }
            return nil
        }
        // Removed at once (the queue is short), so a block's memory goes as soon as it has been handed out.
        let next = queued.removeFirst()
        topUp()
        return next
    }

    /// Reads and cuts ahead until `inFlight` spans are queued.
    private func topUp() {
        while queued.count < inFlight && !scannerDone {
            let span: Span?
            do {
                span = try scanner.next()
            } catch {
                // Reported in order, after the spans already queued.
                scannerError = error
                scannerDone = true
                return
            }
            guard let span else {
                scannerDone = true
                return
            }
            var job: Bzip2Job?
            if span.kind == .block, let buffer = span.buffer {
                let decode = Bzip2Job(buffer, limit: outputLimit)
                pool.submit(decode)
                job = decode
            }
            queued.append((span, job))
        }
    }

    private func handle(_ span: Span, _ job: Bzip2Job?) throws {
        if !pending.isEmpty {
            if let job { pool.cancel(job) }
            try merge(span)
            return
        }
        if span.kind == .start {
            try apply(span.trailer, at: 0, checkCRC: false)
            return
        }
        if span.startBit < expectedBit {
            // A chance magic inside a stream's CRC, padding or the next header.
            if let job { pool.cancel(job) }
            return
        }
        if span.startBit > expectedBit {
            throw EPFError.bzip2(path: path, message: "no bzip2 block starts where one must",
                                 compressedOffset: expectedBit / 8)
        }
        if span.tooLong {
            throw EPFError.bzip2(path: path, message: "no bzip2 block boundary within "
                                 + "\(Bzip2Bits.maximumBlockBytes(level: 9)) bytes",
                                 compressedOffset: span.startBit / 8)
        }
        switch span.kind {
        case .start:
            return
        case .end:
            try apply(span.trailer, at: span.startBit, checkCRC: true)
        case .block:
            guard let job, let buffer = span.buffer else { return }
            var result = pool.wait(for: job)
            if span.level != level {
                // The scanner guessed the level wrong (a chance magic fooled it): decode with the stream's level.
                result = Bzip2BlockOutput.decode(buffer.relevelled(level), limit: outputLimit)
            }
            switch result {
            case .success(let decoded):
                accept(decoded, blockCRC: buffer.blockCRC, from: span, to: span)
            case .failure(let failed):
                guard failed.mergeable else {
                    try fail(failed, from: span, to: span)
                    return
                }
                pending = [span]
                pendingFailure = failed
            }
        }
    }

    /// Tries the pending spans plus `span` as one block.
    private func merge(_ span: Span) throws {
        pending.append(span)
        mergedSpans += 1
        let first = pending[0]
        let bits = pending.reduce(0) { $0 + $1.bitCount }
        let buffers = pending.compactMap(\.buffer)
        guard !span.tooLong, buffers.count == pending.count,
              bits <= Bzip2Bits.maximumBlockBytes(level: level) * 8 else {
            throw giveUp(atInputEnd: false)
        }
        // Each attempt decodes the whole merged span again: bound the work a file crafted to hold many magic
        // lookalikes can cause (in real data even a second one in a block is astronomically unlikely).
        guard pending.count <= Self.maximumMerges else {
            throw EPFError.bzip2(path: path, message: "more than \(Self.maximumMerges) block-magic lookalikes in one "
                                 + "block; read it with --threads 1 (the serial decoder)",
                                 compressedOffset: first.startBit / 8)
        }
        let merged = Bzip2SpanBuffer(level: level, parts: buffers.map(\.asPart))
        switch Bzip2BlockOutput.decode(merged, limit: outputLimit) {
        case .success(let decoded):
            pending = []
            pendingFailure = nil
            accept(decoded, blockCRC: merged.blockCRC, from: first, to: span)
        case .failure(let failed):
            guard failed.mergeable else {
                pending = []
                try fail(failed, from: first, to: span)
                return
            }
        }
    }

    /// A final failure of the block spanning `first` to `last`: thrown now, or after the block's output when
    /// that is whole.
    private func fail(_ failed: Bzip2DecodeFailure, from first: Span, to last: Span) throws {
        let reported = error(failed, startBit: first.startBit, atInputEnd: last.endsAtInputEnd)
        guard let intact = failed.intactOutput else { throw reported }
        accept(intact, blockCRC: first.buffer?.blockCRC ?? 0, from: first, to: last)
        deferredError = reported
    }

    /// Hands out a decoded block that spans `first` to `last`.
    private func accept(_ decoded: Bzip2BlockOutput, blockCRC: UInt32, from first: Span, to last: Span) {
        combinedCRC = (combinedCRC << 1 | combinedCRC >> 31) ^ blockCRC
        expectedBit = last.endBit
        outputSpan = (first.startBit, last.endsAtInputEnd)
        output = decoded
        outputPosition = 0
    }

    /// Checks an end of stream (or the file's first header) and moves to what follows.
    private func apply(_ trailer: Bzip2BlockScanner.Trailer?, at bit: Int64, checkCRC: Bool) throws {
        guard let trailer else { return }
        if checkCRC {
            guard let stored = trailer.storedCRC else { throw truncated() }
            guard stored == combinedCRC else {
                throw EPFError.bzip2(path: path, message: "stream CRC mismatch (stored \(hex(stored)), blocks "
                                     + "give \(hex(combinedCRC)))", compressedOffset: bit / 8)
            }
        }
        switch trailer.following {
        case .endOfInput:
            finished = true
        case .header(let newLevel, let byte):
            level = newLevel
            combinedCRC = 0
            expectedBit = (byte + 4) * 8
        case .truncated:
            throw truncated()
        case .garbage(let byte):
            throw EPFError.bzip2(path: path, message: "not bzip2 data (BZ_DATA_ERROR_MAGIC)", compressedOffset: byte)
        }
    }

    // MARK: - Errors

    /// The spans ran out before the stream's end.
    private func endOfSpans() -> Error {
        if pending.isEmpty && scanner.totalBytes * 8 >= expectedBit + 48 {
            // The input goes on, but no block magic is where the header or the last block ends.
            return EPFError.bzip2(path: path, message: "no bzip2 block starts where one must",
                                  compressedOffset: expectedBit / 8)
        }
        return truncated()
    }

    /// The input ended too early; but a block that could not be decoded although its own span ended at another
    /// candidate is reported as damaged rather than cut.
    private func truncated() -> Error {
        if let pendingFailure, let first = pending.first, !first.endsAtInputEnd {
            return error(pendingFailure, startBit: first.startBit, atInputEnd: false)
        }
        return EPFError.bzip2(path: path, message: "unexpected end of file (the archive is truncated)",
                              compressedOffset: scanner.totalBytes)
    }

    private func giveUp(atInputEnd: Bool) -> Error {
        guard let pendingFailure, let first = pending.first else { return truncated() }
        return error(pendingFailure, startBit: first.startBit, atInputEnd: atInputEnd)
    }

    private func error(_ failed: Error, startBit: Int64, atInputEnd: Bool) -> Error {
        guard let failed = failed as? Bzip2DecodeFailure else { return failed }
        if atInputEnd { return truncated() }
        return EPFError.bzip2(path: path, message: failed.message,
                              compressedOffset: startBit / 8 + Int64(failed.spanOffset))
    }

    private func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return "0x" + String(repeating: "0", count: 8 - digits.count) + digits
    }
}
