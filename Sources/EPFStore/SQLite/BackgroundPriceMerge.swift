import EPFConcurrency

/// A full's price merge (`PriceTableMerge`) run while the load builds the staging table's indexes and commits:
/// the merge reads both tables in rowid order and needs no index, so its work moves off the swap, where it held
/// the whole import up, onto the core the single-threaded index build leaves idle.
///
/// Both tables must be committed and left alone until `result()` is taken: the old table is the live one, the
/// staging table is committed at the end of its last part (`TableLoad.checkpointsPartEnds`). In WAL mode each is
/// read on a connection and thread of its own (`PriceTablePrefetch`); what the merge finds is kept in order
/// (`FoundPriceChanges`) and written by the swap's transaction, so a refused or interrupted load records nothing.
final class BackgroundPriceMerge: Sendable {
    /// How the merge ended.
    enum Ending: Sendable {
        /// It ran to the end: the changes, in key order.
        case found(FoundPriceChanges)
        /// A table was not grouped by item in ascending order: the caller merges through the key indexes instead.
        case outOfOrder
    }

    /// What the merge's thread and its owner share.
    private struct Progress: Sendable {
        /// How the merge ended, once it has (nil with `finished`: it could not start).
        var ending: Result<Ending, any Error>?
        var finished = false
        var cancelled = false
        /// The readers of both tables, while the merge runs.
        var readers: [PriceTablePrefetch] = []
    }

    private let progress: Monitor<Progress>
    /// The merge's thread; nil when it could not be started (`result()` then throws why).
    private let thread: WorkerThread?

    /// Starts merging `oldSQL`'s rows with `newSQL`'s (each a `PriceTableReader.query` in rowid order) from the
    /// database at `path`, keeping what it finds in `directory` past blocks of `blockBytes`.
    init(path: String, oldSQL: String, newSQL: String, directory: String,
         blockBytes: Int = FoundPriceChanges.defaultBlockBytes) {
        let progress = Monitor(Progress())
        self.progress = progress
        do {
            thread = try WorkerThread(name: "epf-price-merge") {
                let ending = Result {
                    try BackgroundPriceMerge.merge(path: path, oldSQL: oldSQL, newSQL: newSQL, progress: progress,
                                                   changes: FoundPriceChanges.Builder(directory: directory,
                                                                                      blockBytes: blockBytes))
                }
                progress.withLock { progress in
                    progress.ending = ending
                    progress.finished = true
                }
            }
        } catch {
            progress.withLock { progress in
                progress.ending = .failure(error)
                progress.finished = true
            }
            thread = nil
        }
    }

    deinit { cancel() }

    private static func merge(path: String, oldSQL: String, newSQL: String, progress: Monitor<Progress>,
                              changes: FoundPriceChanges.Builder) throws -> Ending {
        let old = PriceTablePrefetch(path: path, sql: oldSQL)
        defer { old.stop() }
        let new = PriceTablePrefetch(path: path, sql: newSQL)
        defer { new.stop() }
        let cancelledAlready = progress.withLock { progress in
            progress.readers = [old, new]
            return progress.cancelled
        }
        defer { progress.withLock { $0.readers = [] } }
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
        guard !progress.read({ $0.cancelled }) else { throw CancellationError() }
        return .found(changes.finish())
    }

    /// Waits for the merge and returns how it ended; rethrows what stopped it (a database or scratch-file error).
    func result() throws -> Ending {
        let ending = progress.wait(until: { $0.finished }) { $0.ending }
        guard let ending else { throw CancellationError() }
        return try ending.get()
    }

    /// Stops the merge (when the load is refused or fails before the swap) and waits until its thread and
    /// connections are gone. Does nothing once it has ended.
    func cancel() {
        let running = progress.withLock { progress in
            progress.cancelled = true
            return progress.readers
        }
        for reader in running { reader.stop() }
        progress.wait(until: { $0.finished }) { _ in }
        thread?.join()
    }
}
