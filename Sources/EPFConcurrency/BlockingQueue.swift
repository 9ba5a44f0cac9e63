/// A first-in first-out queue between threads, bounded: `push` blocks while it is full, `pop` while it is empty.
///
/// `close()` ends the stream: pushes are refused, pops drain what is queued and then return nil. `cancel()` stops
/// it at once: every waiter wakes, pushes are refused, pops return nil, and what was queued is handed back to the
/// caller (to free it). A refused push leaves the element with its caller.
package final class BlockingQueue<Element: Sendable>: Sendable {
    private struct State: Sendable {
        var items: [Element] = []
        /// Index of the first item of `items` still queued (items before it are taken, compacted lazily).
        var head = 0
        var closed = false
        var cancelled = false
        /// Pops blocked on an empty queue.
        var waitingPops = 0

        var count: Int { items.count - head }

        mutating func takeFirst() -> Element {
            let item = items[head]
            head += 1
            if head >= 64 && head * 2 >= items.count {
                items.removeFirst(head)
                head = 0
            }
            return item
        }
    }

    private let monitor = Monitor(State())
    /// Most elements queued at once.
    package let capacity: Int

    /// An empty open queue of at most `capacity` (at least 1) elements.
    package init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Queues `element`, blocking while the queue is full. Returns false, without queueing it, when the queue is
    /// (or becomes, while this waits) closed or cancelled.
    @discardableResult
    package func push(_ element: Element) -> Bool {
        let capacity = self.capacity
        return monitor.wait(until: { $0.count < capacity || $0.closed || $0.cancelled }) { state in
            guard !state.closed && !state.cancelled else { return false }
            state.items.append(element)
            return true
        }
    }

    /// The first element, blocking while the queue is empty and open; nil once it is closed and drained, or
    /// cancelled.
    package func pop() -> Element? {
        let immediate: Element?? = monitor.withLock { state in
            if state.cancelled { return .some(nil) }
            if state.count > 0 { return .some(state.takeFirst()) }
            if state.closed { return .some(nil) }
            state.waitingPops += 1
            return nil
        }
        if let immediate { return immediate }
        return monitor.wait(until: { $0.count > 0 || $0.closed || $0.cancelled }) { state in
            state.waitingPops -= 1
            guard !state.cancelled, state.count > 0 else { return nil }
            return state.takeFirst()
        }
    }

    /// Ends the stream: later pushes are refused; pops get what is queued, then nil.
    package func close() {
        monitor.withLock { $0.closed = true }
    }

    /// Stops the queue at once and wakes every waiter; returns the elements that were queued.
    @discardableResult
    package func cancel() -> [Element] {
        monitor.withLock { state in
            state.cancelled = true
            let left = Array(state.items[state.head...])
            state.items = []
            state.head = 0
            return left
        }
    }

    /// Whether `cancel()` was called.
    package var isCancelled: Bool {
        monitor.read { $0.cancelled }
    }

    /// Whether a `pop` is blocked waiting for an element (the consumer is ahead of the producer).
    package var hasWaitingConsumer: Bool {
        monitor.read { $0.count == 0 && $0.waitingPops > 0 }
    }

    /// Elements queued now.
    package var count: Int {
        monitor.read { $0.count }
    }
}
