import Foundation

/// A regular file mapped read-only into memory, so it can be split with no copy. The C calls are `open(2)`,
/// `fstat(2)`, `mmap(2)`, `madvise(2)`, `munmap(2)` and `close(2)`.
///
/// Pages stay mapped only while they are needed: `populate` maps a range ahead of use, `release` drops the pages
/// of a range behind (the file's bytes stay in the page cache; only this process's mapping of them goes), which
/// keeps the resident size bounded however large the file is.
///
/// The file must not shrink while mapped: reading a page past the new end raises SIGBUS. Feed files are written
/// once and then read, so the tools that map them (`epf inspect`) accept that.
final class MappedFile: @unchecked Sendable {
    /// The path, for messages.
    let path: String
    /// The first byte of the mapping.
    let base: UnsafeRawPointer
    /// The file's size in bytes when it was mapped (at least 1).
    let count: Int
    /// The system page size: `populate` and `release` work on whole pages.
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

    /// The whole pages inside `start..<end`, clamped to the mapping.
    private func pages(_ start: Int, _ end: Int, outward: Bool) -> (UnsafeMutableRawPointer, Int)? {
        let page = Self.pageSize
        let low = outward ? max(0, start) / page * page : (max(0, start) + page - 1) / page * page
        let high = outward ? min(count, (end + page - 1) / page * page) : min(count, end) / page * page
        guard high > low else { return nil }
        return (UnsafeMutableRawPointer(mutating: base + low), high - low)
    }

    /// Maps the pages of `start..<end` now, in one call rather than a fault per page group. Advisory: when the
    /// kernel cannot (before Linux 5.14), the pages are mapped by faults on first use instead.
    func populate(_ start: Int, _ end: Int) {
        #if os(Linux)
        guard let (address, length) = pages(start, end, outward: true) else { return }
        _ = madvise(address, length, 22) // MADV_POPULATE_READ
        #endif
    }

    /// Drops this process's mapping of the whole pages inside `start..<end`. Reading them again is still correct
    /// (they are mapped again from the file), only slower.
    func release(_ start: Int, _ end: Int) {
        guard let (address, length) = pages(start, end, outward: false) else { return }
        _ = madvise(address, length, MADV_DONTNEED)
    }
}
