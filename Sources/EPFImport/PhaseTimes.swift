import Foundation

/// Wall-clock seconds an import spent in each phase, summed over its tables (monotonic clock).
///
/// Reading and inserting interleave record by record: `inserting` is the time spent binding and stepping rows,
/// `reading` the rest of each table's record loop, that is parsing plus waiting for the decompressor (which runs
/// on its own thread, so its work overlaps the inserts and only shows here when it is the slower side).
package struct PhaseTimes: Sendable, Codable, Equatable {
    /// Parsing records and waiting for decompressed bytes.
    package var reading = 0.0
    /// Binding and inserting rows, with the periodic commits of full loads.
    package var inserting = 0.0
    /// Building the indexes of full loads (and removing duplicate keys), counting their rows.
    package var indexes = 0.0
    /// Making tables visible: the final commit, renaming full loads into place, dropping the old tables.
    package var committing = 0.0
    /// Of `committing`: recording price changes (`--history prices`); 0 when the import does not record them.
    package var priceHistory = 0.0
    /// Of `committing`: recording each day's charts (`--history ranks`); 0 when the import does not record them.
    package var rankHistory = 0.0
    /// Rebuilding the search index.
    package var searchIndex = 0.0
    /// Rebuilding derived data: the stored lookup documents.
    package var lookupDocuments = 0.0
    /// The WAL checkpoint at the end, and the switch to WAL after a first build.
    package var checkpoint = 0.0
    /// Everything else: opening the database, ordering inputs, the ledger.
    package var other = 0.0

    /// No time in any phase.
    package init() {}

    /// The sum of the phases a table load measures (`reading` ... `committing`).
    var tableSeconds: Double { reading + inserting + indexes + committing }

    /// Adds the table-load phases of `load` to these.
    package mutating func add(tableLoad load: PhaseTimes) {
        reading += load.reading
        inserting += load.inserting
        indexes += load.indexes
        committing += load.committing
        priceHistory += load.priceHistory
        rankHistory += load.rankHistory
    }

    /// Sets `other` to what `total` leaves after the measured phases (never below 0).
    mutating func settle(total: Double) {
        other = max(0, total - tableSeconds - searchIndex - lookupDocuments - checkpoint)
    }
}

/// CPU seconds of the whole process (all threads: the decompressor and SQLite's helpers too) in each phase.
///
/// Unlike wall-clock times, these do not grow when other programs share the cores, so they show how each phase
/// scales on a busy machine. The record loops are one figure: parsing, inserting and decompression overlap.
package struct PhaseCPU: Sendable, Codable, Equatable {
    /// Record loops of the table loads: decompression, parsing, inserting, the periodic commits.
    package var loading = 0.0
    /// Index builds of full loads.
    package var indexes = 0.0
    /// Final commits and swaps.
    package var committing = 0.0
    /// Of `committing`: recording price changes (`--history prices`).
    package var priceHistory = 0.0
    /// Of `committing`: recording each day's charts (`--history ranks`).
    package var rankHistory = 0.0
    /// The search index.
    package var searchIndex = 0.0
    /// The lookup documents (and any other derived data).
    package var lookupDocuments = 0.0
    /// The WAL checkpoint and the switch to WAL.
    package var checkpoint = 0.0
    /// The whole run.
    package var total = 0.0

    /// No CPU time in any phase.
    package init() {}

    /// Adds the table-load phases of `load` to these.
    package mutating func add(tableLoad load: PhaseCPU) {
        loading += load.loading
        indexes += load.indexes
        committing += load.committing
        priceHistory += load.priceHistory
        rankHistory += load.rankHistory
    }

    /// CPU seconds (user + system) the process has used so far (`getrusage(2)`; 0 if it fails).
    package static func now() -> Double {
        var usage = rusage()
        guard getrusage(RUSAGE_SELF.rawValue, &usage) == 0 else { return 0 }
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }
}

/// A phase of an import that both clocks measure (`PhaseTimes` and `PhaseCPU`).
package enum Phase {
    case indexes, committing, searchIndex, lookupDocuments, checkpoint
    /// Part of `committing`, also counted there: timed only around a recorder that exists, so an import that
    /// records no history has none of either.
    case priceHistory, rankHistory

    var wall: WritableKeyPath<PhaseTimes, Double> {
        switch self {
        case .indexes: return \.indexes
        case .committing: return \.committing
        case .searchIndex: return \.searchIndex
        case .lookupDocuments: return \.lookupDocuments
        case .checkpoint: return \.checkpoint
        case .priceHistory: return \.priceHistory
        case .rankHistory: return \.rankHistory
        }
    }

    var cpu: WritableKeyPath<PhaseCPU, Double> {
        switch self {
        case .indexes: return \.indexes
        case .committing: return \.committing
        case .searchIndex: return \.searchIndex
        case .lookupDocuments: return \.lookupDocuments
        case .checkpoint: return \.checkpoint
        case .priceHistory: return \.priceHistory
        case .rankHistory: return \.rankHistory
        }
    }
}

/// Both clocks of a phase, started when made: wall time (monotonic) and the process's CPU time.
package struct PhaseClock {
    private let wallStart = Monotonic.now()
    private let cpuStart = PhaseCPU.now()

    package init() {}

    /// Wall-clock nanoseconds since the clock started.
    var wallNanoseconds: UInt64 { Monotonic.now() &- wallStart }

    /// Process CPU seconds since the clock started.
    var cpuSeconds: Double { PhaseCPU.now() - cpuStart }

    /// Adds the time since the clock started to `phase` in both `times` and `cpu`.
    package func stop(_ phase: Phase, _ times: inout PhaseTimes, _ cpu: inout PhaseCPU) {
        times[keyPath: phase.wall] += Double(wallNanoseconds) / 1e9
        cpu[keyPath: phase.cpu] += cpuSeconds
    }
}
