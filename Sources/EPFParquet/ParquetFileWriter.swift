import Glibc

/// The codec of every page: Parquet's GZIP (zlib, at a level from 1 fastest to 9 smallest), or none.
package enum ParquetCompression: Sendable, Equatable {
    case gzip(level: Int32)
    case none
}

/// How a `ParquetFileWriter` splits and compresses.
package struct ParquetWriterOptions: Sendable {
    /// A row group ends after this many rows ...
    package var rowGroupRows: Int
    /// ... or when its encoded pages take this many bytes, whichever comes first (bounds the memory of one file).
    package var rowGroupBytes: Int
    /// The pages' codec.
    package var compression: ParquetCompression

    package init(rowGroupRows: Int = 1_000_000, rowGroupBytes: Int = 64 << 20,
                compression: ParquetCompression = .gzip(level: 1)) {
        self.rowGroupRows = rowGroupRows
        self.rowGroupBytes = rowGroupBytes
        self.compression = compression
    }
}

/// Writes one Apache Parquet file, row by row, with bounded memory: rows are appended value by value
/// (`append...(column:)`, then `endRow`), each column's pages are encoded as they fill and compressed on another
/// core (`PageCompressor`) while the next rows are read, and a row group is written out when it reaches
/// `rowGroupRows` rows or `rowGroupBytes` bytes (or on `flushRowGroup`).
///
/// The file is written under a hidden temporary name in the same directory (`.NAME.partial-PID`) and renamed to
/// `path` by `finish`, after an fsync: an interrupted writer leaves no file under the final name. `abandon` (or
/// deinit before `finish`) removes the temporary file.
package final class ParquetFileWriter {
    /// Where the file ends up.
    package let path: String
    /// Where it is written until `finish`.
    package let temporaryPath: String
    package let columns: [ParquetColumn]
    private let options: ParquetWriterOptions
    private let createdBy: String
    private var descriptor: Int32
    private var offset: Int64 = 0
    private let builders: [ColumnChunkBuilder]
    /// `builders` without reference counting, for the calls made once per value (`builders` keeps them alive).
    private let unretained: UnsafeMutablePointer<Unmanaged<ColumnChunkBuilder>>
    private var rowsInGroup = 0
    private var rowGroups: [[UInt8]] = []
    /// Rows written, in every row group.
    package private(set) var rows: Int64 = 0

    /// Creates the temporary file and writes the magic. Throws `ParquetError.system` when it cannot be created.
    package init(path: String, columns: [ParquetColumn], options: ParquetWriterOptions = ParquetWriterOptions(),
                createdBy: String = "epf") throws {
        self.path = path
        self.columns = columns
        self.options = options
        self.createdBy = createdBy
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[...$0]) } ?? ""
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        temporaryPath = "\(directory).\(name).partial-\(getpid())"
        descriptor = open(temporaryPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw ParquetError.system(call: "open", path: temporaryPath, errno: errno) }
        var compressor: PageCompressor?
        do {
            if case .gzip(let level) = options.compression { compressor = try PageCompressor(level: level) }
        } catch {
            close(descriptor)
            unlink(temporaryPath)
            throw error
        }
        builders = columns.map { ColumnChunkBuilder(column: $0, compressor: compressor) }
        unretained = .allocate(capacity: max(builders.count, 1))
        for (index, builder) in builders.enumerated() { unretained[index] = Unmanaged.passUnretained(builder) }
        try write(Array("PAR1".utf8))
    }

    deinit {
        abandon()
        unretained.deallocate()
    }

    /// Bytes held for the row group being written.
    package var bufferedBytes: Int { builders.reduce(0) { $0 + $1.bufferedBytes } }

    /// Rows of the row group being written.
    package var bufferedRows: Int { rowsInGroup }

    @inline(__always) package func appendNull(column: Int) throws {
        try unretained[column]._withUnsafeGuaranteedRef { try $0.appendNull() }
    }

    /// An INT64, TIMESTAMP (milliseconds) or DECIMAL (unscaled) value.
    @inline(__always) package func append(_ value: Int64, column: Int) throws {
        try unretained[column]._withUnsafeGuaranteedRef { try $0.append(value) }
    }

    @inline(__always) package func append(_ value: Double, column: Int) throws {
        try unretained[column]._withUnsafeGuaranteedRef { try $0.append(value) }
    }

    /// A string's UTF-8 bytes (copied).
    @inline(__always) package func append(bytes: UnsafeRawBufferPointer, column: Int) throws {
        try unretained[column]._withUnsafeGuaranteedRef { try $0.append(bytes) }
    }

    /// Ends a row (every column must have had one value since the last). Writes the row group when it is full.
    @inline(__always) package func endRow() throws {
        rowsInGroup += 1
        if rowsInGroup >= options.rowGroupRows || (rowsInGroup & 1023 == 0 && bufferedBytes >= options.rowGroupBytes) {
            try flushRowGroup()
        }
    }

    /// Writes the rows gathered so far as a row group (nothing when there are none).
    package func flushRowGroup() throws {
        guard rowsInGroup > 0 else { return }
        guard descriptor >= 0 else { throw ParquetError.closed(path: path) }
        let start = offset
        var chunks: [(offset: Int64, summary: ColumnChunkSummary)] = []
        var uncompressed = 0
        for builder in builders {
            let chunkStart = offset
            let summary = try builder.finishChunk { try write($0) }
            chunks.append((chunkStart, summary))
            uncompressed += summary.uncompressedBytes
        }
        let rowCount = rowsInGroup
        let ordinal = Int16(truncatingIfNeeded: rowGroups.count)
        var group = ThriftCompactWriter()
        group.structList(1, count: chunks.count) { writer, index in
            chunks[index].summary.write(&writer, at: chunks[index].offset)
        }
        group.i64(2, Int64(uncompressed))
        group.i64(3, Int64(rowCount))
        group.i64(5, start)
        group.i64(6, offset - start)
        group.i16(7, ordinal)
        rowGroups.append(group.bytes)
        rows += Int64(rowCount)
        rowsInGroup = 0
    }

    /// Writes the last row group and the footer, syncs, closes and renames the file to `path`.
    package func finish() throws {
        try flushRowGroup()
        guard descriptor >= 0 else { throw ParquetError.closed(path: path) }
        let footer = ThriftCompactWriter.message { file in
            file.i32(1, 1) // version
            file.structList(2, count: columns.count + 1) { element, index in
                if index == 0 {
                    element.string(4, "schema")
                    element.i32(5, Int32(columns.count))
                } else {
                    columns[index - 1].writeSchemaElement(&element)
                }
            }
            file.i64(3, rows)
            file.structList(4, count: rowGroups.count) { writer, index in writer.appendRaw(rowGroups[index]) }
            file.string(6, createdBy)
            // TypeDefinedOrder for every column: min_value and max_value follow each type's order.
            file.structList(7, count: columns.count) { order, _ in order.emptyStructure(1) }
        }
        let length = UInt32(footer.count)
        try write(footer + (0..<4).map { UInt8(truncatingIfNeeded: length >> (8 * UInt32($0))) } + Array("PAR1".utf8))
        guard fsync(descriptor) == 0 else {
            throw ParquetError.system(call: "fsync", path: temporaryPath, errno: errno)
        }
        let closed = close(descriptor)
        descriptor = -1
        guard closed == 0 else { throw ParquetError.system(call: "close", path: temporaryPath, errno: errno) }
        guard rename(temporaryPath, path) == 0 else {
            let code = errno
            unlink(temporaryPath)
            throw ParquetError.system(call: "rename", path: path, errno: code)
        }
    }

    /// Stops writing and removes the temporary file (nothing after `finish`).
    package func abandon() {
        guard descriptor >= 0 else { return }
        close(descriptor)
        descriptor = -1
        unlink(temporaryPath)
    }

    /// Writes all of `bytes` at the end of the file (retrying short writes and EINTR). The corresponding C call is
    /// `write(2)`.
    private func write(_ bytes: [UInt8]) throws {
        guard descriptor >= 0 else { throw ParquetError.closed(path: path) }
        try bytes.withUnsafeBytes { buffer in
            var done = 0
            while done < buffer.count {
                guard let base = buffer.baseAddress else { return }
                let count = Glibc.write(descriptor, base + done, buffer.count - done)
                if count < 0 {
                    if errno == EINTR { continue }
                    throw ParquetError.system(call: "write", path: temporaryPath, errno: errno)
                }
                done += count
            }
        }
        offset += Int64(bytes.count)
    }
}
