import Glibc

/// What went wrong writing a Parquet file.
package enum ParquetError: Error, CustomStringConvertible, Equatable {
    /// A system call failed: the call, the path and `errno`.
    case system(call: String, path: String, errno: Int32)
    /// zlib refused: the call and its return code.
    case compression(call: String, code: Int32)
    /// A value does not fit its column's type (a decimal with more fraction digits than the scale, a text that is
    /// not a date): the column and the value, cut to 80 characters.
    case valueDoesNotFit(column: String, value: String)
    /// The writer was used after `finish` or `abandon`.
    case closed(path: String)

    package var description: String {
        switch self {
        case .system(let call, let path, let code):
            return "\(call) failed for \(path): \(String(cString: strerror(code))) (errno \(code))"
        case .compression(let call, let code):
            return "zlib \(call) failed with code \(code)"
        case .valueDoesNotFit(let column, let value):
            return "value '\(value)' does not fit column \(column)"
        case .closed(let path):
            return "the Parquet writer of \(path) is already closed"
        }
    }
}
