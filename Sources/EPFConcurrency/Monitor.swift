import Glibc

/// A value guarded by a lock, whose holders can wait until another thread changes it: what `Mutex` does, plus a
/// condition variable. Use `Mutex` where no thread waits for a change.
///
/// Every `withLock` and `wait` wakes the waiters when its body returns, so a change can never go unannounced;
/// `read`, which cannot change the state, wakes nobody.
/// The corresponding C functions are `pthread_mutex_lock(3)`, `pthread_cond_wait(3)` and
/// `pthread_cond_broadcast(3)`; the timed wait measures on `CLOCK_MONOTONIC`.
package final class Monitor<State: Sendable>: @unchecked Sendable {  // `state` is only touched with `mutex` held.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var state: State

    /// A monitor holding `state`.
    package init(_ state: State) {
        self.state = state
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` on the state with the lock held, then wakes every waiter.
    @inline(__always)
    package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }
        return try body(&state)
    }

    /// Runs `body` on the state with the lock held, for a read: nothing changes, so no waiter is woken.
    @inline(__always)
    package func read<Result>(_ body: (State) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(state)
    }

    /// Blocks until `ready` holds for the state, then runs `body` on it with the lock held, then wakes every waiter.
    /// `ready` is evaluated with the lock held, first at once and again after every change another thread makes.
    @inline(__always)
    package func wait<Result>(until ready: (State) -> Bool, then body: (inout State) throws -> Result) rethrows
        -> Result {
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }
        while !ready(state) { pthread_cond_wait(condition, mutex) }
        return try body(&state)
    }

    /// Like `wait(until:then:)`, but waits at most `seconds`; `body` is told whether `ready` held (false: the time
    /// ran out first).
    package func wait<Result>(until ready: (State) -> Bool, atMost seconds: Double,
                             then body: (inout State, _ ready: Bool) throws -> Result) rethrows -> Result {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let nanoseconds = Int(deadline.tv_nsec) + Int(max(0, seconds) * 1e9)
        deadline.tv_sec += nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }
        while !ready(state) {
            if pthread_cond_timedwait(condition, mutex, &deadline) == ETIMEDOUT { break }
        }
        let isReady = ready(state)
        return try body(&state, isReady)
    }
}
