import Foundation

/// One byte range of a download: `[start, end)`, of which `done` bytes from `start` are written.
struct Segment: Codable, Equatable {
    var start: Int64
    var end: Int64
    var done: Int64

    var length: Int64 { end - start }
    var complete: Bool { done >= length }
    /// The next byte to fetch.
    var next: Int64 { start + done }
}

/// What `<name>.part.state` records: enough to continue a download where it stopped.
struct PartState: Codable, Equatable {
    var url: String
    var size: Int64
    var md5: String
    var segments: [Segment]
}

/// A preallocated `<name>.part` file written with `pwrite`, and its `<name>.part.state` sidecar.
///
/// The state is saved after the bytes it counts were written, so it never claims bytes the file lacks (a killed
/// process loses at most the bytes written since the last save, which are fetched again).
final class PartFile: Sendable {
    let path: String
    let statePath: String
    private let descriptor: Int32

    /// Opens `path` (creating it), sized to `size` bytes; `fresh` truncates what was there.
    init(path: String, size: Int64, fresh: Bool) throws {
        self.path = path
        statePath = path + ".state"
        let flags = O_RDWR | O_CREAT | O_CLOEXEC | (fresh ? O_TRUNC : 0)
        let fd = open(path, flags, 0o644)
        guard fd >= 0 else { throw FetchError.io(path: path, call: "open", errno: errno) }
        descriptor = fd
        if ftruncate(fd, off_t(size)) != 0 {
            let code = errno
            close(fd)
            throw FetchError.io(path: path, call: "ftruncate", errno: code)
        }
    }

    deinit { close(descriptor) }

    /// Writes `bytes` at `offset`, all of them (the corresponding C call is `pwrite(2)`).
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        guard let base = bytes.baseAddress else { return }
        var written = 0
        while written < bytes.count {
            let result = pwrite(descriptor, base + written, bytes.count - written, off_t(offset) + off_t(written))
            if result < 0 {
                if errno == EINTR { continue }
                throw FetchError.io(path: path, call: "pwrite", errno: errno)
            }
            written += result
        }
    }

    /// Reads up to `count` bytes at `offset` into `buffer` (the corresponding C call is `pread(2)`).
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        while true {
            let result = pread(descriptor, base, buffer.count, off_t(offset))
            if result < 0 {
                if errno == EINTR { continue }
                throw FetchError.io(path: path, call: "pread", errno: errno)
            }
            return result
        }
    }

    /// Flushes the file to disk before it is renamed into place (the corresponding C call is `fsync(2)`).
    func sync() throws {
        if fsync(descriptor) != 0 { throw FetchError.io(path: path, call: "fsync", errno: errno) }
    }

    /// Writes the file's data to disk now rather than all at the end, so the final `sync` is short (the
    /// corresponding C call is `fdatasync(2)`).
    func flushData() throws {
        if fdatasync(descriptor) != 0 { throw FetchError.io(path: path, call: "fdatasync", errno: errno) }
    }

    /// Saves the state next to the part, atomically (write aside, rename).
    func save(_ state: PartState) throws {
        let data: Data
        do {
            data = try JSONEncoder().encode(state)
        } catch {
            throw FetchError.io(path: statePath, call: "encode", errno: EINVAL)
        }
        try PartFile.writeAtomically(data, to: statePath)
    }

    /// The saved state at `statePath`, or nil when there is none or it cannot be read.
    static func loadState(_ statePath: String) -> PartState? {
        guard let data = FileManager.default.contents(atPath: statePath) else { return nil }
        return try? JSONDecoder().decode(PartState.self, from: data)
    }

    /// Writes `data` to `path` through `<path>.tmp` and a rename, so readers see the old or the new file.
    static func writeAtomically(_ data: Data, to path: String) throws {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw FetchError.io(path: temporary, call: "open", errno: errno) }
        var failure: Int32 = 0
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count, let base = raw.baseAddress {
                let result = Foundation.write(fd, base + offset, raw.count - offset)
                if result < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                offset += result
            }
        }
        close(fd)
        if failure != 0 { throw FetchError.io(path: temporary, call: "write", errno: failure) }
        if rename(temporary, path) != 0 { throw FetchError.io(path: path, call: "rename", errno: errno) }
    }

    /// Removes the part and its state (missing files are fine).
    static func remove(partPath: String) {
        unlink(partPath)
        unlink(partPath + ".state")
        unlink(partPath + ".state.tmp")
    }
}
