import EPFConcurrency
import Glibc
import Testing

@Suite struct BlockingQueueTests {
    /// Everything pushed comes out once, in order, and never more than `capacity` elements are queued at once.
    @Test(arguments: [1, 3, 64])
    func deliversInOrderWithinItsBound(capacity: Int) throws {
        let queue = BlockingQueue<Int>(capacity: capacity)
        let most = Monitor(0)
        let producer = try WorkerThread(name: "test-producer") {
            for value in 0..<2_000 {
                #expect(queue.push(value))
                let queued = queue.count
                most.withLock { $0 = max($0, queued) }
            }
            queue.close()
        }
        var received: [Int] = []
        while let value = queue.pop() { received.append(value) }
        producer.join()
        #expect(received == Array(0..<2_000))
        #expect(most.withLock { $0 } <= capacity)
        #expect(queue.pop() == nil)
        #expect(!queue.push(1))
    }

    /// A pop blocked on an empty queue wakes when it is closed and returns nil once what was queued is drained.
    @Test func closeWakesABlockedPopAfterTheRest() throws {
        let queue = BlockingQueue<Int>(capacity: 4)
        let got = Monitor<[Int?]>([])
        let consumer = try WorkerThread(name: "test-consumer") {
            for _ in 0..<3 {
                let value = queue.pop()
                got.withLock { $0.append(value) }
            }
        }
        Self.waitUntil { queue.hasWaitingConsumer }
        #expect(queue.push(7))
        Self.waitUntil { queue.hasWaitingConsumer }
        queue.close()
        consumer.join()
        #expect(got.withLock { $0 } == [7, nil, nil])
    }

    /// Cancel wakes a push blocked on a full queue (refused) and every blocked pop (nil), and hands back what was
    /// queued.
    @Test func cancelWakesEveryWaiterAndReturnsWhatWasQueued() throws {
        let full = BlockingQueue<Int>(capacity: 2)
        #expect(full.push(1) && full.push(2))
        let pushed = Monitor<Bool?>(nil)
        let pusher = try WorkerThread(name: "test-pusher") {
            let accepted = full.push(3)
            pushed.withLock { $0 = accepted }
        }
        let empty = BlockingQueue<Int>(capacity: 2)
        let pops = Monitor<[Int?]>([])
        let poppers = try (0..<3).map { index in
            try WorkerThread(name: "test-pop-\(index)") {
                let value = empty.pop()
                pops.withLock { $0.append(value) }
            }
        }
        Self.waitUntil { full.count == 2 && empty.hasWaitingConsumer }
        usleep(20_000)  // let the pusher and every popper block
        #expect(pushed.withLock { $0 } == nil)
        #expect(full.cancel() == [1, 2])
        #expect(empty.cancel() == [])
        pusher.join()
        for popper in poppers { popper.join() }
        #expect(pushed.withLock { $0 } == false)
        #expect(pops.withLock { $0 } == [nil, nil, nil])
        #expect(full.isCancelled && full.pop() == nil && !full.push(4))
    }

    /// Waits (bounded) until `condition` holds.
    static func waitUntil(_ condition: () -> Bool) {
        for _ in 0..<5_000 where !condition() { usleep(1_000) }
    }
}
