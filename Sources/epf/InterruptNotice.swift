import Foundation

/// Says why an import stopped when Ctrl-C (SIGINT) or SIGTERM ends it, and that the same command resumes it.
///
/// The process still dies by the signal, as before (shells show exit status 130 or 143, and a parent sees the
/// signal): what a kill leaves is what the import's crash safety already handles (a full load resumes after its
/// last checkpoint, an incremental's transaction rolls back). The handler only writes one prepared line with
/// `write(2)`, then restores the default action and raises the signal again: nothing in it allocates or locks.
enum InterruptNotice {
    /// The prepared lines, by signal; set once by `install` before the handlers can run, read by them only.
    nonisolated(unsafe) private static var interruptLine: UnsafeMutableBufferPointer<UInt8>?
    nonisolated(unsafe) private static var terminateLine: UnsafeMutableBufferPointer<UInt8>?

    /// Installs the handlers for SIGINT and SIGTERM for the rest of the process; `command` names it in the line
    /// (`import`, `sync`).
    static func install(command: String) {
        interruptLine = prepared(line(command: command, signal: "SIGINT"))
        terminateLine = prepared(line(command: command, signal: "SIGTERM"))
        for signalNumber in [SIGINT, SIGTERM] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { received in
                let line = received == SIGINT ? InterruptNotice.interruptLine : InterruptNotice.terminateLine
                if let line, let base = line.baseAddress { _ = write(STDERR_FILENO, base, line.count) }
                signal(received, SIG_DFL)
                raise(received)
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = 0
            sigaction(signalNumber, &action, nil)
        }
        // A parent may hand the signals over blocked (Foundation's Process does): then Ctrl-C and SIGTERM would be
        // held until the import ends. Threads started later inherit this mask.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGINT)
        sigaddset(&signals, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &signals, nil)
    }

    /// The line for `signal`: on a terminal it starts on a new line, after the live progress line.
    static func line(command: String, signal: String) -> String {
        (isatty(STDERR_FILENO) == 1 ? "\n" : "")
            + "epf \(command): interrupted (\(signal)). The table being loaded keeps its previous data and the "
            + "tables applied before it stay applied (a new database's first import: readers wait, exit 75, until it "
            + "runs again). Run the same command again to resume: it continues from the last checkpoint and skips "
            + "what is already applied.\n"
    }

    private static func prepared(_ text: String) -> UnsafeMutableBufferPointer<UInt8> {
        let bytes = Array(text.utf8)
        let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: bytes.count)
        _ = buffer.initialize(from: bytes)
        return buffer
    }
}
