import EPFFormat
import EPFImport
import Foundation

/// The changes a merge found, in its order, kept until they are written: as records (item, storefront, change,
/// then the old price, the new price and the currency, each a length or -1 for NULL and its bytes) in a block of
/// about `blockBytes` (4 MiB unless told) in memory; full blocks go to a scratch file without a name next to the
/// database (`SpillFile`), which the system frees when it is closed, even after a kill.
///
/// A value, made by a `Builder` on the merge's thread and handed to the thread that writes them once the merge
/// has ended: nothing of it changes after that, so it is `Sendable` as the compiler checks.
struct FoundPriceChanges: Sendable {
    static let defaultBlockBytes = 4 << 20

    /// The last block, not spilled.
    private let block: [UInt8]
    /// The spilled blocks, each after its length, when a block was full.
    private let file: SpillFile?
    private let fileBytes: Int64
    /// How many changes were added.
    let count: Int

    /// Adds the changes one by one, on the merge's thread, until `finish` makes them a `FoundPriceChanges`.
    final class Builder: PriceTextSink {
        private let directory: String
        private let blockBytes: Int
        /// Only the merge's thread adds, and it hands the changes over only when it has ended: accesses go
        /// unchecked.
        @exclusivity(unchecked) private var block: [UInt8] = []
        @exclusivity(unchecked) private var file: SpillFile?
        @exclusivity(unchecked) private var fileBytes: Int64 = 0
        @exclusivity(unchecked) private var count = 0

        init(directory: String, blockBytes: Int = defaultBlockBytes) {
            self.directory = directory
            self.blockBytes = blockBytes
            block.reserveCapacity(blockBytes + 4096)
        }

        private func appendInteger<Value: FixedWidthInteger>(_ value: Value) {
            withUnsafeBytes(of: value) { block.append(contentsOf: $0) }
        }

        /// Starts the record of a change: `appendText` must then be called three times (old price, new price,
        /// currency). Moves the block to the file first when it is full.
        func add(item: Int64, storefront: Int64, change: PriceChange) throws {
            if block.count >= blockBytes { try spill() }
            appendInteger(item)
            appendInteger(storefront)
            block.append(change.rawValue)
            count += 1
        }

        func appendText(_ text: UnsafeRawBufferPointer?) {
            guard let text else {
                appendInteger(Int32(-1))
                return
            }
            appendInteger(Int32(text.count))
            block.append(contentsOf: text)
        }

        /// Writes the block to the file, after its length.
        private func spill() throws {
            if file == nil { file = try SpillFile(directory: directory, prefix: ".epf-price-changes") }
            guard let file else { return }
            try withUnsafeBytes(of: Int64(block.count)) { try file.write($0, at: fileBytes) }
            try block.withUnsafeBytes { try file.write($0, at: fileBytes + 8) }
            fileBytes += 8 + Int64(block.count)
            block.removeAll(keepingCapacity: true)
        }

        /// The changes added, handed over whole: the builder is not used after this.
        func finish() -> FoundPriceChanges {
            let changes = FoundPriceChanges(block: block, file: file, fileBytes: fileBytes, count: count)
            block = []
            file = nil
            return changes
        }
    }

    /// One change as `replay` gives it: the texts point into a buffer valid only during the call.
    struct Change {
        let item: Int64
        let storefront: Int64
        let change: PriceChange
        let oldPrice: UnsafeRawBufferPointer?
        let newPrice: UnsafeRawBufferPointer?
        let currency: UnsafeRawBufferPointer?
    }

    /// Calls `body` with every change, in the order they were added: the file's blocks, then the one in memory.
    func replay(_ body: (Change) throws -> Void) throws {
        if let file {
            var offset: Int64 = 0
            var buffer: [UInt8] = []
            while offset < fileBytes {
                var length: Int64 = 0
                try withUnsafeMutableBytes(of: &length) { try file.read(into: $0, at: offset) }
                guard length >= 0, length <= fileBytes - offset - 8 else {
                    throw EPFError.io(path: file.path, call: "pread", errno: EIO)
                }
                buffer = [UInt8](repeating: 0, count: Int(length))
                try buffer.withUnsafeMutableBytes { try file.read(into: $0, at: offset + 8) }
                try buffer.withUnsafeBytes { try Self.decode($0, body) }
                offset += 8 + length
            }
        }
        try block.withUnsafeBytes { try Self.decode($0, body) }
    }

    private static func decode(_ bytes: UnsafeRawBufferPointer, _ body: (Change) throws -> Void) throws {
        var offset = 0
        func text() -> UnsafeRawBufferPointer? {
            let length = Int(bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self))
            offset += 4
            guard length >= 0 else { return nil }
            defer { offset += length }
            return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + length)])
        }
        while offset < bytes.count {
            let item = bytes.loadUnaligned(fromByteOffset: offset, as: Int64.self)
            let storefront = bytes.loadUnaligned(fromByteOffset: offset + 8, as: Int64.self)
            guard let change = PriceChange(rawValue: bytes[offset + 16]) else {
                throw LoadFailure("the price changes kept during the merge are unreadable (byte \(offset + 16))")
            }
            offset += 17
            let oldPrice = text(), newPrice = text(), currency = text()
            try body(Change(item: item, storefront: storefront, change: change, oldPrice: oldPrice,
                            newPrice: newPrice, currency: currency))
        }
    }
}
