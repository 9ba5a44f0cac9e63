import Foundation

/// Wall-clock seconds an import spent in each phase, summed over its tables (monotonic clock).
///
/// Reading and inserting interleave record by record: `inserting` is the time spent binding and stepping rows,
/// `reading` the rest of each table's record loop, that is parsing plus waiting for the decompressor (which runs
/// on its own thread, so its work overlaps the inserts and only shows here when it is the slower side).
public struct PhaseTimes: Sendable, Codable, Equatable {
    /// Parsing records and waiting for decompressed bytes.
    public var reading = 0.0
    /// Binding and inserting rows, with the periodic commits of full loads.
    public var inserting = 0.0
    /// Building the indexes of full loads (and removing duplicate keys), counting their rows.
    public var indexes = 0.0
    /// Making tables visible: the final commit, renaming full loads into place, dropping the old tables.
    public var committing = 0.0
    /// Rebuilding the search index.
    public var searchIndex = 0.0
    /// Rebuilding derived data: the stored lookup documents.
    public var lookupDocuments = 0.0
    /// The WAL checkpoint at the end, and the switch to WAL after a first build.
    public var checkpoint = 0.0
    /// Everything else: opening the database, ordering inputs, the ledger.
    public var other = 0.0

    /// No time in any phase.
    public init() {}

    /// The sum of the phases a table load measures (`reading` ... `committing`).
    var tableSeconds: Double { reading + inserting + indexes + committing }

    /// Adds the table-load phases of `load` to these.
    mutating func add(tableLoad load: PhaseTimes) {
        reading += load.reading
        inserting += load.inserting
        indexes += load.indexes
        committing += load.committing
    }

    /// Sets `other` to what `total` leaves after the measured phases (never below 0).
    mutating func settle(total: Double) {
        other = max(0, total - tableSeconds - searchIndex - lookupDocuments - checkpoint)
    }
}

/// A monotonic clock in nanoseconds (`clock_gettime(CLOCK_MONOTONIC)` through Dispatch), cheap enough per record.
enum Monotonic {
    /// Nanoseconds since an arbitrary fixed point.
    @inline(__always)
    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// Seconds since `start` (a value of `now()`).
    @inline(__always)
    static func seconds(since start: UInt64) -> Double { Double(now() &- start) / 1e9 }
}
