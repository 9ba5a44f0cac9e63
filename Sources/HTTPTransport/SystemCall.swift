import Glibc

/// A failed system call: the call's name and the `errno` it left.
///
/// Every syscall in this module goes through `systemCall(_:_:)` (which retries `EINTR` and throws this) or, on
/// non-blocking descriptors, `nonBlockingCall(_:_:)` (which also turns `EAGAIN` into a value).
package struct SystemError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The C function that failed, e.g. `"bind"` or `"epoll_wait"`.
    package let call: String
    /// The `errno` value, e.g. `EADDRINUSE`.
    package let code: Int32

    /// Creates an error for `call` with `errno` value `code`.
    package init(call: String, code: Int32) {
        self.call = call
        self.code = code
    }

    package var description: String {
        "\(call) failed: \(String(cString: strerror(code))) (errno \(code))"
    }
}

/// Runs a C call that returns -1 and sets `errno` on failure, retrying on `EINTR`.
@inline(__always)
func systemCall<Result: FixedWidthInteger>(
    _ name: @autoclosure () -> String, _ body: () -> Result
) throws(SystemError) -> Result {
    while true {
        let result = body()
        if result != -1 { return result }
        let code = errno
        if code == EINTR { continue }
        throw SystemError(call: name(), code: code)
    }
}

/// What a call on a non-blocking descriptor gave: its result, or that it would have to wait.
enum NonBlocking<Value> {
    /// The call completed with this result (a count, a descriptor).
    case done(Value)
    /// `EAGAIN`/`EWOULDBLOCK`: nothing to do until epoll says so.
    case wouldBlock
}

/// Runs a C call on a non-blocking descriptor: retries `EINTR`, turns `EAGAIN`/`EWOULDBLOCK` into
/// `.wouldBlock`, and throws `SystemError` for any other failure. The one wrapper of the workers' I/O.
@inline(__always)
func nonBlockingCall<Result: FixedWidthInteger>(
    _ name: @autoclosure () -> String, _ body: () -> Result
) throws(SystemError) -> NonBlocking<Result> {
    while true {
        let result = body()
        if result != -1 { return .done(result) }
        let code = errno
        if code == EINTR { continue }
        if code == EAGAIN || code == EWOULDBLOCK { return .wouldBlock }
        throw SystemError(call: name(), code: code)
    }
}

/// Linux calls that Swift's `Glibc` module does not import (`sys/epoll.h`, `accept4`, `eventfd`).
///
/// They are looked up once with `dlsym` and called through `@convention(c)` pointers, which is the
/// C calling convention, so no C target is needed.
enum LinuxCalls {
    typealias EpollCreate1 = @convention(c) (Int32) -> Int32
    typealias EpollCtl = @convention(c) (Int32, Int32, Int32, UnsafeMutableRawPointer?) -> Int32
    typealias EpollWait = @convention(c) (Int32, UnsafeMutableRawPointer?, Int32, Int32) -> Int32
    typealias Accept4 = @convention(c) (
        Int32, UnsafeMutablePointer<sockaddr>?, UnsafeMutablePointer<socklen_t>?, Int32
    ) -> Int32
    typealias EventFD = @convention(c) (UInt32, Int32) -> Int32

    /// C function pointers, which capture nothing: shared by every worker.
    struct Table: Sendable {
        let epollCreate1: EpollCreate1
        let epollCtl: EpollCtl
        let epollWait: EpollWait
        let accept4: Accept4
        let eventfd: EventFD
    }

    /// The resolved functions, or the error naming the one that is missing.
    static let table: Result<Table, SystemError> = {
        guard let handle = dlopen(nil, RTLD_NOW) else {
            return .failure(SystemError(call: "dlopen", code: ENOSYS))
        }
        func find<F>(_ name: String, _ type: F.Type) -> F? {
            guard let symbol = dlsym(handle, name) else { return nil }
            return unsafeBitCast(symbol, to: type)
        }
        guard let create = find("epoll_create1", EpollCreate1.self) else {
            return .failure(SystemError(call: "dlsym(epoll_create1)", code: ENOSYS))
        }
        guard let ctl = find("epoll_ctl", EpollCtl.self) else {
            return .failure(SystemError(call: "dlsym(epoll_ctl)", code: ENOSYS))
        }
        guard let wait = find("epoll_wait", EpollWait.self) else {
            return .failure(SystemError(call: "dlsym(epoll_wait)", code: ENOSYS))
        }
        guard let accept = find("accept4", Accept4.self) else {
            return .failure(SystemError(call: "dlsym(accept4)", code: ENOSYS))
        }
        guard let event = find("eventfd", EventFD.self) else {
            return .failure(SystemError(call: "dlsym(eventfd)", code: ENOSYS))
        }
        return .success(Table(epollCreate1: create, epollCtl: ctl, epollWait: wait, accept4: accept, eventfd: event))
    }()

    /// The table, or the lookup error.
    static func resolved() throws(SystemError) -> Table {
        switch table {
        case .success(let table): return table
        case .failure(let error): throw error
        }
    }

    // Constants from <sys/epoll.h>, <sys/eventfd.h> and <sys/socket.h> (identical on every Linux architecture).
    static let epollIn: UInt32 = 0x001
    static let epollOut: UInt32 = 0x004
    static let epollErr: UInt32 = 0x008
    static let epollHup: UInt32 = 0x010
    static let epollRdHup: UInt32 = 0x2000
    static let epollCtlAdd: Int32 = 1
    static let epollCtlDel: Int32 = 2
    static let epollCtlMod: Int32 = 3
    static let epollCloexec: Int32 = 0o2000000
    static let eventfdNonblock: Int32 = 0o4000
    static let eventfdCloexec: Int32 = 0o2000000

    /// `sizeof(struct epoll_event)`: packed (12 bytes) on x86-64, naturally aligned (16) elsewhere.
    #if arch(x86_64) || arch(i386)
    static let epollEventSize = 12
    static let epollDataOffset = 4
    #else
    static let epollEventSize = 16
    static let epollDataOffset = 8
    #endif
}

/// An epoll instance and a buffer of events, owned by one thread.
///
/// The corresponding C functions are `epoll_create1(2)`, `epoll_ctl(2)` and `epoll_wait(2)`; `deinit` closes it.
final class EPoll {
    private let calls: LinuxCalls.Table
    let descriptor: Int32
    private let events: UnsafeMutableRawPointer
    private let capacity: Int

    init(capacity: Int = 256) throws(SystemError) {
        let calls = try LinuxCalls.resolved()
        self.calls = calls
        descriptor = try systemCall("epoll_create1") { calls.epollCreate1(LinuxCalls.epollCloexec) }
        self.capacity = capacity
        events = UnsafeMutableRawPointer.allocate(
            byteCount: capacity * LinuxCalls.epollEventSize, alignment: 8)
    }

    deinit {
        events.deallocate()
        close(descriptor)
    }

    private func control(_ operation: Int32, _ fd: Int32, _ mask: UInt32, _ name: String) throws(SystemError) {
        var event = (UInt64(0), UInt64(0))  // 16 bytes, enough for either layout.
        try withUnsafeMutableBytes(of: &event) { raw throws(SystemError) in
            raw.storeBytes(of: mask, toByteOffset: 0, as: UInt32.self)
            let data = UInt64(UInt32(bitPattern: fd))
            raw.storeBytes(of: data, toByteOffset: LinuxCalls.epollDataOffset, as: UInt64.self)
            let calls = self.calls
            _ = try systemCall(name) { calls.epollCtl(descriptor, operation, fd, raw.baseAddress) }
        }
    }

    /// Watches `fd` for the events in `mask`.
    func add(_ fd: Int32, _ mask: UInt32) throws(SystemError) {
        try control(LinuxCalls.epollCtlAdd, fd, mask, "epoll_ctl(ADD)")
    }

    /// Changes the events watched for `fd`.
    func modify(_ fd: Int32, _ mask: UInt32) throws(SystemError) {
        try control(LinuxCalls.epollCtlMod, fd, mask, "epoll_ctl(MOD)")
    }

    /// Stops watching `fd` (closing it does the same).
    func remove(_ fd: Int32) throws(SystemError) {
        try control(LinuxCalls.epollCtlDel, fd, 0, "epoll_ctl(DEL)")
    }

    /// Waits up to `timeout` milliseconds; returns how many events `event(at:)` can read.
    ///
    /// `EINTR` counts as zero events so the caller can re-check its clocks.
    func wait(timeout: Int32) throws(SystemError) -> Int {
        let count = calls.epollWait(descriptor, events, Int32(capacity), timeout)
        if count >= 0 { return Int(count) }
        let code = errno
        if code == EINTR { return 0 }
        throw SystemError(call: "epoll_wait", code: code)
    }

    /// The descriptor and event mask of the `index`-th ready event.
    func event(at index: Int) -> (fd: Int32, mask: UInt32) {
        let base = events + index * LinuxCalls.epollEventSize
        let mask = base.loadUnaligned(as: UInt32.self)
        let data = (base + LinuxCalls.epollDataOffset).loadUnaligned(as: UInt64.self)
        return (Int32(truncatingIfNeeded: data), mask)
    }
}

/// Monotonic clock in nanoseconds (`clock_gettime(CLOCK_MONOTONIC)`).
package func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
}

/// Sets an integer socket option (`setsockopt(2)`).
func setSocketOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32, _ label: String) throws(SystemError) {
    var value = value
    _ = try systemCall("setsockopt(\(label))") {
        setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size))
    }
}
