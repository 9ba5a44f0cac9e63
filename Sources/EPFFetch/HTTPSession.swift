import CCurl
import Foundation

/// Where the HTTP Basic credentials come from. Never the command line (it shows in `ps`), never logged.
package enum CredentialSource: Sendable, CustomStringConvertible {
    /// A netrc file: `path`, or `~/.netrc` when nil.
    case netrc(path: String?)
    /// `EPF_USER` / `EPF_PASSWORD` from the environment.
    case environment(user: String, password: String)

    /// The source as the user knows it, without the password.
    package var description: String {
        switch self {
        case .netrc(let path): return path.map { "the netrc file \($0) (--netrc-file)" } ?? "~/.netrc"
        case .environment(let user, _): return "EPF_USER/EPF_PASSWORD (user '\(user)')"
        }
    }
}

/// How requests are made: credentials, timeouts and retries.
package struct HTTPSettings: Sendable {
    /// Where the credentials come from.
    package var credentials: CredentialSource = .netrc(path: nil)
    /// Seconds to wait for a connection.
    package var connectTimeout = 30
    /// A connection that delivers no byte for this many seconds is dropped and resumed.
    package var stallSeconds = 60
    /// Attempts after the first for timeouts, dropped connections and 5xx answers.
    package var retries = 5
    /// Seconds before the first retry; doubled for each further one (capped at 60).
    package var retryWait = 2.0

    /// Default settings.
    package init() {}

    func wait(beforeRetry attempt: Int) -> Double { min(60, retryWait * pow(2, Double(max(0, attempt - 1)))) }
}

/// The answer to one request: status, and Content-Length when the server sent one.
struct HTTPAnswer {
    var status: Int
    var contentLength: Int64?
}

/// Receives body bytes; returns false to stop the transfer. Gets the HTTP status with every chunk.
typealias BodySink = (UnsafeRawBufferPointer, Int) -> Bool

/// The state the C callbacks reach through their context pointer.
private final class TransferContext {
    let handle: UnsafeMutableRawPointer
    let sink: BodySink
    let shouldStop: () -> Bool
    var status = 0
    var errorBody: [UInt8] = []
    var refused = false

    init(handle: UnsafeMutableRawPointer, sink: @escaping BodySink, shouldStop: @escaping () -> Bool) {
        self.handle = handle
        self.sink = sink
        self.shouldStop = shouldStop
    }
}

private let writeCallback: epf_curl_write_callback = { data, size, count, context in
    guard let context else { return 0 }
    let box = Unmanaged<TransferContext>.fromOpaque(context).takeUnretainedValue()
    let total = size * count
    if box.status == 0 {
        var code = 0
        if epf_curl_getinfo_long(box.handle, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK { box.status = code }
    }
    if box.status >= 300 {
        if box.errorBody.count < 4096, let data {
            box.errorBody += UnsafeRawBufferPointer(start: data, count: min(total, 4096)).prefix(4096)
        }
        return total
    }
    guard let data, box.sink(UnsafeRawBufferPointer(start: data, count: total), box.status) else {
        box.refused = true
        return 0
    }
    return total
}

private let progressCallback: epf_curl_xferinfo_callback = { context, _, _, _, _ in
    guard let context else { return 0 }
    return Unmanaged<TransferContext>.fromOpaque(context).takeUnretainedValue().shouldStop() ? 1 : 0
}

/// HTTP through one libcurl handle, reused for keep-alive. Not `Sendable`: one per thread.
final class HTTPSession {
    let settings: HTTPSettings
    private let handle: CurlHandle

    init(settings: HTTPSettings) throws {
        self.settings = settings
        handle = try CurlHandle()
    }

    /// One request. `range` is `first-last` or `first-`; `head` asks for headers only. Throws `CurlError` for
    /// transport failures (including a sink that refused data); the status is in the answer.
    func perform(_ url: String, range: String? = nil, head: Bool = false, shouldStop: @escaping () -> Bool = { false },
                 sink: @escaping BodySink) throws -> HTTPAnswer {
        try handle.reset()
        try handle.setURL(url)
        try handle.set(CURLOPT_FOLLOWLOCATION, 1, "CURLOPT_FOLLOWLOCATION")
        try handle.set(CURLOPT_MAXREDIRS, 10, "CURLOPT_MAXREDIRS")
        try handle.set(CURLOPT_PROTOCOLS_STR, "http,https", "CURLOPT_PROTOCOLS_STR")
        try handle.set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https", "CURLOPT_REDIR_PROTOCOLS_STR")
        try handle.set(CURLOPT_NOSIGNAL, 1, "CURLOPT_NOSIGNAL")
        try handle.set(CURLOPT_USERAGENT, "epf-fetch/0.1 (libcurl)", "CURLOPT_USERAGENT")
        try handle.set(CURLOPT_CONNECTTIMEOUT, settings.connectTimeout, "CURLOPT_CONNECTTIMEOUT")
        // A stalled connection: fewer than 1 byte/s for stallSeconds ends the transfer with a timeout.
        try handle.set(CURLOPT_LOW_SPEED_LIMIT, 1, "CURLOPT_LOW_SPEED_LIMIT")
        try handle.set(CURLOPT_LOW_SPEED_TIME, settings.stallSeconds, "CURLOPT_LOW_SPEED_TIME")
        // A larger receive buffer means fewer write callbacks. libcurl (7.88, Debian 12) refuses to resize the buffer
        // of a handle that already has one, which then keeps the size it was given on first use: not an error.
        _ = try? handle.set(CURLOPT_BUFFERSIZE, 256 * 1024, "CURLOPT_BUFFERSIZE")
        try handle.set(CURLOPT_HTTPAUTH, 1, "CURLOPT_HTTPAUTH") // CURLAUTH_BASIC
        switch settings.credentials {
        case .netrc(let path):
            try handle.set(CURLOPT_NETRC, Int(CURL_NETRC_OPTIONAL.rawValue), "CURLOPT_NETRC")
            if let path { try handle.set(CURLOPT_NETRC_FILE, path, "CURLOPT_NETRC_FILE") }
        case .environment(let user, let password):
            try handle.set(CURLOPT_USERNAME, user, "CURLOPT_USERNAME")
            try handle.set(CURLOPT_PASSWORD, password, "CURLOPT_PASSWORD")
        }
        if head { try handle.set(CURLOPT_NOBODY, 1, "CURLOPT_NOBODY") }
        if let range { try handle.set(CURLOPT_RANGE, range, "CURLOPT_RANGE") }
        let context = TransferContext(handle: handle.raw, sink: sink, shouldStop: shouldStop)
        let pointer = Unmanaged.passUnretained(context).toOpaque()
        try handle.setWriteCallback(writeCallback)
        try handle.set(CURLOPT_WRITEDATA, pointer: pointer, "CURLOPT_WRITEDATA")
        try handle.setProgressCallback(progressCallback)
        try handle.set(CURLOPT_XFERINFODATA, pointer: pointer, "CURLOPT_XFERINFODATA")
        try handle.set(CURLOPT_NOPROGRESS, 0, "CURLOPT_NOPROGRESS")
        try withExtendedLifetime(context) {
            try handle.perform()
        }
        let status = handle.responseCode()
        return HTTPAnswer(status: status, contentLength: handle.contentLength())
    }

    /// Classifies a status: nil when fine, else the error to throw (401/403 are final, others retryable).
    func failure(status: Int, url: String) -> (error: FetchError, retry: Bool)? {
        switch status {
        case 200..<300: return nil
        case 401, 403:
            return (.unauthorized(url: url, status: status, credentials: settings.credentials.description), false)
        case 404, 410: return (.unavailable(url: url, message: "HTTP \(status) (not on the server)"), false)
        case 408, 429, 500..<600: return (.unavailable(url: url, message: "HTTP \(status)"), true)
        default: return (.unavailable(url: url, message: "HTTP \(status)"), false)
        }
    }

    /// Runs `attempt` with retries and backoff for timeouts, dropped connections and retryable statuses.
    /// `log` hears about each retry.
    func withRetries<T>(_ url: String, log: (String) -> Void, _ attempt: () throws -> T) throws -> T {
        var tries = 0
        while true {
            tries += 1
            do {
                return try attempt()
            } catch let error as RetryableFailure {
                guard tries <= settings.retries else {
                    throw FetchError.unavailable(url: url, message: "\(error.message); gave up after \(tries) tries")
                }
                let wait = settings.wait(beforeRetry: tries)
                log("retry \(tries)/\(settings.retries) in \(String(format: "%.1f", wait)) s: \(url): \(error.message)")
                Thread.sleep(forTimeInterval: wait)
            }
        }
    }

    /// GETs a small document (listing, sidecar) with retries. Returns nil for 404 and 410.
    func text(_ url: String, limit: Int = 16 << 20, log: (String) -> Void) throws -> String? {
        try withRetries(url, log: log) {
            var body: [UInt8] = []
            let answer: HTTPAnswer
            do {
                answer = try perform(url) { chunk, _ in
                    body += chunk
                    return body.count <= limit
                }
            } catch let error as CurlError {
                if error.abortedByCallback {
                    throw FetchError.unavailable(url: url, message: "larger than \(limit) bytes; not a listing")
                }
                throw RetryableFailure(message: error.message)
            }
            if answer.status == 404 || answer.status == 410 { return nil }
            if let (error, retry) = failure(status: answer.status, url: url) {
                if retry { throw RetryableFailure(message: "HTTP \(answer.status)") }
                throw error
            }
            return String(decoding: body, as: UTF8.self)
        }
    }

    /// The size of a file from a HEAD request, with retries; nil when the server does not say.
    func size(_ url: String, log: (String) -> Void) throws -> Int64? {
        try withRetries(url, log: log) {
            let answer: HTTPAnswer
            do {
                answer = try perform(url, head: true) { _, _ in true }
            } catch let error as CurlError {
                throw RetryableFailure(message: error.message)
            }
            if let (error, retry) = failure(status: answer.status, url: url) {
                if retry { throw RetryableFailure(message: "HTTP \(answer.status)") }
                throw error
            }
            return answer.contentLength
        }
    }
}

/// A failure worth another try (timeout, reset connection, 5xx).
struct RetryableFailure: Error {
    let message: String
}
