import Foundation

/// UTF-8 and NUL checks of a mapped file, window by window, shared between a checking thread that runs ahead of
/// the reader and the reader itself: whichever comes to a window first checks it (the reader, finding the window it
/// needs still being checked, checks later ones meanwhile), so both cores work, and no window is checked twice.
///
/// A window is clean when the bytes of every UTF-8 sequence that starts or ends in it are well-formed and none is
/// NUL. Records are bounded by ASCII bytes (the terminator before and after them), so a record that lies wholly in
/// clean windows is itself well-formed with no NUL; records touching a window that is not clean are checked one by
/// one by the reader as before, so reports stay exact.
final class WindowValidation {
    /// What is known of a window.
    enum State: UInt8 {
        case unclaimed, checking, clean, dirty
    }

    /// The state both threads share, guarded by `condition`.
    final class Shared: @unchecked Sendable {
        let file: MappedFile
        let windowSize: Int
        let windowCount: Int
        let condition = NSCondition()
        var states: [State]
        /// The first window nobody has claimed; windows are claimed in order.
        var nextUnclaimed = 0
        /// The window the reader is in.
        var readerWindow = 0
        var cancelled = false
        var workerDone = false
        /// How many windows the checking thread may run ahead of the reader (it keeps them mapped).
        let ahead: Int

        init(file: MappedFile, windowSize: Int, ahead: Int) {
            self.file = file
            self.windowSize = windowSize
            self.ahead = ahead
            windowCount = (file.count + windowSize - 1) / windowSize
            states = Array(repeating: .unclaimed, count: windowCount)
        }

        /// Checks window `index` (either thread; outside the lock).
        func check(_ index: Int) -> State {
            let start = index * windowSize
            let end = min(file.count, start + windowSize)
            return WindowValidation.isClean(file.base, count: file.count, start: start, end: end) ? .clean : .dirty
        }

        /// The checking thread: claims the next window unless it is too far ahead of the reader, checks it.
        func work() {
            while true {
                condition.lock()
                while !cancelled && nextUnclaimed < windowCount && nextUnclaimed > readerWindow + ahead {
                    condition.wait()
                }
                guard !cancelled && nextUnclaimed < windowCount else {
                    workerDone = true
                    condition.broadcast()
                    condition.unlock()
                    return
                }
                let index = nextUnclaimed
                nextUnclaimed += 1
                states[index] = .checking
                condition.unlock()
                let result = check(index)
                condition.lock()
                states[index] = result
                condition.broadcast()
                condition.unlock()
            }
        }
    }

    private let shared: Shared
    /// The reader's copy of the final states it has learnt (`.unclaimed` for not yet known), read without a lock.
    private var known: [State]

    /// Starts checking `file` ahead on a new thread, in windows of `windowSize` bytes, at most `ahead` windows
    /// beyond the reader.
    init(file: MappedFile, windowSize: Int = 1 << 20, ahead: Int = 8) {
        shared = Shared(file: file, windowSize: max(16, windowSize), ahead: max(1, ahead))
        known = Array(repeating: .unclaimed, count: shared.windowCount)
        let shared = self.shared
        let thread = Thread { shared.work() }
        thread.name = "epf-validate"
        thread.stackSize = 1 << 20
        thread.start()
    }

    deinit {
        shared.condition.lock()
        shared.cancelled = true
        shared.condition.broadcast()
        while !shared.workerDone { shared.condition.wait() }
        shared.condition.unlock()
    }

    /// Reader side: whether the file bytes `start..<end` are known clean. Queries come in increasing order of
    /// `start`. A window nobody has claimed yet is checked here and now; one the other thread is checking is
    /// waited for.
    func isClean(start: Int, end: Int) -> Bool {
        guard end > start else { return true }
        let first = start / shared.windowSize
        let last = (end - 1) / shared.windowSize
        for index in first...last {
            if known[index] == .unclaimed { learn(index) }
            if known[index] != .clean { return false }
        }
        return true
    }

    /// Learns the state of window `index`, checking it (and any unclaimed windows before it) when nobody has.
    private func learn(_ index: Int) {
        let shared = self.shared
        shared.condition.lock()
        if index > shared.readerWindow {
            shared.readerWindow = index
            shared.condition.broadcast()
        }
        let claimed = shared.nextUnclaimed..<max(shared.nextUnclaimed, index + 1)
        for window in claimed { shared.states[window] = .checking }
        shared.nextUnclaimed = claimed.upperBound
        guard claimed.isEmpty else {
            shared.condition.unlock()
            for window in claimed {
                let result = shared.check(window)
                known[window] = result
                shared.condition.lock()
                shared.states[window] = result
                shared.condition.unlock()
            }
            return
        }
        // The other thread is checking it: check the windows after it meanwhile (the other thread skips them),
        // and wait only when there are none the mapping may hold yet.
        while shared.states[index] == .checking {
            let next = shared.nextUnclaimed
            guard next < shared.windowCount && next <= index + shared.ahead else {
                shared.condition.wait()
                continue
            }
            shared.states[next] = .checking
            shared.nextUnclaimed = next + 1
            shared.condition.unlock()
            let result = shared.check(next)
            known[next] = result
            shared.condition.lock()
            shared.states[next] = result
        }
        known[index] = shared.states[index]
        shared.condition.unlock()
    }

    /// Whether the window `start..<end` of the `count` bytes at `base` is clean: every UTF-8 sequence with a byte in
    /// it is well-formed (checked whole, reaching up to 3 bytes past either edge) and no byte in it is NUL.
    static func isClean(_ base: UnsafeRawPointer, count: Int, start: Int, end: Int) -> Bool {
        func isContinuation(_ offset: Int) -> Bool { base.load(fromByteOffset: offset, as: UInt8.self) & 0xc0 == 0x80 }
        var low = start
        while low > 0 && start - low < 3 && isContinuation(low) { low -= 1 }
        var high = end
        while high < count && high - end < 3 && isContinuation(high) { high += 1 }
        return UTF8Validator.isCleanText(base + low, count: high - low)
    }
}
