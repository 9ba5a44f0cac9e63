import EPFFormat
import EPFImport
import EPFSQLite
import Foundation

/// A full's price merge (`PriceTableMerge`) run while the load builds the staging table's indexes and commits:
/// the merge reads both tables in rowid order and needs no index, so its work moves off the swap, where it held
/// the whole import up, onto the core the single-threaded index build leaves idle.
///
/// Both tables must be committed and left alone until `result()` is taken: the old table is the live one, the
/// staging table is committed at the end of its last part (`TableLoad.checkpointsPartEnds`). In WAL mode each is
/// read on a connection and thread of its own (`PriceTablePrefetch`); what the merge finds is kept in order
/// (`FoundPriceChanges`) and written by the swap's transaction, so a refused or interrupted load records nothing.
final class BackgroundPriceMerge: @unchecked Sendable {
    /// How the merge ended.
    enum Ending {
        /// It ran to the end: the changes, in key order.
        case found(FoundPriceChanges)
        /// A table was not grouped by item in ascending order: the caller merges through the key indexes instead.
        case outOfOrder
    }

    // Everything below `condition` is guarded by it.
    private let condition = NSCondition()
    private var ending: Result<Ending, any Error>?
    private var finished = false
    private var cancelled = false
    /// The readers of both tables, while the merge runs.
    private var readers: [PriceTablePrefetch] = []

    /// Starts merging `oldSQL`'s rows with `newSQL`'s (each a `PriceTableReader.query` in rowid order) from the
    /// database at `path`, keeping what it finds in `directory` past blocks of `blockBytes`.
    init(path: String, oldSQL: String, newSQL: String, directory: String,
         blockBytes: Int = FoundPriceChanges.defaultBlockBytes) {
        let thread = Thread { [self] in
            let ending = Result {
                try merge(path: path, oldSQL: oldSQL, newSQL: newSQL,
                          changes: FoundPriceChanges(directory: directory, blockBytes: blockBytes))
            }
            condition.lock()
            self.ending = ending
            finished = true
            condition.broadcast()
            condition.unlock()
        }
        thread.name = "epf-price-merge"
        thread.start()
    }

    deinit { cancel() }

    private var isCancelled: Bool {
        condition.lock()
        defer { condition.unlock() }
        return cancelled
    }

    private func merge(path: String, oldSQL: String, newSQL: String, changes: FoundPriceChanges) throws -> Ending {
        let old = PriceTablePrefetch(path: path, sql: oldSQL)
        defer { old.stop() }
        let new = PriceTablePrefetch(path: path, sql: newSQL)
        defer { new.stop() }
        condition.lock()
        readers = [old, new]
        let cancelledAlready = cancelled
        condition.unlock()
        defer {
            condition.lock()
            readers = []
            condition.unlock()
        }
        guard !cancelledAlready else { throw CancellationError() }
        var merge = PriceTableMerge(old: old, new: new)
        do {
            try merge.run { found in
                try changes.add(item: found.item, storefront: found.storefront, change: found.change)
                found.appendTexts(to: changes)
            }
        } catch is PriceTableOutOfOrder {
            return .outOfOrder
        }
        // A cancel stops the readers, which then end as if their tables did: what was found is not all.
        guard !isCancelled else { throw CancellationError() }
        return .found(changes)
    }

    /// Waits for the merge and returns how it ended; rethrows what stopped it (a database or scratch-file error).
    func result() throws -> Ending {
        condition.lock()
        defer { condition.unlock() }
        while !finished { condition.wait() }
        guard let ending else { throw CancellationError() }
        return try ending.get()
    }

    /// Stops the merge (when the load is refused or fails before the swap) and waits until its thread and
    /// connections are gone. Does nothing once it has ended.
    func cancel() {
        condition.lock()
        cancelled = true
        let running = readers
        condition.unlock()
        for reader in running { reader.stop() }
        condition.lock()
        while !finished { condition.wait() }
        condition.unlock()
    }
}

/// The changes a merge found, in its order, kept until they are written: as records (item, storefront, change,
/// then the old price, the new price and the currency, each a length or -1 for NULL and its bytes) in a block of
/// about `blockBytes` (4 MiB unless told) in memory; full blocks go to a scratch file without a name next to the database
/// (`SpillFile`), which the system frees when it is closed, even after a kill.
final class FoundPriceChanges: PriceTextSink {
    static let defaultBlockBytes = 4 << 20
    private let directory: String
    private let blockBytes: Int
    /// Only the merge's thread adds, and only after it has ended are the changes read: accesses go unchecked.
    @exclusivity(unchecked) private var block: [UInt8] = []
    @exclusivity(unchecked) private var file: SpillFile?
    @exclusivity(unchecked) private var fileBytes: Int64 = 0
    /// How many changes were added.
    @exclusivity(unchecked) private(set) var count = 0

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
