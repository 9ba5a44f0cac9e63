import EPFConcurrency
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

    /// What both threads know of the windows.
    struct Progress: Sendable {
        var states: [State]
        /// The first window nobody has claimed; windows are claimed in order.
        var nextUnclaimed = 0
        /// The window the reader is in.
        var readerWindow = 0
        var cancelled = false
    }

    /// What the reader shares with the checking thread.
    final class Shared: Sendable {
        let file: MappedFile
        let windowSize: Int
        let windowCount: Int
        /// How many windows the checking thread may run ahead of the reader (it keeps them mapped).
        let ahead: Int
        let progress: Monitor<Progress>

        init(file: MappedFile, windowSize: Int, ahead: Int) {
            self.file = file
            self.windowSize = windowSize
            self.ahead = ahead
            windowCount = (file.count + windowSize - 1) / windowSize
            progress = Monitor(Progress(states: Array(repeating: .unclaimed, count: windowCount)))
        }

        /// Checks window `index` (either thread; outside the lock).
        func check(_ index: Int) -> State {
            let start = index * windowSize
            let end = min(file.count, start + windowSize)
            return WindowValidation.isClean(file.base, count: file.count, start: start, end: end) ? .clean : .dirty
        }

        /// Records what checking window `index` found.
        func record(_ index: Int, _ result: State) {
            progress.withLock { $0.states[index] = result }
        }

        /// The checking thread: claims the next window unless it is too far ahead of the reader, checks it.
        func work() {
            let (windowCount, ahead) = (self.windowCount, self.ahead)
            while true {
                let index: Int? = progress.wait(until: { progress in
                    progress.cancelled || progress.nextUnclaimed >= windowCount
                        || progress.nextUnclaimed <= progress.readerWindow + ahead
                }) { progress in
                    guard !progress.cancelled && progress.nextUnclaimed < windowCount else { return nil }
                    let index = progress.nextUnclaimed
                    progress.nextUnclaimed += 1
                    progress.states[index] = .checking
                    return index
                }
                guard let index else { return }
                record(index, check(index))
            }
        }
    }

    /// What the reader does next while the other thread checks the window it needs.
    private enum Step {
        case known(State)
        case check(Int)
    }

    private let shared: Shared
    /// The checking thread; nil when the system refused one (the reader then checks every window itself).
    private let worker: WorkerThread?
    /// The reader's copy of the final states it has learnt (`.unclaimed` for not yet known), read without a lock.
    private var known: [State]

    /// Starts checking `file` ahead on a new thread, in windows of `windowSize` bytes, at most `ahead` windows
    /// beyond the reader.
    init(file: MappedFile, windowSize: Int = 1 << 20, ahead: Int = 8) {
        let shared = Shared(file: file, windowSize: max(16, windowSize), ahead: max(1, ahead))
        self.shared = shared
        known = Array(repeating: .unclaimed, count: shared.windowCount)
        worker = try? WorkerThread(name: "epf-validate") { shared.work() }
    }

    deinit {
        shared.progress.withLock { $0.cancelled = true }
        worker?.join()
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
        let claimed: Range<Int> = shared.progress.withLock { progress in
            progress.readerWindow = max(progress.readerWindow, index)
            let claimed = progress.nextUnclaimed..<max(progress.nextUnclaimed, index + 1)
            for window in claimed { progress.states[window] = .checking }
            progress.nextUnclaimed = claimed.upperBound
            return claimed
        }
        guard claimed.isEmpty else {
            for window in claimed {
                let result = shared.check(window)
                known[window] = result
                shared.record(window, result)
            }
            return
        }
        // The other thread is checking it: check the windows after it meanwhile (the other thread skips them),
        // and wait only when there are none the mapping may hold yet.
        let (windowCount, ahead) = (shared.windowCount, shared.ahead)
        while true {
            let step: Step = shared.progress.wait(until: { progress in
                progress.states[index] != .checking
                    || progress.nextUnclaimed < windowCount && progress.nextUnclaimed <= index + ahead
            }) { progress in
                if progress.states[index] != .checking { return .known(progress.states[index]) }
                let next = progress.nextUnclaimed
                progress.states[next] = .checking
                progress.nextUnclaimed = next + 1
                return .check(next)
            }
            switch step {
            case .known(let state):
                known[index] = state
                return
            case .check(let next):
                let result = shared.check(next)
                known[next] = result
                shared.record(next, result)
            }
        }
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
