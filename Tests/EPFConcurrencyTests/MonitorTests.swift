import EPFConcurrency
import Testing

@Suite struct MonitorTests {
    /// A waiter wakes when another thread makes its condition true, and sees that thread's change.
    @Test func aWaiterSeesTheChangeItWaitsFor() throws {
        let monitor = Monitor(0)
        let setter = try WorkerThread(name: "test-setter") {
            for _ in 0..<100 { monitor.withLock { $0 += 1 } }
        }
        let seen = monitor.wait(until: { $0 >= 100 }) { $0 }
        setter.join()
        #expect(seen == 100)
    }

    /// A timed wait gives up after about its time and says that the condition did not hold.
    @Test func aTimedWaitRunsOut() {
        let monitor = Monitor(false)
        let started = ContinuousClock.now
        let ready = monitor.wait(until: { $0 }, atMost: 0.05) { _, ready in ready }
        #expect(!ready)
        #expect(ContinuousClock.now - started >= .milliseconds(45))
    }
}
