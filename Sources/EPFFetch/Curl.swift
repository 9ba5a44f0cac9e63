import CCurl
import Foundation

/// A failed libcurl call: the CURLcode, libcurl's message and the URL.
package struct CurlError: Error, CustomStringConvertible, Sendable {
    /// The CURLcode's numeric value.
    package let code: UInt32
    /// libcurl's text for the code plus the detail from its error buffer.
    package let message: String
    /// The URL of the request.
    package let url: String

    /// True when the transfer was cut because a callback refused the data (the caller decided to stop).
    var abortedByCallback: Bool { code == CURLE_WRITE_ERROR.rawValue || code == CURLE_ABORTED_BY_CALLBACK.rawValue }
    /// True for a stalled or timed-out transfer.
    var timedOut: Bool { code == CURLE_OPERATION_TIMEDOUT.rawValue }

    package var description: String { "\(url): \(message) (curl error \(code))" }
}

/// Process-wide libcurl setup, done once before the first handle (the corresponding C call is
/// `epf_curl_global_init(3)`).
enum CurlGlobal {
    static let initialized: Bool = epf_curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK
}

/// One libcurl easy handle. Not `Sendable`: a handle is used by one thread at a time.
final class CurlHandle {
    let raw: UnsafeMutableRawPointer
    private(set) var url = ""
    /// libcurl writes the detail of the last error here (CURLOPT_ERRORBUFFER).
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)

    /// Creates a handle (the corresponding C call is `curl_easy_init(3)`).
    init() throws {
        guard CurlGlobal.initialized, let handle = epf_curl_easy_init() else {
            errorBuffer.deallocate()
            let message = epf_curl_available() == 0
                ? "libcurl.so.4 could not be loaded (Debian package libcurl4)" : "curl_easy_init failed"
            throw CurlError(code: CURLE_FAILED_INIT.rawValue, message: message, url: "")
        }
        raw = handle
        errorBuffer[0] = 0
        try check(epf_curl_setopt_ptr(raw, CURLOPT_ERRORBUFFER, errorBuffer), "CURLOPT_ERRORBUFFER")
    }

    deinit {
        epf_curl_easy_cleanup(raw)
        errorBuffer.deallocate()
    }

    private func check(_ code: CURLcode, _ what: String) throws {
        guard code != CURLE_OK else { return }
        throw CurlError(code: code.rawValue, message: "\(what): \(String(cString: epf_curl_easy_strerror(code)))",
                        url: url)
    }

    /// Sets a numeric option.
    func set(_ option: CURLoption, _ value: Int, _ name: String) throws {
        try check(epf_curl_setopt_long(raw, option, value), name)
    }

    /// Sets a text option (libcurl copies it); nil clears it.
    func set(_ option: CURLoption, _ value: String?, _ name: String) throws {
        if let value {
            try value.withCString { try check(epf_curl_setopt_str(raw, option, $0), name) }
        } else {
            try check(epf_curl_setopt_str(raw, option, nil), name)
        }
    }

    /// Sets the URL of the next transfer.
    func setURL(_ url: String) throws {
        self.url = url
        try set(CURLOPT_URL, url, "CURLOPT_URL")
    }

    /// Sets a pointer option.
    func set(_ option: CURLoption, pointer: UnsafeMutableRawPointer?, _ name: String) throws {
        try check(epf_curl_setopt_ptr(raw, option, pointer), name)
    }

    /// Sets the write callback.
    func setWriteCallback(_ callback: epf_curl_write_callback?) throws {
        try check(epf_curl_setopt_write_cb(raw, CURLOPT_WRITEFUNCTION, callback), "CURLOPT_WRITEFUNCTION")
    }

    /// Sets the progress callback, which can abort a transfer.
    func setProgressCallback(_ callback: epf_curl_xferinfo_callback?) throws {
        try check(epf_curl_setopt_xferinfo_cb(raw, callback), "CURLOPT_XFERINFOFUNCTION")
    }

    /// Runs the transfer (the corresponding C call is `curl_easy_perform(3)`).
    func perform() throws {
        errorBuffer[0] = 0
        let code = epf_curl_easy_perform(raw)
        guard code != CURLE_OK else { return }
        var message = String(cString: epf_curl_easy_strerror(code))
        let detail = String(cString: errorBuffer)
        if !detail.isEmpty && detail != message { message += ": " + detail }
        throw CurlError(code: code.rawValue, message: message, url: url)
    }

    /// The HTTP status of the last response, 0 before any was received.
    func responseCode() -> Int {
        var value = 0
        guard epf_curl_getinfo_long(raw, CURLINFO_RESPONSE_CODE, &value) == CURLE_OK else { return 0 }
        return value
    }

    /// The Content-Length of the last response, nil when unknown.
    func contentLength() -> Int64? {
        var value: curl_off_t = -1
        guard epf_curl_getinfo_off(raw, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &value) == CURLE_OK,
              value >= 0 else { return nil }
        return Int64(value)
    }

    /// Resets every option to its default, keeping the connection cache (the C call is `curl_easy_reset(3)`).
    func reset() throws {
        epf_curl_easy_reset(raw)
        url = ""
        try check(epf_curl_setopt_ptr(raw, CURLOPT_ERRORBUFFER, errorBuffer), "CURLOPT_ERRORBUFFER")
    }
}
