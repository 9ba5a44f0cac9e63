/// A buffer of decoded bytes handed between a reader and its background thread through a `BlockingQueue`.
///
/// Sendable unchecked: a raw pointer, owned by one side at a time; whoever takes it from a queue frees it.
struct ChunkBuffer: @unchecked Sendable {
    /// The buffer's first byte.
    let base: UnsafeMutableRawPointer
    /// Bytes of it that hold data.
    var count: Int

    /// A new buffer of `capacity` bytes, holding none yet.
    static func allocate(capacity: Int) -> ChunkBuffer {
        ChunkBuffer(base: UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 64), count: 0)
    }

    /// Frees the buffer.
    func deallocate() { base.deallocate() }
}
