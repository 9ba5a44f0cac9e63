import Glibc

/// A value behind a lock: the API of Synchronization's `Mutex` (`withLock`, `withLockIfAvailable`), over a pthread
/// mutex. Synchronization's own is not used because ThreadSanitizer cannot see it on Linux (Swift 6.3): its lock
/// lives in a module built without the sanitizer, so every access it guards is reported as a race, and CI runs the
/// tests under ThreadSanitizer. Where a thread waits for the value to change, use `Monitor`.
///
/// The corresponding C functions are `pthread_mutex_lock(3)`, `pthread_mutex_trylock(3)` and
/// `pthread_mutex_unlock(3)`.
package final class Mutex<Value: Sendable>: @unchecked Sendable {  // `value` is only touched with `mutex` held.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    /// A mutex holding `value`.
    package init(_ value: Value) {
        self.value = value
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` on the value with the lock held, waiting for the lock when another thread holds it.
    @inline(__always)
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }

    /// Runs `body` on the value with the lock held if the lock is free now; nil, without running it, when another
    /// thread holds it.
    @inline(__always)
    package func withLockIfAvailable<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result? {
        guard pthread_mutex_trylock(mutex) == 0 else { return nil }
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
