import EPFConcurrency
import EPFFormat
import Foundation

/// One file being downloaded: its `.part`, its byte ranges, and the MD5 of the contiguous prefix written so far.
///
/// A file is cut into pieces of `--min-split` bytes (or more, for very large files) that connections take in order,
/// and an idle connection splits the largest piece still in flight, so all connections stay busy to the end.
/// The MD5 must see the bytes in order, so it follows a watermark: whenever a megabyte more of the file is
/// contiguous from byte 0, the bytes past the watermark are read back from the part (still in the page cache) and
/// hashed. Since pieces complete roughly in order, the hash keeps up with the download and little is left at the
/// end. Hashing runs outside the ranges' lock, by one connection at a time, which also flushes the file to disk
/// every 32 MB so the `fsync` before the rename is short.
final class Download: Sendable {
    /// The ranges, the part and the counters, behind `ranges`.
    private struct Ranges {
        /// Bumped whenever the ranges are thrown away (restart from zero); jobs of an older generation stop.
        var generation = 0
        var segments: [Segment] = []
        var part: PartFile?
        var claimed = false
        var lastSave = Date()
        var lastHashNudge: Int64 = 0
        /// Bytes that were already in the `.part` when this run started.
        var resumedBytes: Int64 = 0
        /// Bytes received in this run.
        var receivedBytes: Int64 = 0
        var mismatches = 0
        var rangeIgnored = false
        /// Set when the download ended: nil while running.
        var outcome: Result<String, Error>?
        var started: Date?
        var finished: Date?
    }

    /// The MD5 of the part's contiguous prefix, behind `hash`; taken without `ranges` held.
    private struct Hashing {
        var hasher = MD5()
        var hashed: Int64 = 0
        var generation = -1
        /// The hashed bytes already flushed to disk, so the `fsync` before the rename has little left to write.
        var flushed: Int64 = 0
    }

    let file: RemoteFile
    /// Where the verified file goes.
    let target: String
    let partPath: String
    let size: Int64
    let expectedMD5: String
    private let connections: Int
    private let minSplit: Int64
    /// The smallest range an idle connection splits off a piece in flight.
    private let minSteal: Int64
    private let ranges = Mutex(Ranges())
    private let hash = Mutex(Hashing())

    init(file: RemoteFile, target: String, size: Int64, expectedMD5: String, connections: Int, minSplit: Int64) {
        self.file = file
        self.target = target
        partPath = target + ".part"
        self.size = size
        self.expectedMD5 = expectedMD5
        self.connections = connections
        self.minSplit = minSplit
        minSteal = max(16 * 1024, min(minSplit / 4, 256 * 1024))
    }

    /// Bumped whenever the ranges are thrown away (restart from zero); jobs of an older generation stop.
    var generation: Int { ranges.withLock { $0.generation } }
    /// Bytes that were already in the `.part` when this run started.
    var resumedBytes: Int64 { ranges.withLock { $0.resumedBytes } }
    /// Bytes received in this run.
    var receivedBytes: Int64 { ranges.withLock { $0.receivedBytes } }
    /// Set when the download ended: nil while running.
    var outcome: Result<String, Error>? { ranges.withLock { $0.outcome } }
    /// When the pool opened it.
    var started: Date? {
        get { ranges.withLock { $0.started } }
        set { ranges.withLock { $0.started = newValue } }
    }
    /// When it ended.
    var finished: Date? { ranges.withLock { $0.finished } }

    /// Opens the part: continues from `<name>.part.state` when it describes this same file, else starts fresh.
    /// Returns the indexes of the ranges still to fetch.
    func open() throws -> [Int] {
        try ranges.withLock { ranges in
            if let state = PartFile.loadState(partPath + ".state"), state.url == file.url, state.size == size,
               state.md5 == expectedMD5, fileSize(partPath) == size, !state.segments.isEmpty {
                ranges.part = try PartFile(path: partPath, size: size, fresh: false)
                ranges.segments = state.segments
                ranges.resumedBytes = ranges.segments.reduce(0) { $0 + $1.done }
                ranges.generation += 1
            } else {
                try startFresh(&ranges)
            }
            return ranges.segments.indices.filter { !ranges.segments[$0].complete }
        }
    }

    private func fileSize(_ path: String) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int64(info.st_size)
    }

    /// Throws the ranges away and starts from zero; `single` forces one range (a server that ignores Range).
    /// Called with `ranges` held.
    private func startFresh(_ ranges: inout Ranges, single: Bool = false) throws {
        PartFile.remove(partPath: partPath)
        ranges.part = try PartFile(path: partPath, size: size, fresh: true)
        if single || connections == 1 || size < 2 * minSplit {
            ranges.segments = [Segment(start: 0, end: size, done: 0)]
        } else {
            // At most about 1,000 pieces, so the state file stays small for a 10 GB table.
            let piece = max(minSplit, size / 1000)
            ranges.segments = stride(from: Int64(0), to: size, by: Int(piece)).map {
                Segment(start: $0, end: min(size, $0 + piece), done: 0)
            }
        }
        ranges.generation += 1
        ranges.claimed = false
        ranges.lastHashNudge = 0
        try ranges.part?.save(state(ranges.segments))
    }

    private func state(_ segments: [Segment]) -> PartState {
        PartState(url: file.url, size: size, md5: expectedMD5, segments: segments)
    }

    /// Bytes received so far and whether the download ended, read together for progress reports.
    var progress: (received: Int64, ended: Bool) {
        ranges.withLock { ($0.receivedBytes, $0.finished != nil) }
    }

    /// Whether a job of `generation` still counts.
    func isCurrent(_ generation: Int) -> Bool {
        ranges.withLock { generation == $0.generation && $0.outcome == nil }
    }

    /// The range to request for segment `index`, or nil when it is complete or the job obsolete.
    func nextRange(_ index: Int, generation: Int) -> (first: Int64, last: Int64)? {
        ranges.withLock { ranges in
            guard generation == ranges.generation, ranges.outcome == nil, index < ranges.segments.count,
                  !ranges.segments[index].complete else { return nil }
            return (ranges.segments[index].next, ranges.segments[index].end - 1)
        }
    }

    /// True when segment `index` covers the whole file from byte 0 (a 200 answer is then acceptable).
    func coversWholeFile(_ index: Int) -> Bool {
        ranges.withLock { $0.segments.count == 1 && index == 0 && $0.segments[0].next == 0 }
    }

    /// Splits the second half off the largest range still being fetched, for an idle connection. Returns the
    /// new range's index, or nil when no range is worth splitting. `busy` are the ranges
    /// some connection is fetching (only those are split: a queued range will be taken whole).
    func split(busy: Set<Int>, generation: Int) -> Int? {
        ranges.withLock { ranges in
            guard generation == ranges.generation, ranges.outcome == nil, !ranges.claimed else { return nil }
            let segments = ranges.segments
            var best: Int?
            for index in busy where index < segments.count {
                let remaining = segments[index].end - segments[index].next
                if remaining >= 2 * minSteal, remaining > (best.map { segments[$0].end - segments[$0].next } ?? 0) {
                    best = index
                }
            }
            guard let index = best else { return nil }
            let segment = segments[index]
            let middle = segment.next + (segment.end - segment.next) / 2
            ranges.segments[index].end = middle
            ranges.segments.append(Segment(start: middle, end: segment.end, done: 0))
            return ranges.segments.count - 1
        }
    }

    /// Writes received bytes of segment `index`. Returns false when the job is obsolete or the range is full (the
    /// rest of the answer belongs to a range split off, or the server sent too much).
    func write(_ bytes: UnsafeRawBufferPointer, segment index: Int, generation: Int) throws -> Bool {
        let written: (count: Int, nudge: Bool)? = try ranges.withLock { ranges in
            guard generation == ranges.generation, ranges.outcome == nil, let part = ranges.part else { return nil }
            var segment = ranges.segments[index]
            let count = Int(min(Int64(bytes.count), segment.end - segment.next))
            guard count > 0 else { return nil }
            try part.write(UnsafeRawBufferPointer(rebasing: bytes[0..<count]), at: segment.next)
            segment.done += Int64(count)
            ranges.segments[index] = segment
            ranges.receivedBytes += Int64(count)
            if segment.complete || Date().timeIntervalSince(ranges.lastSave) > 0.25 {
                try part.save(state(ranges.segments))
                ranges.lastSave = Date()
            }
            let nudge = segment.complete || ranges.receivedBytes - ranges.lastHashNudge >= 1 << 20
            if nudge { ranges.lastHashNudge = ranges.receivedBytes }
            return (count, nudge)
        }
        guard let written else { return false }
        if written.nudge { try advanceHash(wait: false) }
        return written.count == bytes.count
    }

    /// The end of the bytes written contiguously from 0 by `segments`.
    private static func contiguousPrefix(_ segments: [Segment]) -> Int64 {
        var prefix: Int64 = 0
        for segment in segments.sorted(by: { $0.start < $1.start }) {
            guard segment.start <= prefix else { break }
            prefix = max(prefix, segment.next)
            if !segment.complete { break }
        }
        return prefix
    }

    /// Hashes, from the part, the contiguous bytes past the watermark. With `wait` false it returns at once when
    /// another connection is hashing.
    private func advanceHash(wait: Bool) throws {
        if wait {
            try hash.withLock { try advanceHash(&$0) }
        } else {
            _ = try hash.withLockIfAvailable { try advanceHash(&$0) }
        }
    }

    /// `advanceHash(wait:)` with `hash` held.
    private func advanceHash(_ hashing: inout Hashing) throws {
        var buffer: UnsafeMutableRawBufferPointer?
        defer { buffer?.deallocate() }
        while true {
            let (prefix, file, current) = ranges.withLock {
                (Self.contiguousPrefix($0.segments), $0.part, $0.generation)
            }
            guard let file else { return }
            if hashing.generation != current {
                hashing = Hashing(generation: current)
            }
            guard prefix > hashing.hashed else { return }
            let chunk = buffer ?? UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 64)
            buffer = chunk
            while hashing.hashed < prefix {
                let want = Int(min(Int64(chunk.count), prefix - hashing.hashed))
                let got = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: chunk[0..<want]),
                                        at: hashing.hashed)
                guard got > 0 else { throw FetchError.io(path: partPath, call: "pread", errno: EIO) }
                hashing.hasher.update(UnsafeRawBufferPointer(rebasing: chunk[0..<got]))
                hashing.hashed += Int64(got)
            }
            if hashing.hashed - hashing.flushed >= 32 << 20 {
                try file.flushData()
                hashing.flushed = hashing.hashed
            }
        }
    }

    /// The server answered 200 to a range request: restart the whole file on one connection. Returns the new
    /// generation, or nil when another job already did.
    func restartWithoutRanges(seenBy generation: Int) throws -> Int? {
        try ranges.withLock { ranges in
            guard generation == ranges.generation, ranges.outcome == nil else { return nil }
            ranges.rangeIgnored = true
            try startFresh(&ranges, single: true)
            return ranges.generation
        }
    }

    /// When every range is written (checked by one connection only): finishes the MD5 and compares. Returns
    /// `.verified` (the part is synced, ready to rename), `.retry` after the first mismatch (part deleted, ranges
    /// reset), `.failed` after the second; nil when not complete, not this generation's, or another connection
    /// is finishing.
    func finishIfComplete(generation: Int) throws -> Completion? {
        let claimed = ranges.withLock { ranges in
            guard generation == ranges.generation, ranges.outcome == nil, !ranges.claimed,
                  ranges.segments.allSatisfy(\.complete) else { return false }
            ranges.claimed = true
            return true
        }
        guard claimed else { return nil }
        try advanceHash(wait: true)
        let (hasher, complete) = hash.withLock { ($0.hasher, $0.generation == generation && $0.hashed == size) }
        var final = hasher
        return try ranges.withLock { ranges in
            guard complete, generation == ranges.generation, ranges.outcome == nil, let part = ranges.part else {
                return nil
            }
            let actual = final.finalizeHex()
            if actual == expectedMD5 {
                try part.sync()
                ranges.part = nil
                return .verified
            }
            ranges.mismatches += 1
            if ranges.mismatches >= 2 {
                ranges.part = nil
                PartFile.remove(partPath: partPath)
                let error = FetchError.checksumMismatch(file: target, expected: expectedMD5, actual: actual)
                ranges.outcome = .failure(error)
                return .failed(error)
            }
            try startFresh(&ranges, single: ranges.rangeIgnored)
            return .retry(ranges.generation, ranges.segments.indices.map { $0 }, actual)
        }
    }

    /// Records the end of the download; returns false when it had ended already.
    @discardableResult
    func end(_ result: Result<String, Error>) -> Bool {
        ranges.withLock { ranges in
            ranges.part = nil
            guard ranges.finished == nil else { return false }
            if ranges.outcome == nil { ranges.outcome = result }
            ranges.finished = Date()
            return true
        }
    }

    /// What finishing found.
    enum Completion: Sendable {
        case verified
        case retry(Int, [Int], String)
        case failed(FetchError)
    }
}
