import Foundation

/// Identifies one table file found in an input: where it is and what it holds.
package struct TableFile: Sendable, Equatable {
    /// Human-readable place: a path, or `archive.tbz:member/name`.
    package var location: String
    /// The table name, e.g. `application` (part suffixes removed).
    package var table: String
    /// The feed, e.g. `itunes`, `pricing`, `popularity`, when a `<feed><YYYYMMDD>` name was found in the path.
    package var feed: String?
    /// The feed's date `YYYYMMDD` from the path, when found.
    package var feedDate: String?
    /// The part number for tables split into numbered files, else nil.
    package var part: Int?
    /// The archive holding the table, when it came from one.
    package var archive: String?
    /// The MD5 checked against a sidecar before reading, when there was a sidecar.
    package var verifiedMD5: String?

    /// Creates a description of a table file.
    package init(location: String, table: String, feed: String? = nil, feedDate: String? = nil, part: Int? = nil,
                archive: String? = nil, verifiedMD5: String? = nil) {
        self.location = location
        self.table = table
        self.feed = feed
        self.feedDate = feedDate
        self.part = part
        self.archive = archive
        self.verifiedMD5 = verifiedMD5
    }
}

/// Turns any path the project meets (table file, `.gz`, tar archive, v3 or v4/v5 feed directory) into a stream of
/// table readers, never extracting to disk.
package enum FeedInput {
    /// How a single file is packed.
    enum Packing {
        case plain, gzip, tarBzip2, tarGzip, tar, bzip2
    }

    static func packing(of path: String) -> Packing {
        let name = (path as NSString).lastPathComponent.lowercased()
        if name.hasSuffix(".tbz") || name.hasSuffix(".tbz2") || name.hasSuffix(".tar.bz2") { return .tarBzip2 }
        if name.hasSuffix(".tgz") || name.hasSuffix(".tar.gz") { return .tarGzip }
        if name.hasSuffix(".tar") { return .tar }
        if name.hasSuffix(".gz") { return .gzip }
        if name.hasSuffix(".bz2") { return .bzip2 }
        return .plain
    }

    /// Splits a file or member name into table name and part number: `application_detail.2` ->
    /// (`application_detail`, 2). EPF table names never end in a digit, so trailing digits are a part number.
    package static func tableName(fromFileName fileName: String) -> (table: String, part: Int?) {
        var name = fileName
        for suffix in [".tbz2", ".tbz", ".tar.bz2", ".tar.gz", ".tgz", ".tar", ".gz", ".bz2", ".txt"]
        where name.lowercased().hasSuffix(suffix) {
            name.removeLast(suffix.count)
            break
        }
        // EPF Flat files are named like `tvEpisode-usa.txt`: table names keep letters, digits and `_` only.
        name = String(name.map { character -> Character in
            character.isASCII && (character.isLetter || character.isNumber || character == "_") ? character : "_"
        })
        let digits = name.reversed().prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, digits.count < name.count else { return (name, nil) }
        var stem = String(name.dropLast(digits.count))
        while let last = stem.last, "._-".contains(last) { stem.removeLast() }
        for marker in ["_part", "-part", ".part", "part"] where stem.hasSuffix(marker) {
            stem.removeLast(marker.count)
            break
        }
        while let last = stem.last, "._-".contains(last) { stem.removeLast() }
        guard !stem.isEmpty else { return (name, nil) }
        return (stem, Int(String(digits.reversed())))
    }

    /// Finds `<feed><YYYYMMDD>` (e.g. `itunes20260101`) in the components of a path, innermost first.
    package static func feedAndDate(in path: String) -> (feed: String, date: String)? {
        for component in path.split(separator: "/").reversed() {
            var name = String(component)
            for suffix in [".tbz", ".tar.bz2", ".tar.gz", ".tgz", ".tar"] where name.hasSuffix(suffix) {
                name.removeLast(suffix.count)
            }
            let digits = name.reversed().prefix { $0.isASCII && $0.isNumber }
            guard digits.count == 8 else { continue }
            let feed = String(name.dropLast(8))
            guard !feed.isEmpty, feed.allSatisfy({ $0.isLetter || $0 == "_" }) else { continue }
            return (feed, String(digits.reversed()))
        }
        return nil
    }

    /// Whether a directory entry is noise (hidden files, AppleDouble, checksums, notes, and the `.part`,
    /// `.part.state` and `.partial` files of a download in progress).
    static func isNoise(_ name: String) -> Bool {
        if name.hasPrefix(".") || name.hasPrefix("_") { return true }
        let lower = name.lowercased()
        if lower.hasSuffix(".part") || lower.hasSuffix(".state") || lower.hasSuffix(".partial")
            || lower.hasSuffix(".tmp") {
            return true
        }
        // A database next to the feed (`epf import .`): the file, its -wal, -shm and -journal, its lock file and
        // its rejects folder.
        let databaseFiles = ["-wal", "-shm", "-journal", ".lock", ".rejects", ".sqlite3", ".db"]
        if databaseFiles.contains(where: { lower.hasSuffix($0) }) { return true }
        return lower.hasSuffix(".md5") || lower.hasSuffix(".md") || lower.hasSuffix(".json")
            || lower.hasSuffix(".sqlite") || lower.hasPrefix("readme") || lower.hasSuffix(".log")
            || lower.hasSuffix(".txt.md5")
    }

    /// The sidecar for an archive, if one exists: `<archive>.md5`, or `<archive without extension>.md5`.
    package static func sidecar(for archive: String) -> String? {
        let candidates = [archive + ".md5", ((archive as NSString).deletingPathExtension) + ".md5"]
        return candidates.first { FileManager.default.fileExists(atPath: $0) }
    }

    /// Parses `MD5 (name) = hex` (BSD style) or `hex  name` (md5sum style) and returns the hex digest.
    package static func parseSidecar(_ path: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw EPFError.io(path: path, call: "open", errno: errno == 0 ? EIO : errno)
        }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let candidates: [Substring]
        if let equals = text.range(of: "=", options: .backwards) {
            candidates = [text[equals.upperBound...]]
        } else {
            candidates = text.split(whereSeparator: { $0 == " " || $0 == "\t" }).prefix(1).map { $0 }
        }
        let hex = candidates.first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        guard hex.count == 32, hex.allSatisfy({ $0.isHexDigit && $0.isASCII }) else {
            throw EPFError.badSidecar(sidecar: path,
                                      message: "expected 'MD5 (name) = <32 hex digits>', got '\(text.prefix(80))'")
        }
        return hex
    }

    /// Verifies an archive against its sidecar, if it has one. Returns the digest when verified. `shouldStop` lets
    /// a read-ahead thread give up when its reader is gone.
    package static func verifySidecar(of archive: String, shouldStop: () -> Bool = { false }) throws -> String? {
        guard let sidecar = sidecar(for: archive) else { return nil }
        let expected = try parseSidecar(sidecar)
        let actual = try MD5.hexDigest(ofFile: archive, shouldStop: shouldStop)
        guard expected == actual else {
            throw EPFError.checksumMismatch(archive: archive, sidecar: sidecar, expected: expected, actual: actual)
        }
        return actual
    }

    /// The files, in reading order, that make up the input at `path`: the path itself when it is a file, or the
    /// table files and archives of a feed directory (v3: extension-less table files; v4/v5: one archive per table,
    /// parts in numeric order). Nested feed directories (`itunes…/`, `pricing…/`) are included, `incremental/`
    /// is not (sync handles it).
    package static func files(at path: String) throws -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw EPFError.notFound(path: path)
        }
        guard isDirectory.boolValue else { return [path] }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: path)
        } catch {
            throw EPFError.io(path: path, call: "opendir", errno: EACCES)
        }
        var result: [(key: (String, Int, String), path: String)] = []
        for name in names where !isNoise(name) && name != "incremental" {
            let full = (path as NSString).appendingPathComponent(name)
            var childIsDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: full, isDirectory: &childIsDirectory)
            if childIsDirectory.boolValue {
                for nested in try files(at: full) { result.append(((name, 0, nested), nested)) }
            } else {
                let (table, part) = tableName(fromFileName: name)
                result.append(((table, part ?? 0, name), full))
            }
        }
        result.sort { left, right in
            if left.key.0 != right.key.0 { return left.key.0 < right.key.0 }
            if left.key.1 != right.key.1 { return left.key.1 < right.key.1 }
            return left.key.2 < right.key.2
        }
        return result.map(\.path)
    }

    /// Opens every table at `path` in order and calls `body` with its description and a reader positioned after
    /// the header. Archives with an `.md5` sidecar are verified first; a mismatch throws before any table of that
    /// archive is read. A table whose header cannot be parsed throws `.badHeader`.
    package static func forEachTable(at path: String, options: ReadOptions = ReadOptions(),
                                    _ body: (TableFile, EPFTableReader) throws -> Void) throws {
        let readingUnits = try units(at: path, options: options)
        if readingUnits.isEmpty { throw EPFError.noTables(path: path) }
        for unit in readingUnits {
            try forEachTable(inUnit: unit, options: options, body)
        }
    }

    /// Same as `forEachTable(at:)` for one file (plain, `.gz`, `.bz2` or a tar archive).
    /// With `readAhead` (a `ReadAheadFile` of this very bzip2 file), its sidecar check, decompressed bytes and
    /// errors are used instead of opening the file here; the tables and errors are the same.
    package static func forEachTable(inFile file: String, options: ReadOptions, readAhead: ReadAheadFile? = nil,
                                    _ body: (TableFile, EPFTableReader) throws -> Void) throws {
        let packing = packing(of: file)
        if packing == .plain && options.memoryMap, let mapped = try MappedFile(path: file) {
            let digest = options.verifySidecars ? try verifySidecar(of: file) : nil
            let reader = try EPFTableReader(mapped: mapped, location: file, options: options)
            let size = Int64(mapped.count)
            reader.inputPosition = { [weak reader] in (reader?.consumedOffset ?? size, size) }
            try body(describe(plain: file, verifiedMD5: digest), reader)
            return
        }
        let prepared = readAhead.flatMap { $0.path == file && readsAhead(file) ? $0 : nil }
        let digest: String?
        let raw: CountingSource
        let totalSize: Int64
        if let opened = try prepared?.open() {
            (digest, raw, totalSize) = (opened.digest, opened.raw, opened.totalSize)
        } else {
            digest = options.verifySidecars ? try verifySidecar(of: file) : nil
            let fileSource = try FileByteSource(path: file)
            totalSize = (try? fileSource.size()) ?? 0
            raw = CountingSource(fileSource)
        }
        let position: () -> (read: Int64, total: Int64) = { (raw.count, totalSize) }
        switch packing {
        case .plain, .gzip, .bzip2:
            var source: ByteSource = raw
            if packing == .gzip { source = try GzipByteSource(raw, path: file) }
            if packing == .bzip2 { source = try prepared ?? bzip2(raw, file, options) }
            // The reading thread also checks UTF-8 where it is not the bottleneck (plain, gzip); bzip2
            // decompression is slower than parsing even on all cores (about 30 MB/s per core against several
            // hundred MB/s of checked parsing), so there the parser checks: moving the check would not change the
            // wall time and would take CPU from the decoding threads.
            let tracker = options.validate && packing != .bzip2 ? ChunkValidation() : nil
            if options.prefetch && prepared == nil && (packing != .plain || tracker != nil) {
                source = PrefetchingSource(source, validation: tracker)
            }
            var description = describe(plain: file, verifiedMD5: digest)
            if packing != .plain { description.archive = file }
            let reader = try EPFTableReader(source: source, location: file, options: options)
            reader.inputPosition = position
            if let tracker, options.prefetch { reader.chunkValidation = (tracker, 0) }
            try body(description, reader)
        case .tarBzip2, .tarGzip, .tar:
            var source: ByteSource = raw
            if packing == .tarBzip2 { source = try prepared ?? bzip2(raw, file, options) }
            if packing == .tarGzip { source = try GzipByteSource(raw, path: file) }
            let tracker = options.validate && packing != .tarBzip2 && options.prefetch ? ChunkValidation() : nil
            if options.prefetch && prepared == nil && (packing != .tar || tracker != nil) {
                source = PrefetchingSource(source, validation: tracker)
            }
            let tar = TarReader(source, path: file)
            var found = false
            while let member = try tar.nextMember() {
                let memberName = (member.name as NSString).lastPathComponent
                if isNoise(memberName) || member.size == 0 && memberName.isEmpty { continue }
                found = true
                let (table, part) = tableName(fromFileName: memberName)
                let feed = feedAndDate(in: member.name) ?? feedAndDate(in: file)
                let location = "\(file):\(member.name)"
                let description = TableFile(location: location, table: table, feed: feed?.feed,
                                            feedDate: feed?.date, part: part, archive: file, verifiedMD5: digest)
                let compressedMember = FeedInput.packing(of: memberName) == .gzip
                let memberSource: ByteSource = compressedMember ? try GzipByteSource(tar, path: location) : tar
                let reader = try EPFTableReader(source: memberSource, location: location, options: options)
                reader.inputPosition = position
                if let tracker, !compressedMember { reader.chunkValidation = (tracker, member.dataOffset) }
                try body(description, reader)
            }
            if !found { throw EPFError.noTables(path: file) }
        }
    }
}

extension FeedInput {
    /// The description of a single table file (plain, or one compressed stream) at `file`.
    static func describe(plain file: String, verifiedMD5: String?) -> TableFile {
        let (table, part) = tableName(fromFileName: (file as NSString).lastPathComponent)
        let feed = feedAndDate(in: file)
        return TableFile(location: file, table: table, feed: feed?.feed, feedDate: feed?.date, part: part,
                         verifiedMD5: verifiedMD5)
    }

    /// Whether `file` is bzip2-compressed (`.tbz`, `.tar.bz2`, `.bz2`): the inputs a `ReadAheadFile` reads.
    package static func readsAhead(_ file: String) -> Bool {
        let packing = packing(of: file)
        return packing == .tarBzip2 || packing == .bzip2
    }

    /// The bzip2 decoder for `file`: parallel on `options.decompressionThreads` threads, serial for 1.
    static func bzip2(_ raw: ByteSource, _ file: String, _ options: ReadOptions) throws -> ByteSource {
        try Bzip2Decompression.source(raw, path: file, threads: options.decompressionThreads)
    }
}

// MARK: - Tables split into headerless parts

extension FeedInput {
    /// The data stream of a file's first table: the file itself, its decompressed bytes, or the first regular
    /// member of a tar archive. The returned objects keep the whole chain of sources alive.
    static func openFirstTableStream(_ file: String, options: ReadOptions) throws -> ByteSource {
        let packing = packing(of: file)
        let raw: ByteSource = try FileByteSource(path: file)
        switch packing {
        case .plain: return raw
        case .gzip: return try GzipByteSource(raw, path: file)
        case .bzip2: return try bzip2(raw, file, options)
        case .tarBzip2, .tarGzip, .tar:
            var source = raw
            if packing == .tarBzip2 { source = try bzip2(raw, file, options) }
            if packing == .tarGzip { source = try GzipByteSource(raw, path: file) }
            let tar = TarReader(source, path: file)
            while let member = try tar.nextMember() {
                if !isNoise((member.name as NSString).lastPathComponent) { return tar }
            }
            throw EPFError.noTables(path: file)
        }
    }

    /// Whether a part starts with its own header (`#`), or continues the previous part's records.
    static func startsWithHeader(_ file: String, options: ReadOptions) throws -> Bool {
        // One byte is needed: the serial decoder, rather than blocks decoded ahead for nothing.
        var peek = options
        peek.decompressionThreads = 1
        let stream = try openFirstTableStream(file, options: peek)
        var byte: UInt8 = 0
        let count = try withUnsafeMutableBytes(of: &byte) { try stream.read(into: $0) }
        return count == 1 && byte == UInt8(ascii: "#")
    }

    /// The reading units at `path`, in order: usually one file each; a table split into numbered parts whose
    /// later parts carry no header (a byte-level split) is one unit of all its parts, read as one stream.
    /// Throws `.noTables` for a directory without one: an import or inspection of nothing is a mistake (a download
    /// that left an empty directory, a wrong path), not a success.
    package static func units(at path: String, options: ReadOptions = ReadOptions()) throws -> [[String]] {
        let paths = try files(at: path)
        guard !paths.isEmpty else { throw EPFError.noTables(path: path) }
        var result: [[String]] = []
        var index = 0
        while index < paths.count {
            let file = paths[index]
            let name = tableName(fromFileName: (file as NSString).lastPathComponent)
            var end = index + 1
            if name.part != nil {
                let directory = (file as NSString).deletingLastPathComponent
                while end < paths.count {
                    let next = paths[end]
                    let nextName = tableName(fromFileName: (next as NSString).lastPathComponent)
                    guard nextName.part != nil, nextName.table == name.table,
                          (next as NSString).deletingLastPathComponent == directory else { break }
                    end += 1
                }
            }
            let group = Array(paths[index..<end])
            if group.count > 1, try group.dropFirst().contains(where: { try !startsWithHeader($0, options: options) }) {
                result.append(group)
            } else {
                result += group.map { [$0] }
            }
            index = end
        }
        return result
    }

    /// Reads one unit from `units(at:)`: a single file as `forEachTable(inFile:)` does, or headerless parts
    /// chained into one table stream (each part's sidecar verified first).
    /// `readAhead` is used for a single-file unit that is its file (see `forEachTable(inFile:)`).
    package static func forEachTable(inUnit unit: [String], options: ReadOptions, readAhead: ReadAheadFile? = nil,
                                    _ body: (TableFile, EPFTableReader) throws -> Void) throws {
        guard let first = unit.first else { return }
        guard unit.count > 1 else {
            try forEachTable(inFile: first, options: options, readAhead: readAhead, body)
            return
        }
        var digests: [String] = []
        for part in unit where options.verifySidecars {
            if let digest = try verifySidecar(of: part) { digests.append(digest) }
        }
        let chained = ChainedPartsSource(parts: unit, options: options)
        let source: ByteSource = options.prefetch ? PrefetchingSource(chained) : chained
        let name = tableName(fromFileName: (first as NSString).lastPathComponent)
        let feed = feedAndDate(in: first)
        let location = "\(first) (+\(unit.count - 1) headerless parts)"
        let description = TableFile(location: location, table: name.table, feed: feed?.feed, feedDate: feed?.date,
                                    part: nil, archive: packing(of: first) == .plain ? nil : first,
                                    verifiedMD5: digests.count == unit.count ? digests.joined(separator: ",") : nil)
        let reader = try EPFTableReader(source: source, location: location, options: options)
        try body(description, reader)
    }
}

/// The table streams of several part files, one after the other, as one stream.
final class ChainedPartsSource: ByteSource {
    private let parts: [String]
    private let options: ReadOptions
    private var next = 0
    private var current: ByteSource?

    init(parts: [String], options: ReadOptions) {
        self.parts = parts
        self.options = options
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while true {
            if current == nil {
                guard next < parts.count else { return 0 }
                current = try FeedInput.openFirstTableStream(parts[next], options: options)
                next += 1
            }
            guard let source = current else { return 0 }
            let count = try source.read(into: buffer)
            if count > 0 { return count }
            current = nil
        }
    }
}
