import Foundation

/// A monotonic clock in nanoseconds (`clock_gettime(CLOCK_MONOTONIC)` through Dispatch).
package enum Monotonic {
    /// Nanoseconds since an arbitrary fixed point.
    @inline(__always)
    package static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// Seconds since `start` (a value of `now()`).
    @inline(__always)
    package static func seconds(since start: UInt64) -> Double { Double(now() &- start) / 1e9 }
}
