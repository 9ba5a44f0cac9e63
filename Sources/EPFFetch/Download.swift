import EPFFormat
import Foundation

/// One file being downloaded: its `.part`, its byte ranges, and the MD5 of the contiguous prefix written so far.
///
/// Several connections write ranges of the same file at once. The MD5 must see the bytes in order, so it follows a
/// watermark: a write that lands exactly at the watermark is hashed from memory as it streams; when a range ends,
/// the bytes after it that other connections already wrote are read back from the file (still in the page cache)
/// and hashed. One connection therefore hashes entirely while streaming. Every change happens under `lock`.
final class Download: @unchecked Sendable {
    let file: RemoteFile
    /// Where the verified file goes.
    let target: String
    let partPath: String
    let size: Int64
    let expectedMD5: String
    private let connections: Int
    private let minSplit: Int64

    let lock = NSLock()
    /// Bumped whenever the ranges are thrown away (restart from zero); jobs of an older generation stop.
    private(set) var generation = 0
    private(set) var segments: [Segment] = []
    private var part: PartFile?
    private var hasher = MD5()
    private var hashed: Int64 = 0
    private var lastSave = Date()
    /// Bytes that were already in the `.part` when this run started.
    private(set) var resumedBytes: Int64 = 0
    /// Bytes received in this run.
    private(set) var receivedBytes: Int64 = 0
    private(set) var mismatches = 0
    private(set) var rangeIgnored = false
    /// Set when the download ended: nil while running.
    private(set) var outcome: Result<String, Error>?
    var started: Date?
    var finished: Date?

    init(file: RemoteFile, target: String, size: Int64, expectedMD5: String, connections: Int, minSplit: Int64) {
        self.file = file
        self.target = target
        partPath = target + ".part"
        self.size = size
        self.expectedMD5 = expectedMD5
        self.connections = connections
        self.minSplit = minSplit
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
            try catchUpHash()
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
    private func startFresh(single: Bool = false) throws {
        part?.closeFile()
        PartFile.remove(partPath: partPath)
        part = try PartFile(path: partPath, size: size, fresh: true)
        let count = single || size < 2 * minSplit ? 1 : Int(min(Int64(connections), size / minSplit))
        let step = size / Int64(max(1, count))
        segments = (0..<max(1, count)).map { index in
            let start = Int64(index) * step
            return Segment(start: start, end: index == count - 1 ? size : start + step, done: 0)
        }
        hasher = MD5()
        hashed = 0
        generation += 1
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

    /// The current generation and the range to request for segment `index`, or nil when it is complete.
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
        return segments.count == 1 && segments[index].next == 0
    }

    /// Writes received bytes of segment `index`. Returns false when the job is obsolete or the server sent more
    /// than the range holds.
    func write(_ bytes: UnsafeRawBufferPointer, segment index: Int, generation: Int) throws -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard generation == self.generation, outcome == nil, let part else { return false }
        var segment = segments[index]
        let room = segment.end - segment.next
        let count = Int(min(Int64(bytes.count), room))
        guard count > 0 else { return false }
        let slice = UnsafeRawBufferPointer(rebasing: bytes[0..<count])
        try part.write(slice, at: segment.next)
        if segment.next == hashed {
            hasher.update(slice)
            hashed += Int64(count)
        }
        segment.done += Int64(count)
        segments[index] = segment
        receivedBytes += Int64(count)
        if segment.complete { try catchUpHash() }
        if segment.complete || Date().timeIntervalSince(lastSave) > 0.25 {
            try part.save(state())
            lastSave = Date()
        }
        return count == bytes.count
    }

    /// Hashes, from the file, the bytes after the watermark that are already written.
    private func catchUpHash() throws {
        guard let part else { return }
        var prefix: Int64 = 0
        for segment in segments.sorted(by: { $0.start < $1.start }) {
            guard segment.start <= prefix else { break }
            prefix = max(prefix, segment.next)
            if !segment.complete { break }
        }
        guard prefix > hashed else { return }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 64)
        defer { buffer.deallocate() }
        while hashed < prefix {
            let want = Int(min(Int64(buffer.count), prefix - hashed))
            let got = try part.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want]), at: hashed)
            guard got > 0 else { throw FetchError.io(path: partPath, call: "pread", errno: EIO) }
            hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<got]))
            hashed += Int64(got)
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

    /// When every range is written: checks the MD5. Returns `.verified` (the part is synced and closed, ready to
    /// rename), `.retry(generation)` after the first mismatch (the part was deleted and ranges reset), or
    /// `.failed` after the second. Returns nil when not complete or not this generation's.
    func finishIfComplete(generation: Int) throws -> Completion? {
        lock.lock()
        defer { lock.unlock() }
        guard generation == self.generation, outcome == nil, segments.allSatisfy(\.complete), let part else {
            return nil
        }
        try catchUpHash()
        var final = hasher
        let actual = final.finalizeHex()
        if actual == expectedMD5 {
            try part.sync()
            part.closeFile()
            self.part = nil
            return .verified
        }
        mismatches += 1
        if mismatches >= 2 {
            part.closeFile()
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
        part?.closeFile()
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
