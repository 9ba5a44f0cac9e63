import Foundation

/// One entry of a server's directory listing.
package struct ListingEntry: Sendable, Equatable {
    /// The entry's name, from the link's `href` (percent-decoded), without a trailing `/`.
    package var name: String
    /// True when the `href` ends in `/`.
    package var isDirectory: Bool
}

/// Reads Apache "Index of" pages (and nginx's autoindex, which has the same links).
///
/// Names come from the `href`, never the link text: Apache cuts long names in the text
/// (`popularity20130205.t..&gt;`). Sort links (`?C=N;O=D`), the parent link, absolute links to other places and
/// links with a query or fragment are skipped.
package enum Listing {
    /// The entries of `html`, in page order, each name once.
    package static func entries(_ html: String) -> [ListingEntry] {
        var result: [ListingEntry] = []
        var seen = Set<String>()
        for href in hrefs(html) {
            if href.isEmpty || href.hasPrefix("?") || href.hasPrefix("#") || href.hasPrefix("/")
                || href.contains("://") || href.hasPrefix("mailto:") || href.contains("?") {
                continue
            }
            var path = href
            if path.hasPrefix("./") { path.removeFirst(2) }
            let isDirectory = path.hasSuffix("/")
            if isDirectory { path.removeLast() }
            guard !path.isEmpty, path != "..", path != ".", !path.contains("/"),
                  let name = path.removingPercentEncoding, !name.contains("/"), name != ".." else { continue }
            if seen.insert(name).inserted { result.append(ListingEntry(name: name, isDirectory: isDirectory)) }
        }
        return result
    }

    /// The values of every `href` attribute, entity-decoded.
    static func hrefs(_ html: String) -> [String] {
        var result: [String] = []
        let bytes = Array(html.utf8)
        let needle = Array("href".utf8)
        var index = 0
        while index + needle.count < bytes.count {
            guard matches(bytes, at: index, needle) else { index += 1; continue }
            var cursor = index + needle.count
            while cursor < bytes.count, bytes[cursor] == UInt8(ascii: " ") { cursor += 1 }
            guard cursor < bytes.count, bytes[cursor] == UInt8(ascii: "=") else { index = cursor; continue }
            cursor += 1
            while cursor < bytes.count, bytes[cursor] == UInt8(ascii: " ") { cursor += 1 }
            guard cursor < bytes.count else { break }
            let quote = bytes[cursor]
            let start: Int
            var end: Int
            if quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") {
                start = cursor + 1
                end = start
                while end < bytes.count, bytes[end] != quote { end += 1 }
            } else {
                start = cursor
                end = start
                while end < bytes.count, bytes[end] != UInt8(ascii: " "), bytes[end] != UInt8(ascii: ">") { end += 1 }
            }
            result.append(decodeEntities(String(decoding: bytes[start..<min(end, bytes.count)], as: UTF8.self)))
            index = end + 1
        }
        return result
    }

    private static func matches(_ bytes: [UInt8], at index: Int, _ needle: [UInt8]) -> Bool {
        for offset in 0..<needle.count where bytes[index + offset] | 0x20 != needle[offset] { return false }
        // Only the attribute: preceded by whitespace.
        return index > 0 && (bytes[index - 1] == UInt8(ascii: " ") || bytes[index - 1] == UInt8(ascii: "\n")
                             || bytes[index - 1] == UInt8(ascii: "\t"))
    }

    static func decodeEntities(_ text: String) -> String {
        guard text.contains("&") else { return text }
        return text.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&amp;", with: "&")
    }
}

/// Parses `.md5` sidecars: BSD `MD5 (application.tbz) = <32 hex>` or md5sum's `<32 hex>  application.tbz`.
package enum MD5Sidecar {
    /// The digest in lowercase hex, or nil when `text` holds no digest in either format.
    package static func digest(_ text: String) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let candidate: Substring
        if trimmed.hasPrefix("MD5"), let equals = trimmed.range(of: "=", options: .backwards) {
            candidate = trimmed[equals.upperBound...]
        } else {
            candidate = trimmed.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).first ?? ""
        }
        let hex = candidate.trimmingCharacters(in: .whitespaces).lowercased()
        guard hex.count == 32, hex.allSatisfy({ $0.isHexDigit && $0.isASCII }) else { return nil }
        return hex
    }
}
