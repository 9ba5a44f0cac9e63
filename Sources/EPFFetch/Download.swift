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
final class Download: @unchecked Sendable {
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

    /// Guards the ranges, the part and the counters.
    private let lock = NSLock()
    /// Bumped whenever the ranges are thrown away (restart from zero); jobs of an older generation stop.
    private(set) var generation = 0
    private var segments: [Segment] = []
    private var part: PartFile?
    private var claimed = false
    private var lastSave = Date()
    private var lastHashNudge: Int64 = 0
    /// Bytes that were already in the `.part` when this run started.
    private(set) var resumedBytes: Int64 = 0
    /// Bytes received in this run.
    private(set) var receivedBytes: Int64 = 0
    private var mismatches = 0
    private var rangeIgnored = false
    /// Set when the download ended: nil while running.
    private(set) var outcome: Result<String, Error>?
    var started: Date?
    private(set) var finished: Date?

    /// Guards the hash; taken without `lock` held.
    private let hashLock = NSLock()
    private var hasher = MD5()
    private var hashed: Int64 = 0
    private var hashGeneration = -1
    /// The hashed bytes already flushed to disk, so the `fsync` before the rename has little left to write.
    private var flushed: Int64 = 0

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

    /// Opens the part: continues from `<name>.part.state` when it describes this same file, else starts fresh.
    /// Returns the indexes of the ranges still to fetch.
    func open() throws -> [Int] {
        lock.lock()
        defer { lock.unlock() }
        if let state = PartFile.loadState(partPath + ".state"), state.url == file.url, state.size == size,
           state.md5 == expectedMD5, fileSize(partPath) == size, !state.segments.isEmpty {
            part = try PartFile(path: partPath, size: size, fresh: false)
            segments = state.segments
            resumedBytes = segments.reduce(0) { $0 + $1.done }
            generation += 1
        } else {
            try startFresh()
        }
        return segments.indices.filter { !segments[$0].complete }
    }

    private func fileSize(_ path: String) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int64(info.st_size)
    }

    /// Throws the ranges away and starts from zero; `single` forces one range (a server that ignores Range).
    /// Called with `lock` held.
    private func startFresh(single: Bool = false) throws {
        PartFile.remove(partPath: partPath)
        part = try PartFile(path: partPath, size: size, fresh: true)
        if single || connections == 1 || size < 2 * minSplit {
            segments = [Segment(start: 0, end: size, done: 0)]
        } else {
            // At most about 1,000 pieces, so the state file stays small for a 10 GB table.
            let piece = max(minSplit, size / 1000)
            segments = stride(from: Int64(0), to: size, by: Int(piece)).map {
                Segment(start: $0, end: min(size, $0 + piece), done: 0)
            }
        }
        generation += 1
        claimed = false
        lastHashNudge = 0
        try part?.save(state())
    }

    private func state() -> PartState {
        PartState(url: file.url, size: size, md5: expectedMD5, segments: segments)
    }

    /// Bytes received so far and whether the download ended, read together for progress reports.
    var progress: (received: Int64, ended: Bool) {
        lock.lock()
        defer { lock.unlock() }
        return (receivedBytes, finished != nil)
    }

    /// Whether a job of `generation` still counts.
    func isCurrent(_ generation: Int) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return generation == self.generation && outcome == nil
    }

    /// The range to request for segment `index`, or nil when it is complete or the job obsolete.
    func nextRange(_ index: Int, generation: Int) -> (first: Int64, last: Int64)? {
        lock.lock()
        defer { lock.unlock() }
        guard generation == self.generation, outcome == nil, index < segments.count,
              !segments[index].complete else { return nil }
        return (segments[index].next, segments[index].end - 1)
    }

    /// True when segment `index` covers the whole file from byte 0 (a 200 answer is then acceptable).
    func coversWholeFile(_ index: Int) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return segments.count == 1 && index == 0 && segments[0].next == 0
    }

    /// Splits the second half off the largest range still being fetched, for an idle connection. Returns the
    /// new range's index, or nil when no range is worth splitting. `busy` are the ranges
    /// some connection is fetching (only those are split: a queued range will be taken whole).
    func split(busy: Set<Int>, generation: Int) -> Int? {
        lock.lock()
        defer { lock.unlock() }
        guard generation == self.generation, outcome == nil, !claimed else { return nil }
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
        segments[index].end = middle
        segments.append(Segment(start: middle, end: segment.end, done: 0))
        return segments.count - 1
    }

    /// Writes received bytes of segment `index`. Returns false when the job is obsolete or the range is full (the
    /// rest of the answer belongs to a range split off, or the server sent too much).
    func write(_ bytes: UnsafeRawBufferPointer, segment index: Int, generation: Int) throws -> Bool {
        lock.lock()
        guard generation == self.generation, outcome == nil, let part else {
            lock.unlock()
            return false
        }
        var segment = segments[index]
        let count = Int(min(Int64(bytes.count), segment.end - segment.next))
        guard count > 0 else {
            lock.unlock()
            return false
        }
        do {
            try part.write(UnsafeRawBufferPointer(rebasing: bytes[0..<count]), at: segment.next)
            segment.done += Int64(count)
            segments[index] = segment
            receivedBytes += Int64(count)
            if segment.complete || Date().timeIntervalSince(lastSave) > 0.25 {
                try part.save(state())
                lastSave = Date()
            }
        } catch {
            lock.unlock()
            throw error
        }
        let nudge = segment.complete || receivedBytes - lastHashNudge >= 1 << 20
        if nudge { lastHashNudge = receivedBytes }
        lock.unlock()
        if nudge { try advanceHash(wait: false) }
        return count == bytes.count
    }

    /// The end of the bytes written contiguously from 0. Called with `lock` held.
    private func contiguousPrefix() -> Int64 {
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
        if wait { hashLock.lock() } else if !hashLock.try() { return }
        defer { hashLock.unlock() }
        var buffer: UnsafeMutableRawBufferPointer?
        defer { buffer?.deallocate() }
        while true {
            lock.lock()
            let (prefix, file, current) = (contiguousPrefix(), part, generation)
            lock.unlock()
            guard let file else { return }
            if hashGeneration != current {
                hasher = MD5()
                hashed = 0
                flushed = 0
                hashGeneration = current
            }
            guard prefix > hashed else { return }
            let chunk = buffer ?? UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 64)
            buffer = chunk
            while hashed < prefix {
                let want = Int(min(Int64(chunk.count), prefix - hashed))
                let got = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: chunk[0..<want]), at: hashed)
                guard got > 0 else { throw FetchError.io(path: partPath, call: "pread", errno: EIO) }
                hasher.update(UnsafeRawBufferPointer(rebasing: chunk[0..<got]))
                hashed += Int64(got)
            }
            if hashed - flushed >= 32 << 20 {
                try file.flushData()
                flushed = hashed
            }
        }
    }

    /// The server answered 200 to a range request: restart the whole file on one connection. Returns the new
    /// generation, or nil when another job already did.
    func restartWithoutRanges(seenBy generation: Int) throws -> Int? {
        lock.lock()
        defer { lock.unlock() }
        guard generation == self.generation, outcome == nil else { return nil }
        rangeIgnored = true
        try startFresh(single: true)
        return self.generation
    }

    /// When every range is written (checked by one connection only): finishes the MD5 and compares. Returns
    /// `.verified` (the part is synced, ready to rename), `.retry` after the first mismatch (part deleted, ranges
    /// reset), `.failed` after the second; nil when not complete, not this generation's, or another connection
    /// is finishing.
    func finishIfComplete(generation: Int) throws -> Completion? {
        lock.lock()
        guard generation == self.generation, outcome == nil, !claimed, segments.allSatisfy(\.complete) else {
            lock.unlock()
            return nil
        }
        claimed = true
        lock.unlock()
        try advanceHash(wait: true)
        hashLock.lock()
        var final = hasher
        let complete = hashGeneration == generation && hashed == size
        hashLock.unlock()
        lock.lock()
        defer { lock.unlock() }
        guard complete, generation == self.generation, outcome == nil, let part else { return nil }
        let actual = final.finalizeHex()
        if actual == expectedMD5 {
            try part.sync()
            self.part = nil
            return .verified
        }
        mismatches += 1
        if mismatches >= 2 {
            self.part = nil
            PartFile.remove(partPath: partPath)
            let error = FetchError.checksumMismatch(file: target, expected: expectedMD5, actual: actual)
            outcome = .failure(error)
            return .failed(error)
        }
        try startFresh(single: rangeIgnored)
        return .retry(self.generation, segments.indices.map { $0 }, actual)
    }

    /// Records the end of the download; returns false when it had ended already.
    @discardableResult
    func end(_ result: Result<String, Error>) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        part = nil
        guard finished == nil else { return false }
        if outcome == nil { outcome = result }
        finished = Date()
        return true
    }

    /// What finishing found.
    enum Completion {
        case verified
        case retry(Int, [Int], String)
        case failed(FetchError)
    }
}
