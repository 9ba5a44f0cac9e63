/// Builds EPF records straight into one large reusable byte buffer and hands whole records to a sink.
///
/// The hot loop appends integers and byte slices without making a `String` per field. Fields are separated
/// with 0x01 automatically; `endRecord` appends 0x02 0x0A. Bytes are flushed only between records, so every
/// chunk a sink receives holds whole records, and `recordOffset` is the uncompressed byte offset of the next
/// record in the table file.
final class RecordWriter {
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private(set) var count = 0
    private var atRecordStart = true
    private let sink: ByteSink
    private let flushThreshold: Int
    private(set) var flushedBytes: Int64 = 0
    /// Data records written so far (metadata records are not counted).
    private(set) var dataRecords = 0

    init(sink: ByteSink, flushThreshold: Int = 1 << 20) {
        self.sink = sink
        self.flushThreshold = flushThreshold
        capacity = flushThreshold * 2 + 4096
        base = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
    }

    deinit { base.deallocate() }

    /// Byte offset, in the uncompressed table file, where the next record starts.
    var recordOffset: Int64 { flushedBytes + Int64(count) }

    /// Total bytes produced so far.
    var totalBytes: Int64 { flushedBytes + Int64(count) }

    @inline(__always)
    private func reserve(_ extra: Int) {
        if count + extra > capacity { grow(extra) }
    }

    private func grow(_ extra: Int) {
        var newCapacity = capacity * 2
        while newCapacity < count + extra { newCapacity *= 2 }
        let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        bigger.update(from: base, count: count)
        base.deallocate()
        base = bigger
        capacity = newCapacity
    }

    @inline(__always)
    private func separator() {
        if atRecordStart {
            atRecordStart = false
        } else {
            reserve(1)
            base[count] = 0x01
            count += 1
        }
    }

    /// Appends one raw byte inside the current field (no separator).
    @inline(__always)
    func byte(_ value: UInt8) {
        reserve(1)
        base[count] = value
        count += 1
    }

    /// Appends raw bytes inside the current field (no separator).
    @inline(__always)
    func raw(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count)
        (base + count).update(from: source.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        count += bytes.count
    }

    /// Appends raw bytes inside the current field (no separator).
    @inline(__always)
    func raw(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw($0) }
    }

    /// Appends a static ASCII/UTF-8 literal inside the current field.
    @inline(__always)
    func raw(_ text: StaticString) {
        raw(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends the decimal digits of `value` inside the current field.
    @inline(__always)
    func digits(_ value: Int64) {
        reserve(21)
        var magnitude = value.magnitude
        if value < 0 {
            base[count] = UInt8(ascii: "-")
            count += 1
        }
        var length = 1
        var probe = magnitude / 10
        while probe > 0 {
            length += 1
            probe /= 10
        }
        var index = count + length
        repeat {
            index -= 1
            base[index] = UInt8(truncatingIfNeeded: magnitude % 10) &+ 48
            magnitude /= 10
        } while magnitude > 0
        count += length
    }

    /// Appends `value` zero-padded to `width` digits inside the current field (dates).
    @inline(__always)
    func padded(_ value: Int, width: Int) {
        var digitsCount = 1
        var probe = value / 10
        while probe > 0 { digitsCount += 1; probe /= 10 }
        for _ in digitsCount..<max(width, digitsCount) { byte(UInt8(ascii: "0")) }
        digits(Int64(value))
    }

    /// A new field holding an integer.
    @inline(__always)
    func int(_ value: Int64) {
        separator()
        digits(value)
    }

    /// A new field holding an integer.
    @inline(__always)
    func int(_ value: Int) { int(Int64(value)) }

    /// A new field holding `bytes`.
    @inline(__always)
    func text(_ bytes: [UInt8]) {
        separator()
        raw(bytes)
    }

    /// A new field holding a literal.
    @inline(__always)
    func text(_ literal: StaticString) {
        separator()
        raw(literal)
    }

    /// A new field holding `bytes`.
    @inline(__always)
    func text(_ bytes: UnsafeRawBufferPointer) {
        separator()
        raw(bytes)
    }

    /// A new, empty field: NULL.
    @inline(__always)
    func null() { separator() }

    /// Starts a new field whose content the caller appends with `raw`, `byte` or `digits`.
    @inline(__always)
    func beginField() { separator() }

    /// Ends a data record.
    @inline(__always)
    func endRecord() throws {
        endAnyRecord()
        dataRecords += 1
        if count >= flushThreshold { try flush() }
    }

    /// Ends a metadata record (header or footer), which is not counted as data.
    func endMetadataRecord() {
        endAnyRecord()
    }

    @inline(__always)
    private func endAnyRecord() {
        reserve(2)
        base[count] = 0x02
        base[count + 1] = 0x0A
        count += 2
        atRecordStart = true
    }

    /// Hands the buffered (whole) records to the sink.
    func flush() throws {
        guard count > 0 else { return }
        try sink.write(UnsafeRawBufferPointer(start: base, count: count))
        flushedBytes += Int64(count)
        count = 0
    }

    /// Flushes and finishes the sink chain.
    func finish() throws {
        try flush()
        try sink.finish()
    }
}
