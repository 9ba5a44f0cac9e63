import Foundation

/// The uncompressed size of an input file, as far as it can be known without reading the whole file: what the
/// import's space check multiplies by the database's high-water ratio.
package struct InputSize: Sendable, Equatable {
    /// How `bytes` was found.
    package enum Source: String, Sendable {
        /// The file's own size (a plain table file or an uncompressed tar).
        case fileSize = "file size"
        /// The gzip trailer (`ISIZE`: the uncompressed size modulo 2^32).
        case gzipTrailer = "gzip trailer"
        /// The size in the header of the archive's first tar member (a v4/v5 archive holds one table).
        case tarHeader = "tar header"
        /// The compressed size times `FeedInput.bzip2Ratio` (bzip2 records no size).
        case estimated = "compressed size x ratio"
    }

    /// Uncompressed bytes (an estimate when `source` is `.estimated`).
    package var bytes: Int64
    package var source: Source
}

extension FeedInput {
    /// Uncompressed bytes per compressed byte assumed for bzip2 data, whose stream records no size.
    ///
    /// Measured with `epf generate --apps 20000 --layout v5`: 175,828,062 bytes of tables in 14,801,135 bytes of
    /// `.tbz` (11.9x overall; per table from 1.7x for tiny tables to 15.8x for `video`, 12.2x for
    /// `application_detail`, 14.7x for `application_price`). 12 is that overall figure rounded up; Apple's real
    /// text is less repetitive than the generator's, so it compresses less and 12 then overstates its size,
    /// which errs on the side of refusing. It is used only where no tar header gives the size: `.bz2` files, and
    /// v3 archives holding several tables (whose first member alone is known without decompressing them all).
    package static let bzip2Ratio: Int64 = 12

    /// The uncompressed size of one input file: its size for a plain file or `.tar`, the gzip trailer for `.gz`,
    /// the first member's tar header for `.tbz`/`.tgz` (at least the compressed size times `bzip2Ratio` for a
    /// feed's `.tbz`, `itunes20260105.tbz`, which holds more tables), the compressed size times `bzip2Ratio` for a `.bz2`. Reading a
    /// tar header decompresses the first block only. Throws `EPFError` when the file cannot be read; a corrupt
    /// archive falls back to the ratio (the import itself reports the corruption).
    package static func uncompressedSize(of file: String) throws -> InputSize {
        var info = stat()
        guard stat(file, &info) == 0 else { throw EPFError.io(path: file, call: "stat", errno: errno) }
        let size = Int64(info.st_size)
        let estimated = InputSize(bytes: size * bzip2Ratio, source: .estimated)
        switch packing(of: file) {
        case .plain, .tar:
            return InputSize(bytes: size, source: .fileSize)
        case .gzip:
            return try gzipTrailerSize(file, compressed: size)
        case .bzip2:
            return estimated
        case .tarGzip, .tarBzip2:
            guard let member = try? firstMemberSize(file) else {
                return packing(of: file) == .tarGzip ? try gzipTrailerSize(file, compressed: size) : estimated
            }
            // A feed archive (itunes20260105.tbz, v3) holds every table of its feed, the first one alone named
            // by that header; a v4/v5 archive (application.tbz) holds one.
            let isFeedArchive = feedAndDate(in: (file as NSString).lastPathComponent) != nil
            if packing(of: file) == .tarBzip2, isFeedArchive, estimated.bytes > member { return estimated }
            return InputSize(bytes: member, source: .tarHeader)
        }
    }

    /// The gzip `ISIZE` trailer (little-endian, the last 4 bytes). It holds the size modulo 2^32, so it is
    /// raised by 4 GiB steps until it is at least the compressed size (a 5 GiB table would otherwise read 1 GiB).
    static func gzipTrailerSize(_ file: String, compressed: Int64) throws -> InputSize {
        guard compressed >= 18, let handle = FileHandle(forReadingAtPath: file) else {
            return InputSize(bytes: compressed, source: .fileSize)
        }
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(compressed - 4))
        let trailer = [UInt8](try handle.read(upToCount: 4) ?? Data())
        guard trailer.count == 4 else { return InputSize(bytes: compressed, source: .fileSize) }
        var bytes = Int64(trailer[0]) | Int64(trailer[1]) << 8 | Int64(trailer[2]) << 16 | Int64(trailer[3]) << 24
        while bytes < compressed { bytes += 1 << 32 }
        return InputSize(bytes: bytes, source: .gzipTrailer)
    }

    /// The size of the archive's first member that is not noise, read from its tar header.
    static func firstMemberSize(_ file: String) throws -> Int64 {
        // The header is in the first block: the serial decoder, rather than blocks decoded ahead for nothing.
        var options = ReadOptions(prefetch: false)
        options.decompressionThreads = 1
        let raw: ByteSource = try FileByteSource(path: file)
        let source: ByteSource = packing(of: file) == .tarGzip
            ? try GzipByteSource(raw, path: file) : try bzip2(raw, file, options)
        let tar = TarReader(source, path: file)
        while let member = try tar.nextMember() {
            if !isNoise((member.name as NSString).lastPathComponent) { return member.size }
        }
        throw EPFError.noTables(path: file)
    }
}
