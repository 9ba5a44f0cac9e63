import CSQLite
import Glibc

/// The deadline a progress handler checks (see `SQLiteConnection.withTimeLimit`).
private final class TimeLimitDeadline {
    let nanoseconds: UInt64
    init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }
}

/// SQLite's progress callback: non-zero interrupts the running statement with `SQLITE_INTERRUPT`.
private let timeLimitCallback: @convention(c) (UnsafeMutableRawPointer?) -> Int32 = { context in
    guard let context else { return 0 }
    let deadline = Unmanaged<TimeLimitDeadline>.fromOpaque(context).takeUnretainedValue()
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    let nanoseconds = UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
    return nanoseconds >= deadline.nanoseconds ? 1 : 0
}

extension SQLiteConnection {
    /// Runs `body` with every statement of this connection interrupted once `milliseconds` have passed: a
    /// statement still running then fails with `SQLiteError` code `SQLITE_INTERRUPT` (see `isInterrupt`). For
    /// work that must not hold a thread for long (an HTTP event loop). Not nested: an inner call replaces the outer
    /// limit until it returns, then removes it.
    ///
    /// The corresponding C call is `sqlite3_progress_handler(db, N, callback, deadline)`: the deadline is checked
    /// every 1,000 virtual-machine instructions, or every one when the limit is under 10 ms (short queries run
    /// fewer than 1,000).
    package func withTimeLimit<T>(milliseconds: Int, _ body: () throws -> T) rethrows -> T {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let start = UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
        let deadline = TimeLimitDeadline(nanoseconds: start &+ UInt64(max(0, milliseconds)) &* 1_000_000)
        let context = Unmanaged.passRetained(deadline)
        sqlite3_progress_handler(handle, milliseconds < 10 ? 1 : 1000, timeLimitCallback, context.toOpaque())
        defer {
            sqlite3_progress_handler(handle, 0, nil, nil)
            context.release()
        }
        return try body()
    }
}

extension SQLiteError {
    /// Whether a statement was interrupted (`SQLITE_INTERRUPT`), by `withTimeLimit`'s deadline or otherwise.
    package var isInterrupt: Bool { code & 0xff == SQLITE_INTERRUPT }
}
