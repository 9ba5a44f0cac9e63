import EPFConcurrency
import EPFSQLite

/// Reads one side of a `PriceTableMerge` on a thread of its own, through a read-only connection of its own, a
/// few items ahead of the merge: the old and the new price table are then read on both cores at once.
///
/// The connection sees the last committed state of the database: use it only in WAL mode (a reader never blocks
/// the writer then) and only for a table the writer's open transaction has not changed. Items are handed over in
/// batches of `batchItems` through a queue of at most `queuedBatches`, so memory stays bounded and each side takes
/// the lock (and wakes the other) once per batch, not once per item: woken for every item taken, the reader cost a
/// context switch per item on each side. `stop()` (also from `deinit`) ends the thread and waits for it, so the
/// connection is closed when it returns.
final class PriceTablePrefetch: PriceItemSource, Sendable {
    /// A batch of items read, or what stopped the reading.
    private typealias Batch = Result<[PriceItemRows], any Error>

    /// What the merge took from the queue and has not read yet; only `next` and `stop` touch it.
    private struct Taken: Sendable {
        var items: [PriceItemRows] = []
        /// The next item of `items` to give.
        var index = 0
        /// What stopped the reading, once seen: every later `next` throws it again.
        var failure: (any Error)?
        var stopped = false
    }

    private static let batchItems = 32
    private static let queuedBatches = 2

    private let queue: BlockingQueue<Batch>
    private let taken = Mutex(Taken())
    /// The reading thread; nil when it could not be started (the queue then holds why).
    private let thread: WorkerThread?

    /// Starts reading `sql` (key, storefront, price, currency in rowid order) from the database at `path`. When no
    /// thread can be started, the first `next` throws why.
    init(path: String, sql: String) {
        let queue = BlockingQueue<Batch>(capacity: Self.queuedBatches)
        self.queue = queue
        do {
            thread = try WorkerThread(name: "epf-price-prefetch") {
                PriceTablePrefetch.read(path: path, sql: sql, into: queue)
            }
        } catch {
            queue.push(.failure(error))
            queue.close()
            thread = nil
        }
    }

    deinit { stop() }

    /// The reading thread's work: batches of items into `queue` until the table ends, the queue is cancelled or a
    /// read fails (the failure is queued last); the queue is closed when it returns.
    private static func read(path: String, sql: String, into queue: BlockingQueue<Batch>) {
        defer { queue.close() }
        do {
            let connection = try SQLiteConnection(path: path, mode: .readOnly)
            var reader = PriceTableReader(try connection.prepare(sql))
            var rows = PriceItemRows()
            var batch: [PriceItemRows] = []
            batch.reserveCapacity(batchItems)
            while try reader.next(into: &rows) {
                batch.append(rows)
                if batch.count == batchItems {
                    guard queue.push(.success(batch)) else { return }
                    batch = []
                    batch.reserveCapacity(batchItems)
                }
            }
            if !batch.isEmpty { queue.push(.success(batch)) }
        } catch {
            queue.push(.failure(error))
        }
    }

    /// The next item, from the batch taken last or, when it is read, the next batch (waiting for the reader).
    /// The lock on `taken` is held while waiting: only the merge's thread calls this, and `stop` cancels the
    /// queue before it takes the lock, which ends the wait.
    func next(into rows: inout PriceItemRows) throws -> Bool {
        try taken.withLock { taken in
            if taken.index == taken.items.count {
                if taken.stopped { return false }
                if let failure = taken.failure { throw failure }
                switch queue.pop() {
                case nil:
                    return false
                case .failure(let error):
                    taken.failure = error
                    throw error
                case .success(let batch):
                    taken.items = batch
                    taken.index = 0
                }
            }
            rows = taken.items[taken.index]
            taken.index += 1
            return true
        }
    }

    /// Ends the reading thread (if still running) and waits until it has closed its connection; `next` then has
    /// nothing more.
    func stop() {
        queue.cancel()
        thread?.join()
        taken.withLock { $0 = Taken(stopped: true) }
    }
}
