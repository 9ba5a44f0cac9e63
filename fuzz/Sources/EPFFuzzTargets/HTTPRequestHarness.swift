import HTTPTransport

/// The HTTP/1.1 request-head parser and its target and query decoding.
///
/// The input is what a client sent. Parsed whole, and parsed as it would arrive in pieces (each call resuming from
/// the previous `scanned`), it must give the same answer; a request's path and query must be what a naive decoder
/// makes of its target.
enum HTTPRequestHarness {
    static func run(_ data: UnsafeRawBufferPointer) throws(FuzzFailure) {
        let whole = HTTPParser.parse(data, scanFrom: 0)
        try checkInPieces(data, whole: whole)
        if case .request(let request, let consumed) = whole {
            try check(consumed > 0 && consumed <= data.count, "consumed \(consumed) of \(data.count) bytes")
            try checkDecoding(request)
        }
        // The same bytes as a target given to the public initializer (no byte checks there).
        let target = String(decoding: data, as: UTF8.self)
        if let request = HTTPRequest(method: .get, target: target) { try checkDecoding(request) }
    }

    /// Feeds growing prefixes, about eight steps, carrying the scan position as the server does.
    static func checkInPieces(_ data: UnsafeRawBufferPointer, whole: HeadParse) throws(FuzzFailure) {
        let step = max(1, data.count / 8 + (data.first.map { Int($0 & 3) } ?? 0))
        var scanned = 0
        var length = 0
        while length < data.count {
            length = min(data.count, length + step)
            let prefix = UnsafeRawBufferPointer(rebasing: data[0..<length])
            let partial = HTTPParser.parse(prefix, scanFrom: scanned)
            switch partial {
            case .incomplete(let next):
                try check(next >= 0 && next <= length, "scanned \(next) of \(length) bytes")
                scanned = next
                continue
            case .request, .failure:
                try check(describe(partial) == describe(whole),
                          "in pieces of \(step): \(describe(partial)); whole: \(describe(whole))")
                return
            }
        }
        if case .incomplete = whole { return }
        try check(data.isEmpty, "whole: \(describe(whole)), but every prefix was incomplete")
    }

    static func describe(_ parse: HeadParse) -> String {
        switch parse {
        case .incomplete: return "incomplete"
        case .failure(let status, let message): return "failure \(status) \(message)"
        case .request(let request, let consumed): return "request of \(consumed) bytes: \(describe(request))"
        }
    }

    static func describe(_ request: HTTPRequest) -> String {
        "\(request.method) \(request.target) \(request.version) path \(request.path) query "
            + "\(request.query.map { "\($0.name)=\($0.value)" }) malformed "
            + "\(request.malformedQueryParameter ?? "-") keep-alive \(request.keepAlive) "
            + "inm \(request.ifNoneMatch ?? "-") ims \(request.ifModifiedSince ?? "-")"
    }

    /// The request's path, query and malformed parameter against `ReferenceTargetDecoder`.
    static func checkDecoding(_ request: HTTPRequest) throws(FuzzFailure) {
        guard let expected = ReferenceTargetDecoder.decode(Array(request.target.utf8)) else {
            throw FuzzFailure(description: "the parser accepted the target \(preview(Array(request.target.utf8))), "
                              + "the reference refuses it")
        }
        let query = request.query.map { [$0.name, $0.value] }
        try check(expected.path == request.path && expected.query == query
                      && expected.malformed == request.malformedQueryParameter,
                  "target \(preview(Array(request.target.utf8))): parser \(describe(request)), reference "
                      + "\(expected)")
    }
}

/// A naive request-target decoder from RFC 9112 and the HTML form rules, with whole arrays.
enum ReferenceTargetDecoder {
    struct Decoded: CustomStringConvertible {
        var path: String
        var query: [[String]]
        var malformed: String?
        var description: String { "path \(path) query \(query) malformed \(malformed ?? "-")" }
    }

    static func decode(_ target: [UInt8]) -> Decoded? {
        if target == Array("*".utf8) { return Decoded(path: "*", query: [], malformed: nil) }
        var rest = target[...]
        if target.first != UInt8(ascii: "/") {
            let lower = String(decoding: target.prefix(8), as: UTF8.self).lowercased()
            guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else { return nil }
            rest = target.dropFirst(lower.hasPrefix("http://") ? 7 : 8)
            let pathStart = rest.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? rest.endIndex
            rest = rest[pathStart...]
        }
        guard !rest.contains(UInt8(ascii: "#")) else { return nil }
        let question = rest.firstIndex(of: UInt8(ascii: "?"))
        guard let path = percentDecode(rest[..<(question ?? rest.endIndex)], plus: false) else { return nil }
        var decoded = Decoded(path: path.isEmpty ? "/" : path, query: [], malformed: nil)
        guard let question else { return decoded }
        for piece in rest[(question + 1)...].split(separator: UInt8(ascii: "&")) {
            let parts = piece.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = percentDecode(parts[0], plus: true) else {
                decoded.malformed = String(decoding: parts[0], as: UTF8.self)
                break
            }
            guard let value = percentDecode(parts.count > 1 ? parts[1] : [], plus: true) else {
                decoded.malformed = name
                break
            }
            decoded.query.append([name, value])
        }
        return decoded
    }

    static func percentDecode(_ bytes: ArraySlice<UInt8>, plus: Bool) -> String? {
        var output: [UInt8] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes[index] == UInt8(ascii: "%") {
                guard index + 2 < bytes.endIndex else { return nil }
                let digits = bytes[(index + 1)...(index + 2)]
                // UInt8(_:radix:) also takes a sign: only hex digits are an escape.
                guard digits.allSatisfy({ $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "-") }),
                      let value = UInt8(String(decoding: digits, as: UTF8.self), radix: 16) else { return nil }
                output.append(value)
                index += 3
            } else {
                output.append(plus && bytes[index] == UInt8(ascii: "+") ? UInt8(ascii: " ") : bytes[index])
                index += 1
            }
        }
        return String(validating: output, as: UTF8.self)
    }
}
