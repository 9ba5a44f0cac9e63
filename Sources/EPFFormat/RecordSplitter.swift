import Foundation

/// Splits a byte stream into records at `0x02 0x0A` (or `\n` for EPF Flat), across any chunk boundary, with a
/// buffer that only grows to hold the largest single record.
final class RecordSplitter {
    private let source: ByteSource
    private let readSize: Int
    private var buffer: UnsafeMutableRawPointer
    private var capacity: Int
    private(set) var start = 0
    private var end = 0
    private var scan = 0
    private var atEnd = false
    /// Stream offset of `buffer[0]`.
    private var bufferOffset: Int64 = 0
    var flat = false

    private let maximumRecordBytes: Int
    private let location: String

    /// The mapped file being split in place, when there is one (then `buffer` is its first byte).
    private let mapped: MappedFile?
    /// Mapped files: the largest record the buffered splitter would have held (it throws past that), and where
    /// the pages behind the reader have been released up to.
    private var mappedLimit = 0
    private var releasedUpTo = 0

    init(source: ByteSource, readSize: Int, maximumRecordBytes: Int = 256 << 20, location: String = "") {
        self.source = source
        self.maximumRecordBytes = maximumRecordBytes
        self.location = location
        self.readSize = max(1, readSize)
        capacity = max(1 << 16, min(self.readSize, 1 << 22))
        buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity + 8, alignment: 64)
        mapped = nil
    }

    /// Splits a mapped file in place: no reads, no copies. Records and errors are exactly those of reading the
    /// same file through a `FileByteSource` with `readSize`.
    init(mapped file: MappedFile, readSize: Int, maximumRecordBytes: Int = 256 << 20, location: String = "") {
        source = EmptySource()
        self.maximumRecordBytes = maximumRecordBytes
        self.location = location
        self.readSize = max(1, readSize)
        // The buffered splitter's buffer starts at this size and doubles up to maximumRecordBytes (never shrinking
        // below its start); a record that does not fit in it is an error.
        let initial = max(1 << 16, min(self.readSize, 1 << 22))
        mappedLimit = max(initial, maximumRecordBytes)
        mapped = file
        buffer = UnsafeMutableRawPointer(mutating: file.base)
        capacity = file.count
        end = file.count
        atEnd = true
    }

    deinit {
        if mapped == nil { buffer.deallocate() }
    }

    var base: UnsafeMutableRawPointer { buffer }

    /// Looks at the first 64 KiB to tell relational files (records end in 0x02 0x0A) from EPF Flat files
    /// (tab-separated lines). Sets `flat` and returns it.
    func sniffFlat() throws -> Bool {
        while end < min(capacity, 1 << 16) && !atEnd { try refill() }
        var index = 0
        while index < end, let found = memchr(buffer + index, 0x02, end - index) {
            let position = buffer.distance(to: found)
            if position + 1 < end && buffer.load(fromByteOffset: position + 1, as: UInt8.self) == 0x0A { return false }
            index = position + 1
        }
        guard let newline = memchr(buffer, 0x0A, end) else { return false }
        let lineLength = buffer.distance(to: newline)
        let hasTab = memchr(buffer, 0x09, lineLength) != nil
        let hasSOH = memchr(buffer, 0x01, lineLength) != nil
        flat = hasTab && !hasSOH
        return flat
    }

    /// Stream offset just past everything consumed.
    var consumedOffset: Int64 { bufferOffset + Int64(start) }

    /// Bytes read from the source so far.
    var totalRead: Int64 { bufferOffset + Int64(end) }

    private func refill() throws {
        if start > 0 {
            let live = end - start
            if live > 0 { memmove(buffer, buffer + start, live) }
            bufferOffset += Int64(start)
            scan -= start
            end = live
            start = 0
        }
        if end == capacity {
            guard capacity < maximumRecordBytes else {
                throw EPFError.recordTooLarge(location: location, offset: bufferOffset, limit: maximumRecordBytes)
            }
            let newCapacity = min(capacity * 2, maximumRecordBytes)
            let bigger = UnsafeMutableRawPointer.allocate(byteCount: newCapacity + 8, alignment: 64)
            bigger.copyMemory(from: buffer, byteCount: end)
            buffer.deallocate()
            buffer = bigger
            capacity = newCapacity
        }
        let wanted = min(capacity - end, readSize)
        let count = try source.read(into: UnsafeMutableRawBufferPointer(start: buffer + end, count: wanted))
        if count == 0 { atEnd = true }
        end += count
    }

    /// The next record as (start, length, stream offset, terminated) in `base`, valid until the next call;
    /// nil at the end of the stream.
    @inline(__always)
    func next() throws -> (start: Int, length: Int, offset: Int64, terminated: Bool)? {
        guard let mapped else { return try nextBuffered() }
        guard let record = try nextBuffered() else { return nil }
        // The bytes the buffered splitter must have held at once to return this record: the record and its
        // terminator, or, for a final record without one, the record and room to see the end of the file.
        let held = record.terminated ? start - record.start : record.length + 1
        if held > mappedLimit {
            throw EPFError.recordTooLarge(location: location, offset: record.offset, limit: maximumRecordBytes)
        }
        // Keep the mapping small: drop the pages well behind the reader.
        if record.start - releasedUpTo >= Self.releaseStep {
            mapped.release(releasedUpTo, record.start)
            releasedUpTo = record.start / MappedFile.pageSize * MappedFile.pageSize
        }
        return record
    }

    /// How far the reader moves in a mapped file between releases of the pages behind it.
    static let releaseStep = 4 << 20

    @inline(__always)
    private func nextBuffered() throws -> (start: Int, length: Int, offset: Int64, terminated: Bool)? {
        let mark: Int32 = flat ? 0x0A : 0x02
        while true {
            if scan < end, let found = memchr(buffer + scan, mark, end - scan) {
                let position = buffer.distance(to: found)
                if flat {
                    let recordStart = start
                    var length = position - recordStart
                    if length > 0 && buffer.load(fromByteOffset: position - 1, as: UInt8.self) == 0x0D { length -= 1 }
                    start = position + 1
                    scan = start
                    return (recordStart, length, bufferOffset + Int64(recordStart), true)
                }
                if position + 1 < end {
                    if buffer.load(fromByteOffset: position + 1, as: UInt8.self) == 0x0A {
                        let recordStart = start
                        start = position + 2
                        scan = start
                        return (recordStart, position - recordStart, bufferOffset + Int64(recordStart), true)
                    }
                    scan = position + 1
                    continue
                }
                if atEnd {
                    scan = end
                    continue
                }
                // The 0x02 is the last byte we have: read more and look at it again.
                scan = position
                try refill()
                continue
            }
            scan = end
            if atEnd {
                guard start < end else { return nil }
                let recordStart = start
                start = end
                scan = end
                return (recordStart, end - recordStart, bufferOffset + Int64(recordStart), false)
            }
            try refill()
        }
    }
}

/// The source of a splitter that splits a mapped file: never read.
private final class EmptySource: ByteSource {
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int { 0 }
}
