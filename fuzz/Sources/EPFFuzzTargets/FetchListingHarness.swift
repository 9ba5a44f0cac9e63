import EPFFetch
import EPFFormat
import Foundation

/// The parsers `epf fetch` and `epf import` run on what a feed server sends: `.md5` sidecars (both parsers) and
/// Apache "Index of" listings.
enum FetchListingHarness {
    /// One sidecar file per process, rewritten for every input (`FeedInput.parseSidecar` reads a path), removed
    /// when the process exits.
    static let sidecarPath: String = {
        atexit { unlink(FetchListingHarness.sidecarPath) }
        return NSTemporaryDirectory() + "/epf-fuzz-\(getpid()).md5"
    }()

    static func run(_ data: UnsafeRawBufferPointer) throws(FuzzFailure) {
        let text = String(decoding: data, as: UTF8.self)
        let lowered = text.lowercased()
        let digest = MD5Sidecar.digest(text)
        if let digest { try checkDigest(digest, in: lowered, "MD5Sidecar.digest") }
        write(data, to: sidecarPath)
        if let parsed = try? FeedInput.parseSidecar(sidecarPath) {
            try checkDigest(parsed, in: lowered, "FeedInput.parseSidecar")
        }
        // Well-formed sidecars in both shapes, named from the input: both parsers must read their digest.
        let hex = Array("0123456789abcdef")
        let made = String(data.prefix(32).map { hex[Int($0 & 15)] }).padding(toLength: 32, withPad: "0",
                                                                             startingAt: 0)
        let name = String(text.unicodeScalars.filter { $0.isASCII && ($0.properties.isAlphabetic || $0 == ".") }
            .prefix(40)).ifEmpty("application.tbz")
        for sidecar in ["MD5 (\(name)) = \(made)\n", "\(made.uppercased())  \(name)\n"] {
            try check(MD5Sidecar.digest(sidecar) == made, "MD5Sidecar.digest(\(sidecar.debugDescription))")
            Array(sidecar.utf8).withUnsafeBytes { write($0, to: sidecarPath) }
            try check((try? FeedInput.parseSidecar(sidecarPath)) == made,
                      "FeedInput.parseSidecar(\(sidecar.debugDescription))")
        }

        var names = Set<String>()
        for entry in Listing.entries(text) {
            try check(!entry.name.isEmpty && !entry.name.contains("/") && entry.name != ".." && entry.name != ".",
                      "listing entry \(entry.name.debugDescription)")
            try check(names.insert(entry.name).inserted, "listing entry \(entry.name.debugDescription) twice")
        }
    }

    /// Replaces the file with a new one. Not FileManager's atomic write, nor truncation: both make ext4 flush the
    /// data to disk (auto_da_alloc), which made this target run at under 100 inputs a second.
    static func write(_ bytes: UnsafeRawBufferPointer, to path: String) {
        unlink(path)
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        if let base = bytes.baseAddress { _ = Glibc.write(descriptor, base, bytes.count) }
    }

    static func checkDigest(_ digest: String, in lowered: String, _ parser: String) throws(FuzzFailure) {
        let hex = digest.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
        try check(digest.utf8.count == 32 && hex,
                  "\(parser) gave \(digest.debugDescription), not 32 lowercase hex digits")
        try check(lowered.contains(digest), "\(parser) gave \(digest), which is not in the text")
    }
}

extension String {
    /// The string, or `replacement` when it is empty.
    func ifEmpty(_ replacement: String) -> String { isEmpty ? replacement : self }
}
