/// A growable buffer of plain values for a page being gathered: appends without an Array's reference counting and
/// uniqueness checks (a quarter of an export's time went to those). The owner calls `deallocate` once.
struct RawBytes {
    private(set) var base: UnsafeMutableRawPointer
    /// Bytes in use.
    private(set) var count = 0
    private var capacity: Int

    init(capacity: Int = 4096) {
        self.capacity = capacity
        base = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
    }

    /// The bytes in use.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

    @inline(__always)
    mutating func append<Value>(_ value: Value) {
        let size = MemoryLayout<Value>.size
        if count + size > capacity { grow(to: count + size) }
        base.storeBytes(of: value, toByteOffset: count, as: Value.self)
        count += size
    }

    @inline(__always)
    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        if count + bytes.count > capacity { grow(to: count + bytes.count) }
        (base + count).copyMemory(from: source, byteCount: bytes.count)
        count += bytes.count
    }

    /// The `index`th value of type `Value` (all appended values of one type).
    @inline(__always)
    func load<Value>(_ index: Int, as type: Value.Type) -> Value {
        base.load(fromByteOffset: index * MemoryLayout<Value>.stride, as: Value.self)
    }

    mutating func removeAll() { count = 0 }

    func deallocate() { base.deallocate() }

    private mutating func grow(to needed: Int) {
        var larger = capacity * 2
        while larger < needed { larger *= 2 }
        let moved = UnsafeMutableRawPointer.allocate(byteCount: larger, alignment: 16)
        moved.copyMemory(from: base, byteCount: count)
        base.deallocate()
        base = moved
        capacity = larger
    }
}
