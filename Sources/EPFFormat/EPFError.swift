import Foundation

/// Everything that can go wrong while reading a feed, with the place it went wrong.
package enum EPFError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The path does not exist.
    case notFound(path: String)
    /// A system call failed (`call` is its name, `errno` its error number).
    case io(path: String, call: String, errno: Int32)
    /// The gzip stream is corrupt or cut short.
    case gzip(path: String, message: String, compressedOffset: Int64)
    /// The bzip2 stream is corrupt or cut short.
    case bzip2(path: String, message: String, compressedOffset: Int64)
    /// The tar archive is malformed.
    case tar(path: String, message: String, offset: Int64)
    /// An `.md5` sidecar does not match the archive.
    case checksumMismatch(archive: String, sidecar: String, expected: String, actual: String)
    /// An `.md5` sidecar that cannot be read as `MD5 (name) = hex`.
    case badSidecar(sidecar: String, message: String)
    /// The header of a table file is not EPF.
    case badHeader(location: String, message: String, offset: Int64)
    /// Nothing readable was found at the path.
    case noTables(path: String)
    /// A record grew past the size limit without a terminator.
    case recordTooLarge(location: String, offset: Int64, limit: Int)

    package var description: String {
        switch self {
        case .notFound(let path):
            return "\(path): no such file or directory"
        case .io(let path, let call, let code):
            return "\(path): \(call) failed: \(String(cString: strerror(code))) (errno \(code))"
        case .gzip(let path, let message, let offset):
            return "\(path): gzip data corrupt at compressed byte \(offset): \(message)"
        case .bzip2(let path, let message, let offset):
            return "\(path): bzip2 data corrupt at compressed byte \(offset): \(message)"
        case .tar(let path, let message, let offset):
            return "\(path): tar archive malformed at byte \(offset) of the uncompressed stream: \(message)"
        case .checksumMismatch(let archive, let sidecar, let expected, let actual):
            return "\(archive): MD5 mismatch: \(sidecar) says \(expected), the archive hashes to \(actual)"
        case .badSidecar(let sidecar, let message):
            return "\(sidecar): unreadable MD5 sidecar: \(message)"
        case .badHeader(let location, let message, let offset):
            return "\(location): not an EPF table file (byte \(offset)): \(message)"
        case .noTables(let path):
            return "\(path): no EPF table files found"
        case .recordTooLarge(let location, let offset, let limit):
            return "\(location): the record starting at byte \(offset) has no 0x02 0x0A terminator within "
                + "\(limit >> 20) MiB; the file is not EPF or is damaged"
        }
    }
}
