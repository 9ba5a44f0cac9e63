import EPFConcurrency
import Foundation
import Glibc
import Testing

@Suite struct WorkerThreadTests {
    /// `join` returns only once the closure has, and a second join returns at once.
    @Test func joinWaitsForTheClosure() throws {
        let done = Monitor(false)
        let thread = try WorkerThread(name: "test-join") {
            usleep(30_000)
            done.withLock { $0 = true }
        }
        thread.join()
        #expect(done.withLock { $0 })
        thread.join()
    }

    /// Dropping the last reference joins: a worker blocked on a queue, woken by its cancellation, has returned by
    /// the time its owner is gone, so no thread is left running.
    @Test func droppingTheOwnerJoinsTheThread() throws {
        let queue = BlockingQueue<Int>(capacity: 1)
        let finished = Monitor(false)
        do {
            let owner = try Owner(queue: queue, finished: finished)
            BlockingQueueTests.waitUntil { queue.hasWaitingConsumer }
            #expect(!finished.withLock { $0 })
            _ = owner
        }
        #expect(finished.withLock { $0 })
    }

    /// The thread carries its name, cut to the 15 bytes Linux keeps.
    @Test func namesTheThread() throws {
        let seen = Monitor("")
        let thread = try WorkerThread(name: "test-a-rather-long-name", stackSize: 4 << 20) {
            let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
            seen.withLock { $0 = name }
        }
        thread.join()
        #expect(seen.withLock { $0 } == "test-a-rather-l\n")
    }

    /// Owns a worker that waits on `queue` until it is cancelled; cancelling is the owner's `deinit`.
    final class Owner {
        let queue: BlockingQueue<Int>
        let worker: WorkerThread

        init(queue: BlockingQueue<Int>, finished: Monitor<Bool>) throws {
            self.queue = queue
            worker = try WorkerThread(name: "test-owned") { [queue] in
                while queue.pop() != nil {}
                finished.withLock { $0 = true }
            }
        }

        deinit { queue.cancel() }
    }
}
