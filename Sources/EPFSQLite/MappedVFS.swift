import CSQLite
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A SQLite VFS that reads database pages straight from one memory map of the whole file.
///
/// SQLite can already read pages through `mmap` (`PRAGMA mmap_size`), but Debian's library is built with
/// `SQLITE_MAX_MMAP_SIZE` = 2 GiB, so on a 10 GB catalogue most page reads fall back to `pread`, which copies
/// every page out of the OS cache (a third of a lookup's time). This VFS wraps the default one ("unix") and
/// answers only the memory-map calls (`xFetch`/`xUnfetch`) itself, with a map of the whole main database file
/// up to the limit set by `PRAGMA mmap_size`; every other call (reads, locks, WAL shared memory) goes to the
/// default VFS unchanged, so locking and WAL behave exactly as SQLite's own.
///
/// The map uses the default VFS's own file descriptor, never one of its own: closing a second descriptor of
/// the same file would drop the process's POSIX locks on it. The descriptor is found in the default VFS's file
/// object, whose layout has been stable since SQLite 3.7, and checked (the object points back at the unix VFS,
/// and the descriptor's device and inode are the path's); when a check fails the file is simply read as
/// before, through `pread`. As in SQLite's own implementation the map is dropped whenever the pager reports
/// that another connection changed the database, and rebuilt at the file's new size on the next read.
package enum MappedVFS {
    /// The name connections pass to `sqlite3_open_v2`.
    package static let name = "epf-mmap"

    /// Registers the VFS with SQLite (once per process) and returns its name, or nil when SQLite has no
    /// default VFS to wrap or registration failed; callers then open with the default VFS.
    package static func registeredName() -> String? {
        registration.registered ? name : nil
    }

    private static let registration = Registration()
}

/// The per-file state kept after the `sqlite3_file` header, followed by the wrapped VFS's file object.
private struct MappedFileState {
    /// The map, or nil when not mapped.
    var base: UnsafeMutableRawPointer?
    /// Bytes mapped.
    var length: Int
    /// The most SQLite may map (`PRAGMA mmap_size`); 0 disables mapping.
    var limit: Int64
    /// Pages handed out by `xFetch` and not yet returned by `xUnfetch`.
    var outstanding: Int
    /// The wrapped file's descriptor, or -1 when this file is never mapped.
    var descriptor: Int32
    /// The file changed while pages were handed out: rebuild the map once they are all returned.
    var stale: Bool
}

/// The VFS and I/O method tables, built and registered once. They live for the life of the process, as
/// SQLite requires of a registered VFS.
private final class Registration: Sendable {
    let registered: Bool

    init() {
        // sqlite3_vfs_find initializes SQLite: its process-wide options first.
        SQLiteConnection.disableMemoryStatistics()
        guard let inner = sqlite3_vfs_find(nil), inner.pointee.xOpen != nil else {
            registered = false
            return
        }
        let methods = UnsafeMutablePointer<sqlite3_io_methods>.allocate(capacity: 1)
        methods.initialize(to: Registration.ioMethods())
        Registration.methods = UnsafePointer(methods)
        let vfs = UnsafeMutablePointer<sqlite3_vfs>.allocate(capacity: 1)
        vfs.initialize(to: sqlite3_vfs())
        vfs.pointee.iVersion = 2
        vfs.pointee.szOsFile = Int32(innerOffset) + inner.pointee.szOsFile
        vfs.pointee.mxPathname = inner.pointee.mxPathname
        vfs.pointee.zName = UnsafePointer(strdup(MappedVFS.name))
        vfs.pointee.pAppData = UnsafeMutableRawPointer(inner)
        Registration.fillVFS(vfs)
        registered = sqlite3_vfs_register(vfs, 0) == SQLITE_OK
    }

    /// The I/O methods of every file opened through the VFS, set once before registration.
    nonisolated(unsafe) static var methods: UnsafePointer<sqlite3_io_methods>?

    // MARK: Method tables

    static func ioMethods() -> sqlite3_io_methods {
        var methods = sqlite3_io_methods()
        methods.iVersion = 3
        methods.xClose = { file in
            guard let file else { return SQLITE_MISUSE }
            unmap(state(file))
            guard let (target, table) = wrapped(file), let close = table.pointee.xClose else { return SQLITE_OK }
            return close(target)
        }
        methods.xRead = { file, buffer, amount, offset in
            guard let (target, table) = wrapped(file), let call = table.pointee.xRead else { return SQLITE_IOERR }
            return call(target, buffer, amount, offset)
        }
        methods.xWrite = { file, buffer, amount, offset in
            guard let (target, table) = wrapped(file), let call = table.pointee.xWrite else { return SQLITE_IOERR }
            return call(target, buffer, amount, offset)
        }
        methods.xTruncate = { file, size in
            guard let (target, table) = wrapped(file), let call = table.pointee.xTruncate else {
                return SQLITE_IOERR
            }
            return call(target, size)
        }
        methods.xSync = { file, flags in
            guard let (target, table) = wrapped(file), let call = table.pointee.xSync else { return SQLITE_IOERR }
            return call(target, flags)
        }
        methods.xFileSize = { file, size in
            guard let (target, table) = wrapped(file), let call = table.pointee.xFileSize else {
                return SQLITE_IOERR
            }
            return call(target, size)
        }
        methods.xLock = { file, level in
            guard let (target, table) = wrapped(file), let call = table.pointee.xLock else { return SQLITE_IOERR }
            return call(target, level)
        }
        methods.xUnlock = { file, level in
            guard let (target, table) = wrapped(file), let call = table.pointee.xUnlock else { return SQLITE_IOERR }
            return call(target, level)
        }
        methods.xCheckReservedLock = { file, result in
            guard let (target, table) = wrapped(file), let call = table.pointee.xCheckReservedLock else {
                return SQLITE_IOERR
            }
            return call(target, result)
        }
        methods.xFileControl = { file, operation, argument in
            guard let file, let (target, table) = wrapped(file) else { return SQLITE_NOTFOUND }
            if operation == SQLITE_FCNTL_MMAP_SIZE, let argument {
                // Ours, not the wrapped VFS's (which would cap it at its 2 GiB): report the old limit, take the new.
                let value = argument.assumingMemoryBound(to: Int64.self)
                let fileState = state(file)
                let requested = value.pointee
                value.pointee = fileState.pointee.limit
                if requested >= 0 {
                    fileState.pointee.limit = requested
                    if fileState.pointee.outstanding == 0 { unmap(fileState) }
                }
                return SQLITE_OK
            }
            guard let call = table.pointee.xFileControl else { return SQLITE_NOTFOUND }
            return call(target, operation, argument)
        }
        methods.xSectorSize = { file in
            guard let (target, table) = wrapped(file), let call = table.pointee.xSectorSize else { return 4096 }
            return call(target)
        }
        methods.xDeviceCharacteristics = { file in
            guard let (target, table) = wrapped(file), let call = table.pointee.xDeviceCharacteristics else {
                return 0
            }
            return call(target)
        }
        methods.xShmMap = { file, region, size, extend, pointer in
            guard let (target, table) = wrapped(file), let call = table.pointee.xShmMap else {
                return SQLITE_IOERR
            }
            return call(target, region, size, extend, pointer)
        }
        methods.xShmLock = { file, offset, count, flags in
            guard let (target, table) = wrapped(file), let call = table.pointee.xShmLock else {
                return SQLITE_IOERR
            }
            return call(target, offset, count, flags)
        }
        methods.xShmBarrier = { file in
            guard let (target, table) = wrapped(file), let call = table.pointee.xShmBarrier else { return }
            call(target)
        }
        methods.xShmUnmap = { file, delete in
            guard let (target, table) = wrapped(file), let call = table.pointee.xShmUnmap else {
                return SQLITE_OK
            }
            return call(target, delete)
        }
        methods.xFetch = { file, offset, amount, page in
            page?.pointee = nil
            guard let file else { return SQLITE_OK }
            let fileState = state(file)
            guard fileState.pointee.descriptor >= 0, fileState.pointee.limit > 0 else { return SQLITE_OK }
            if fileState.pointee.outstanding == 0 && (fileState.pointee.base == nil || fileState.pointee.stale) {
                map(fileState)
            }
            guard let base = fileState.pointee.base, offset >= 0,
                  offset + Int64(amount) <= Int64(fileState.pointee.length) else { return SQLITE_OK }
            page?.pointee = base.advanced(by: Int(offset))
            fileState.pointee.outstanding += 1
            return SQLITE_OK
        }
        methods.xUnfetch = { file, _, page in
            guard let file else { return SQLITE_OK }
            let fileState = state(file)
            if page != nil {
                fileState.pointee.outstanding -= 1
            } else if fileState.pointee.outstanding == 0 {
                // The pager saw another connection change the database: the file may have another size now.
                unmap(fileState)
            } else {
                fileState.pointee.stale = true
            }
            return SQLITE_OK
        }
        return methods
    }

    static func fillVFS(_ vfs: UnsafeMutablePointer<sqlite3_vfs>) {
        vfs.pointee.xOpen = { vfs, path, file, flags, outFlags in
            guard let file, let innerVFS = innerVFS(vfs), let open = innerVFS.pointee.xOpen,
                  let methods = Registration.methods else { return SQLITE_CANTOPEN }
            file.pointee.pMethods = nil
            let fileState = state(file)
            fileState.initialize(to: MappedFileState(base: nil, length: 0, limit: 0, outstanding: 0, descriptor: -1,
                                                     stale: false))
            let innerFile = inner(file)
            innerFile.pointee.pMethods = nil
            let rc = open(innerVFS, path, innerFile, flags, outFlags)
            guard rc == SQLITE_OK else {
                // SQLite's rule: a file whose xOpen set methods must be closed even when the open failed.
                if let innerMethods = innerFile.pointee.pMethods, let close = innerMethods.pointee.xClose {
                    _ = close(innerFile)
                }
                return rc
            }
            if flags & SQLITE_OPEN_MAIN_DB != 0, let path {
                fileState.pointee.descriptor = descriptor(of: innerFile, vfs: innerVFS, path: path)
            }
            file.pointee.pMethods = methods
            return SQLITE_OK
        }
        vfs.pointee.xDelete = { vfs, path, syncDirectory in
            guard let inner = innerVFS(vfs), let call = inner.pointee.xDelete else { return SQLITE_IOERR }
            return call(inner, path, syncDirectory)
        }
        vfs.pointee.xAccess = { vfs, path, flags, result in
            guard let inner = innerVFS(vfs), let call = inner.pointee.xAccess else { return SQLITE_IOERR }
            return call(inner, path, flags, result)
        }
        vfs.pointee.xFullPathname = { vfs, path, size, output in
            guard let inner = innerVFS(vfs), let call = inner.pointee.xFullPathname else { return SQLITE_CANTOPEN }
            return call(inner, path, size, output)
        }
        vfs.pointee.xDlOpen = { vfs, path in
            guard let inner = innerVFS(vfs), let call = inner.pointee.xDlOpen else { return nil }
            return call(inner, path)
        }
        vfs.pointee.xDlError = { vfs, size, message in
            guard let inner = innerVFS(vfs), let call = inner.pointee.xDlError else { return }
            call(inner, size, message)
        }
        vfs.pointee.xDlSym = { vfs, handle, symbol in
            guard let inner = innerVFS(vfs), let call = inner.pointee.xDlSym else { return nil }
            return call(inner, handle, symbol)
        }
        vfs.pointee.xDlClose = { vfs, handle in
            guard let inner = innerVFS(vfs), let call = inner.pointee.xDlClose else { return }
            call(inner, handle)
        }
        vfs.pointee.xRandomness = { vfs, size, output in
            guard let inner = innerVFS(vfs), let call = inner.pointee.xRandomness else { return 0 }
            return call(inner, size, output)
        }
        vfs.pointee.xSleep = { vfs, microseconds in
            guard let inner = innerVFS(vfs), let call = inner.pointee.xSleep else { return 0 }
            return call(inner, microseconds)
        }
        vfs.pointee.xCurrentTime = { vfs, time in
            guard let inner = innerVFS(vfs), let call = inner.pointee.xCurrentTime else { return SQLITE_ERROR }
            return call(inner, time)
        }
        vfs.pointee.xGetLastError = { vfs, size, message in
            guard let inner = innerVFS(vfs), let call = inner.pointee.xGetLastError else { return 0 }
            return call(inner, size, message)
        }
        vfs.pointee.xCurrentTimeInt64 = { vfs, time in
            guard let inner = innerVFS(vfs), let call = inner.pointee.xCurrentTimeInt64 else { return SQLITE_ERROR }
            return call(inner, time)
        }
    }
}

private func alignUp(_ value: Int, to alignment: Int) -> Int { (value + alignment - 1) / alignment * alignment }

/// Offset of `MappedFileState` in our file object: right after SQLite's `sqlite3_file` header.
private let stateOffset = alignUp(MemoryLayout<sqlite3_file>.size, to: 16)
/// Offset of the wrapped VFS's file object.
private let innerOffset = alignUp(stateOffset + MemoryLayout<MappedFileState>.stride, to: 16)
/// Byte offsets inside the unix VFS's `unixFile`: `pMethod`, `pVfs`, `pInode`, then the descriptor `h`.
private let unixVFSPointerOffset = MemoryLayout<UnsafeRawPointer>.size
private let unixDescriptorOffset = 3 * MemoryLayout<UnsafeRawPointer>.size

// MARK: File objects (free functions: SQLite's callbacks are C function pointers and capture nothing)

private func state(_ file: UnsafeMutablePointer<sqlite3_file>) -> UnsafeMutablePointer<MappedFileState> {
    UnsafeMutableRawPointer(file).advanced(by: stateOffset).assumingMemoryBound(to: MappedFileState.self)
}

private func inner(_ file: UnsafeMutablePointer<sqlite3_file>) -> UnsafeMutablePointer<sqlite3_file> {
    UnsafeMutableRawPointer(file).advanced(by: innerOffset).assumingMemoryBound(to: sqlite3_file.self)
}

private func innerVFS(_ vfs: UnsafeMutablePointer<sqlite3_vfs>?) -> UnsafeMutablePointer<sqlite3_vfs>? {
    vfs?.pointee.pAppData?.assumingMemoryBound(to: sqlite3_vfs.self)
}

/// The wrapped file object and its method table, or nil for a file that is not open.
private func wrapped(_ file: UnsafeMutablePointer<sqlite3_file>?)
    -> (file: UnsafeMutablePointer<sqlite3_file>, methods: UnsafePointer<sqlite3_io_methods>)? {
    guard let file else { return nil }
    let innerFile = inner(file)
    guard let methods = innerFile.pointee.pMethods else { return nil }
    return (innerFile, methods)
}

/// The unix VFS's descriptor for a just-opened main database file, when its file object has the expected
/// layout and the descriptor is the file at `path`; -1 otherwise (the file is then read without the map).
private func descriptor(of innerFile: UnsafeMutablePointer<sqlite3_file>,
                        vfs innerVFS: UnsafeMutablePointer<sqlite3_vfs>, path: UnsafePointer<CChar>) -> Int32 {
    guard let name = innerVFS.pointee.zName, strcmp(name, "unix") == 0,
          innerVFS.pointee.szOsFile >= Int32(unixDescriptorOffset + 4) else { return -1 }
    let raw = UnsafeRawPointer(innerFile)
    guard raw.load(fromByteOffset: unixVFSPointerOffset, as: UnsafeRawPointer?.self) == UnsafeRawPointer(innerVFS)
    else { return -1 }
    let descriptor = raw.load(fromByteOffset: unixDescriptorOffset, as: Int32.self)
    var opened = stat()
    var named = stat()
    guard descriptor >= 0, fstat(descriptor, &opened) == 0, stat(path, &named) == 0,
          opened.st_dev == named.st_dev, opened.st_ino == named.st_ino,
          (opened.st_mode & S_IFMT) == S_IFREG else { return -1 }
    return descriptor
}

private func unmap(_ state: UnsafeMutablePointer<MappedFileState>) {
    if let base = state.pointee.base {
        munmap(base, state.pointee.length)
    }
    state.pointee.base = nil
    state.pointee.length = 0
    state.pointee.stale = false
}

/// Maps the file at its current size (up to the limit). On failure the file stays unmapped and is read
/// through `pread` from then on.
private func map(_ state: UnsafeMutablePointer<MappedFileState>) {
    unmap(state)
    var info = stat()
    guard fstat(state.pointee.descriptor, &info) == 0 else {
        state.pointee.descriptor = -1
        return
    }
    let length = Int(min(Int64(info.st_size), state.pointee.limit))
    guard length > 0 else { return }
    guard let base = mmap(nil, length, PROT_READ, MAP_SHARED, state.pointee.descriptor, 0),
          base != MAP_FAILED else {
        state.pointee.descriptor = -1
        return
    }
    state.pointee.base = base
    state.pointee.length = length
}
