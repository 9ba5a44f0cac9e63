/// One fuzz target: a parser of outside bytes, run on one input, with the checks of its oracle.
public struct FuzzTarget: Sendable {
    /// The name used by `scripts/fuzz`, `epf-fuzz` and the corpus directories (`fuzz/corpus/<name>`).
    public let name: String
    /// The largest input worth trying (libFuzzer's `-max_len`).
    public let maximumLength: Int
    /// What the oracle checks, for reports.
    public let oracle: String
    /// Runs the parser over one input. Throws `FuzzFailure` when an oracle disagrees; a crash in the parser
    /// itself is a trap, which libFuzzer catches.
    public let run: @Sendable (UnsafeRawBufferPointer) throws(FuzzFailure) -> Void

    /// Every target, in the order `scripts/fuzz` runs them.
    public static let all: [FuzzTarget] = [
        FuzzTarget(name: "epf-records", maximumLength: 1 << 13,
                   oracle: "the table reader at small read sizes equals one read; a naive splitter and header "
                       + "parser; naive integer and decimal parsers; DATETIME canonical form is a fixed point",
                   run: EPFRecordsHarness.run),
        FuzzTarget(name: "http-request", maximumLength: 1 << 15,
                   oracle: "the head parsed whole equals the head parsed as it arrives in pieces; a naive "
                       + "percent- and query-decoder",
                   run: HTTPRequestHarness.run),
        FuzzTarget(name: "bzip2", maximumLength: 1 << 16,
                   oracle: "the parallel decoder (block scanner, workers, merges) against libbz2's streaming "
                       + "decoder: the same bytes, or both fail agreeing on the bytes both gave",
                   run: Bzip2Harness.run),
        FuzzTarget(name: "gzip", maximumLength: 1 << 16,
                   oracle: "the same bytes or error whatever the read sizes; zlib's uncompress for one member",
                   run: GzipHarness.run),
        FuzzTarget(name: "tar", maximumLength: 1 << 16,
                   oracle: "the same members, data and error whatever the read sizes; data within the input",
                   run: TarHarness.run),
        FuzzTarget(name: "fetch-listing", maximumLength: 1 << 14,
                   oracle: ".md5 digests are 32 lowercase hex found in the text, both sidecar parsers agree on "
                       + "well-formed sidecars; listing entries are plain, unique names from the hrefs",
                   run: FetchListingHarness.run),
        FuzzTarget(name: "store-link", maximumLength: 1 << 12,
                   oracle: "ids are positive and written in the text, countries are two lowercase letters; "
                       + "a link rebuilt from the answer parses to the same answer",
                   run: StoreLinkHarness.run),
        FuzzTarget(name: "apple-params", maximumLength: 1 << 12,
                   oracle: "/lookup and /search over a small catalogue answer 200 or 400, never 5xx, with a JSON "
                       + "body of Apple's shape (JSONP wrapped when asked)",
                   run: AppleParametersHarness.run),
    ]

    /// The target called `name`, or nil.
    public static func named(_ name: String) -> FuzzTarget? {
        all.first { $0.name == name }
    }
}

/// An oracle's disagreement with the parser: the input is a bug (or the oracle is).
public struct FuzzFailure: Error, CustomStringConvertible {
    /// What disagreed, with the values.
    public let description: String
}

/// Throws `FuzzFailure(message)` unless `condition` holds.
@inline(__always)
func check(_ condition: Bool, _ message: @autoclosure () -> String) throws(FuzzFailure) {
    if !condition { throw FuzzFailure(description: message()) }
}

/// A short printable preview of bytes, for failure messages.
func preview(_ bytes: some Collection<UInt8>, limit: Int = 120) -> String {
    var text = ""
    for byte in bytes.prefix(limit) {
        if byte >= 0x20 && byte < 0x7F && byte != UInt8(ascii: "\\") {
            text.unicodeScalars.append(Unicode.Scalar(byte))
        } else {
            let digits = String(byte, radix: 16)
            text += "\\x" + (digits.count == 1 ? "0" : "") + digits
        }
    }
    return bytes.count > limit ? text + "...(\(bytes.count) bytes)" : text
}
