import Foundation

/// Why `epf fetch` stopped; each case names the file or URL and what to do.
package enum FetchError: Error, CustomStringConvertible, Sendable {
    /// The server answered 401 or 403 to the credentials from `credentials` (a description, never the password).
    case unauthorized(url: String, status: Int, credentials: String)
    /// The server, after every retry, did not deliver `url`.
    case unavailable(url: String, message: String)
    /// A downloaded file did not match its `.md5` twice in a row.
    case checksumMismatch(file: String, expected: String, actual: String)
    /// A `.md5` sidecar on the server is not in any known format.
    case badSidecar(url: String, text: String)
    /// The source holds no full export of the requested feeds.
    case noFeed(url: String, message: String)
    /// A local file operation failed.
    case io(path: String, call: String, errno: Int32)
    /// Another fetch holds the mirror's lock.
    case locked(lockFile: String)
    /// A bad setting (URL, feed name, ...).
    case badOption(String)

    package var description: String {
        switch self {
        case .unauthorized(let url, let status, let credentials):
            return "\(url): the server refused the credentials (HTTP \(status)); they came from \(credentials). "
                + "Check the user and password there."
        case .unavailable(let url, let message):
            return "\(url): \(message)"
        case .checksumMismatch(let file, let expected, let actual):
            return "\(file): MD5 mismatch after a second download from zero: the .md5 says \(expected), "
                + "the download hashes to \(actual); nothing was written to the mirror for this file"
        case .badSidecar(let url, let text):
            return "\(url): not an MD5 sidecar (expected 'MD5 (name) = <32 hex digits>'), got '\(text.prefix(80))'"
        case .noFeed(let url, let message):
            return "\(url): \(message)"
        case .io(let path, let call, let code):
            return "\(path): \(call) failed: \(String(cString: strerror(code))) (errno \(code))"
        case .locked(let lockFile):
            return "another epf fetch holds \(lockFile); not starting (try again when it has finished)"
        case .badOption(let message):
            return message
        }
    }
}
