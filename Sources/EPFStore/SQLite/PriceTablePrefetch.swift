import EPFSQLite
import Foundation

/// Reads one side of a `PriceTableMerge` on a thread of its own, through a read-only connection of its own, a
/// few items ahead of the merge: the old and the new price table are then read on both cores at once.
///
/// The connection sees the last committed state of the database: use it only in WAL mode (a reader never blocks
/// the writer then) and only for a table the writer's open transaction has not changed. At most `ahead` items wait
/// to be taken, so memory stays bounded. `stop()` (also from `deinit`) ends the thread and waits for it, so the
/// connection is closed when it returns.
final class PriceTablePrefetch: PriceItemSource, @unchecked Sendable {
    // Everything below `condition` is guarded by it.
    private let condition = NSCondition()
    private var ready: [PriceItemRows] = []
    private var finished = false
    private var failure: (any Error)?
    private var stopping = false
    private var running = true
    private static let ahead = 64

    /// Starts reading `sql` (key, storefront, price, currency in rowid order) from the database at `path`.
    init(path: String, sql: String) {
        let thread = Thread { [self] in
            read(path: path, sql: sql)
        }
        thread.name = "epf-price-prefetch"
        thread.start()
    }

    deinit { stop() }

    private func read(path: String, sql: String) {
        do {
            let connection = try SQLiteConnection(path: path, mode: .readOnly)
            var reader = PriceTableReader(try connection.prepare(sql))
            var rows = PriceItemRows()
            while try reader.next(into: &rows) {
                condition.lock()
                while ready.count >= Self.ahead && !stopping { condition.wait() }
                let stop = stopping
                if !stop { ready.append(rows) }
                condition.signal()
                condition.unlock()
                if stop { break }
            }
        } catch {
            condition.lock()
            failure = error
            condition.unlock()
        }
        condition.lock()
        finished = true
        running = false
        condition.broadcast()
        condition.unlock()
    }

    func next(into rows: inout PriceItemRows) throws -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while ready.isEmpty && !finished { condition.wait() }
        if !ready.isEmpty {
            rows = ready.removeFirst()
            // The reader waits once `ahead` items are ready and is woken when half are left, so it reads in bursts:
            // woken for every item taken, it cost a context switch per item on each side.
            if ready.count == Self.ahead / 2 { condition.signal() }
            return true
        }
        if let failure { throw failure }
        return false
    }

    /// Ends the reading thread (if still running) and waits until it has closed its connection.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while running { condition.wait() }
        ready.removeAll()
        condition.unlock()
    }
}
