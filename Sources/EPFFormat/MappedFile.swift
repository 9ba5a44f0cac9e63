import Foundation

/// A regular file mapped read-only into memory, so it can be split with no copy. The C calls are `open(2)`,
/// `fstat(2)`, `mmap(2)`, `madvise(2)`, `munmap(2)` and `close(2)`.
///
/// Pages are mapped by the faults of first use (the kernel maps the cached pages around each one); `release` drops
/// the pages of a range behind (the file's bytes stay in the page cache; only this process's mapping of them goes),
/// which keeps the resident size bounded however large the file is. (Mapping ahead with MADV_POPULATE_READ was
/// measured: it costs more CPU than the faults.)
///
/// The file must not shrink while mapped: reading a page past the new end raises SIGBUS. Feed files are written
/// once and then read, so the tools that map them (`epf inspect`) accept that.
///
/// Sendable unchecked: the mapping is read-only and immutable while the value lives; threads only read it.
final class MappedFile: @unchecked Sendable {
    /// The path, for messages.
    let path: String
    /// The first byte of the mapping.
    let base: UnsafeRawPointer
    /// The file's size in bytes when it was mapped (at least 1).
    let count: Int
    /// The system page size: `release` works on whole pages.
    static let pageSize = max(4096, Int(sysconf(Int32(_SC_PAGESIZE))))

    /// Maps `path`. Returns nil when it is not a non-empty regular file or cannot be mapped (a pipe, a device,
    /// an empty file): the caller reads it with `read(2)` instead. Throws `.notFound` or `.io` when it cannot be
    /// opened or examined at all.
    init?(path: String) throws {
        self.path = path
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        if descriptor < 0 {
            if errno == ENOENT { throw EPFError.notFound(path: path) }
            throw EPFError.io(path: path, call: "open", errno: errno)
        }
        // The mapping outlives the descriptor.
        defer { close(descriptor) }
        var info = stat()
        if fstat(descriptor, &info) != 0 { throw EPFError.io(path: path, call: "fstat", errno: errno) }
        guard info.st_mode & S_IFMT == S_IFREG, info.st_size > 0, info.st_size <= Int64(Int.max) else { return nil }
        count = Int(info.st_size)
        guard let mapped = mmap(nil, count, PROT_READ, MAP_PRIVATE, descriptor, 0), mapped != MAP_FAILED else {
            return nil
        }
        base = UnsafeRawPointer(mapped)
        #if os(Linux)
        // Sequential use: the kernel reads ahead and maps pages around each fault.
        _ = madvise(mapped, count, MADV_SEQUENTIAL)
        #endif
    }

    deinit {
        munmap(UnsafeMutableRawPointer(mutating: base), count)
    }

    /// Drops this process's mapping of the whole pages inside `start..<end`. Reading them again is still correct
    /// (they are mapped again from the file), only slower.
    func release(_ start: Int, _ end: Int) {
        let page = Self.pageSize
        let low = (max(0, start) + page - 1) / page * page
        let high = min(count, end) / page * page
        guard high > low else { return }
        _ = madvise(UnsafeMutableRawPointer(mutating: base + low), high - low, MADV_DONTNEED)
    }
}
