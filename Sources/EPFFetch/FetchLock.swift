import Foundation

/// An exclusive lock on `<mirror>/.epf-fetch.lock` held for a whole fetch, so two fetches never write the same
/// mirror. The kernel releases it when the process dies, even by `kill -9`.
final class FetchLock {
    private let descriptor: Int32
    /// The lock file's path.
    let path: String

    /// Takes the lock without waiting; throws `FetchError.locked` when another process holds it.
    /// The corresponding C calls are `open(2)` and `flock(2)`.
    init(mirror: String) throws {
        path = (mirror as NSString).appendingPathComponent(".epf-fetch.lock")
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw FetchError.io(path: path, call: "open", errno: errno) }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            close(fd)
            if code == EWOULDBLOCK { throw FetchError.locked(lockFile: path) }
            throw FetchError.io(path: path, call: "flock", errno: code)
        }
        descriptor = fd
        _ = ftruncate(fd, 0)
        let pid = "\(getpid())\n"
        _ = pid.withCString { write(fd, $0, strlen($0)) }
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
