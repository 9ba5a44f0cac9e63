import Glibc

/// A thread running one closure, joined by its owner: `join()` waits until the closure has returned, and dropping
/// the last reference joins too, so no thread outlives the value that started it. Stop the closure first (cancel
/// the queue it waits on, set its flag), then join.
///
/// The corresponding C functions are `pthread_create(3)` and `pthread_join(3)`; the name is written to
/// `/proc/thread-self/comm` (what `pthread_setname_np(3)` does, which Swift's Glibc module does not declare).
package final class WorkerThread: Sendable {
    /// Why a thread could not be started.
    package struct StartFailure: Error, CustomStringConvertible {
        /// The thread's name.
        package let name: String
        /// The `errno` value `pthread_create` returned (`EAGAIN`: a limit on threads or memory was reached).
        package let code: Int32

        package var description: String {
            "cannot start thread \(name): pthread_create: \(String(cString: strerror(code))) (errno \(code))"
        }
    }

    /// What the new thread runs; passed to it as a retained pointer (never shared: the starting thread lets go of
    /// it), released when the closure returns.
    private final class Start {
        let name: String
        let body: () -> Void

        init(name: String, body: @escaping () -> Void) {
            self.name = name
            self.body = body
        }
    }

    /// The thread's name (at most 15 bytes show in `ps` and `/proc`).
    package let name: String
    private let thread: pthread_t
    private let joined = Mutex(false)

    /// Starts a thread named `name` running `body`, with a stack of `stackSize` bytes (nil: the system's default).
    /// `body` is sent to the thread: what it captures that is not `Sendable` (a stream, a decoder made for the
    /// thread) the caller gives up, as the compiler checks. Throws `StartFailure` when the system refuses another
    /// thread.
    package init(name: String, stackSize: Int? = 1 << 20, _ body: sending @escaping () -> Void)
        throws(StartFailure) {
        self.name = name
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        if let stackSize { pthread_attr_setstacksize(&attributes, max(Int(PTHREAD_STACK_MIN), stackSize)) }
        let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        let code = pthread_create(&thread, &attributes, { raw in
            guard let raw else { return nil }
            let start = Unmanaged<Start>.fromOpaque(raw).takeRetainedValue()
            nameThisThread(start.name)
            start.body()
            return nil
        }, start)
        guard code == 0 else {
            Unmanaged<Start>.fromOpaque(start).release()
            throw StartFailure(name: name, code: code)
        }
        self.thread = thread
    }

    deinit {
        join()
    }

    /// Waits until the thread's closure has returned; at once when it has been joined before. Called on the thread
    /// itself (its last reference dropped there), it detaches it instead, which cannot wait for itself.
    package func join() {
        let thread = self.thread
        joined.withLock { joined in
            guard !joined else { return }
            joined = true
            if pthread_equal(thread, pthread_self()) != 0 {
                pthread_detach(thread)
            } else {
                pthread_join(thread, nil)
            }
        }
    }
}

/// Names the calling thread `name` (Linux keeps its first 15 bytes); a failure leaves it unnamed.
private func nameThisThread(_ name: String) {
    let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return }
    var bytes = Array(name.utf8.prefix(15))
    bytes.append(UInt8(ascii: "\n"))
    _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    close(descriptor)
}
