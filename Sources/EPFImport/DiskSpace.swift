import EPFFormat
import Foundation

/// Why a write found no room.
package enum NoRoom: String, Sendable, Codable {
    /// The filesystem is full (`ENOSPC`, `SQLITE_FULL`).
    case diskFull
    /// The process's file size limit was reached (`EFBIG` under `RLIMIT_FSIZE`, `ulimit -f`).
    case fileSizeLimit
}

/// Free space on the filesystems an import writes to, and the plain-words account of a write that found none.
package enum DiskSpace {
    /// Bytes an unprivileged process may still write on the filesystem holding `path` (`f_bavail * f_frsize`).
    /// The corresponding C function is `statvfs(3)`. Throws `ImportError.io` when `path` cannot be examined.
    package static func available(at path: String) throws -> Int64 {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else {
            throw ImportError.io(path: path, message: "cannot read the free space (statvfs): "
                                 + String(cString: strerror(errno)))
        }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }

    /// Whether this process runs under a file size limit (`RLIMIT_FSIZE`, `ulimit -f`). The corresponding C
    /// function is `getrlimit(2)`.
    package static var fileSizeLimited: Bool {
        var limit = rlimit()
        #if canImport(Glibc)
        let resource = __rlimit_resource_t(RLIMIT_FSIZE.rawValue)
        #else
        let resource = RLIMIT_FSIZE
        #endif
        return getrlimit(resource, &limit) == 0 && limit.rlim_cur != rlim_t.max
    }

    /// The directory a database file lives in (`.` for a bare file name).
    package static func directory(of databasePath: String) -> String {
        let directory = (databasePath as NSString).deletingLastPathComponent
        return directory.isEmpty ? "." : directory
    }

    /// Why `error` is a write that found no room, or nil when it is another error: what a store's own error says
    /// (`NoRoomReporting`: SQLite's `SQLITE_FULL`, an I/O error failing with `ENOSPC`/`EFBIG`), and the same
    /// `errno`s from epf's own files (rejects, spill file).
    package static func noRoom(in error: Error) -> NoRoom? {
        switch error {
        case let error as NoRoomReporting:
            return error.noRoom
        case let error as EPFError:
            if case .io(_, _, let code) = error { return noRoom(errno: code) }
            return nil
        case let error as CocoaError:
            if let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError,
               underlying.domain == NSPOSIXErrorDomain {
                return noRoom(errno: Int32(underlying.code))
            }
            return error.code == .fileWriteOutOfSpace ? .diskFull : nil
        case let error as POSIXError:
            return noRoom(errno: error.code.rawValue)
        default:
            return nil
        }
    }

    /// The room an `errno` says a write lacked: `ENOSPC` the disk's, `EFBIG` the file size limit's; nil for others.
    package static func noRoom(errno code: Int32) -> NoRoom? {
        code == ENOSPC ? .diskFull : code == EFBIG ? .fileSizeLimit : nil
    }
}

/// An error of a store's driver that can tell whether it is a write that found no room (`DiskSpace.noRoom`).
package protocol NoRoomReporting: Error {
    /// Why the failed write found no room; nil when the error is another one.
    var noRoom: NoRoom? { get }
}

/// An import stopped at the first write that found no room: every later table would fail the same way, and a
/// table half-written is never published, so it stops, keeps what was applied and says what to do.
package struct ImportStop: Sendable, Codable {
    /// Why there was no room.
    package var cause: NoRoom
    /// The table being written when it happened, if any.
    package var table: String?
    /// The error as the system or SQLite gave it.
    package var error: String
    /// The directory of the database (where epf writes).
    package var directory: String = "."
    /// Free bytes there just after the failure (the failed table's pages are given back by then), when known.
    package var freeBytes: Int64?
    /// Tables this run had applied before the failure (complete, from the new export).
    package var appliedBefore: [String] = []

    private enum CodingKeys: String, CodingKey {
        case cause, table, error, directory, freeBytes, appliedBefore, message
    }

    /// Reads a stop written by `encode(to:)` (`message` is derived, so it is not read).
    package init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        cause = try container.decode(NoRoom.self, forKey: .cause)
        table = try container.decodeIfPresent(String.self, forKey: .table)
        error = try container.decode(String.self, forKey: .error)
        directory = try container.decode(String.self, forKey: .directory)
        freeBytes = try container.decodeIfPresent(Int64.self, forKey: .freeBytes)
        appliedBefore = try container.decode([String].self, forKey: .appliedBefore)
    }

    /// Writes the stop with its `message`, for `--json`.
    package func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(cause, forKey: .cause)
        try container.encodeIfPresent(table, forKey: .table)
        try container.encode(error, forKey: .error)
        try container.encode(directory, forKey: .directory)
        try container.encodeIfPresent(freeBytes, forKey: .freeBytes)
        try container.encode(appliedBefore, forKey: .appliedBefore)
        try container.encode(message, forKey: .message)
    }

    /// Starts the account of a stop; the importer adds where and what was applied before it.
    init(cause: NoRoom, table: String?, error: String) {
        self.cause = cause
        self.table = table
        self.error = error
    }

    /// The account in plain words: what happened, where, what was kept, what to do.
    package var message: String {
        let free = freeBytes.map { "\($0) bytes free" } ?? "free space unknown"
        var text = cause == .diskFull
            ? "the disk is full at \(directory) (\(free))"
            : "the file size limit (ulimit -f) was reached writing in \(directory) (\(free) on that disk)"
        if let table { text += " while writing \(table)" }
        text += "; "
        if appliedBefore.isEmpty {
            text += "nothing was changed: every table keeps its previous data. "
        } else {
            if let table {
                text += "\(table) was not applied and keeps its previous data, as do the tables after it; "
            }
            text += "the \(appliedBefore.count) tables applied before it hold the new export "
                + "(epf status lists the tables behind). "
        }
        text += cause == .diskFull
            ? "Free space or use a larger filesystem, then run the same command again"
            : "Raise the limit (ulimit -f unlimited), then run the same command again"
        text += ": it applies only what is missing."
        return text + " (\(error))"
    }
}
