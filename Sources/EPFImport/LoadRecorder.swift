/// What a table load records beside its rows (the price history, `PriceHistory`), told of the load's life by the
/// load itself, in this order:
/// 1. `began`: the load's transaction is open, before its first row;
/// 2. `rowWritten`: after each row written (the hot path: it costs a check when there is nothing to do);
/// 3. `commitsPartEnds`, asked as each part ends: whether the load must commit there for `willPublish` to read
///    its rows from connections of its own;
/// 4. `willPublish`: every row is written (and committed where the store commits), before the work that leads up
///    to making them visible (a full's index builds, an incremental's upsert);
/// 5. `publish`: inside the transaction that makes the rows visible, so a refused load records nothing;
/// 6. `abort`, instead of `publish`, when the load is refused: nothing is recorded, and what the recorder started
///    (a hook, a thread) ends.
/// A recorder that ends early (abort, or released before publishing) removes whatever it installed itself.
/// Each store's recorder names its `Target`: the connection (and tables) its calls act on.
package protocol LoadRecorder: AnyObject {
    /// What the calls act on: the store's connection.
    associatedtype Target
    /// The load's transaction is open.
    func began(_ target: Target) throws
    /// A row was written; `exportDate` is the load's so far.
    func rowWritten(_ target: Target, exportDate: Int64?) throws
    /// Whether the end of each part must be committed (asked as parts end).
    var commitsPartEnds: Bool { get }
    /// Every row is written: what can be done before the publishing transaction starts.
    func willPublish(_ target: Target) throws
    /// Records what the load changes, inside the transaction that publishes it.
    func publish(_ target: Target, exportDate: Int64?) throws
    /// The load is refused: records nothing, stops what was started.
    func abort(_ target: Target)
}
