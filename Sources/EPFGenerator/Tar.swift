/// Writes a tar archive (POSIX ustar headers, 512-byte blocks, two zero blocks at the end) into a sink.
///
/// Names longer than 100 bytes get a GNU `././@LongLink` entry (type `L`) before their header, as GNU tar
/// writes them; sizes of 8 GiB and more use the GNU base-256 size encoding. Headers are deterministic:
/// mode 0644 (0755 for directories), owner 0/0, the given mtime.
final class TarWriter {
    private let sink: ByteSink
    private var memberName = ""
    private var announced: Int64 = 0
    private var written: Int64 = 0
    private var inMember = false
    private static let zeroBlock = [UInt8](repeating: 0, count: 512)

    init(sink: ByteSink) {
        self.sink = sink
    }

    /// Adds a directory entry; `name` should end with `/`.
    func addDirectory(_ name: String, mtime: Int64) throws {
        try writeHeader(name: name, size: 0, mtime: mtime, type: UInt8(ascii: "5"), mode: 0o755)
    }

    /// Starts a regular file of exactly `size` bytes; send the bytes with `write`, then call `endFile`.
    func beginFile(_ name: String, size: Int64, mtime: Int64) throws {
        try writeHeader(name: name, size: size, mtime: mtime, type: UInt8(ascii: "0"), mode: 0o644)
        memberName = name
        announced = size
        written = 0
        inMember = true
    }

    /// A sink for the current member's content.
    var memberSink: ByteSink { MemberSink(tar: self) }

    /// Passes member bytes to the archive.
    func writeContent(_ bytes: UnsafeRawBufferPointer) throws {
        written += Int64(bytes.count)
        try sink.write(bytes)
    }

    /// Pads the member to a whole block; throws if its size differs from the header's.
    func endFile() throws {
        inMember = false
        guard written == announced else {
            throw GeneratorError.tarSizeMismatch(member: memberName, announced: announced, written: written)
        }
        try pad(written)
    }

    /// Writes the two zero blocks that end an archive, then finishes the sink chain.
    func finish() throws {
        try sink.write(TarWriter.zeroBlock)
        try sink.write(TarWriter.zeroBlock)
        try sink.finish()
    }

    private func pad(_ size: Int64) throws {
        let remainder = Int(size % 512)
        if remainder != 0 {
            try TarWriter.zeroBlock.withUnsafeBytes { raw in
                try sink.write(UnsafeRawBufferPointer(rebasing: raw[0..<(512 - remainder)]))
            }
        }
    }

    private func writeHeader(name: String, size: Int64, mtime: Int64, type: UInt8, mode: Int) throws {
        let nameBytes = Array(name.utf8)
        if nameBytes.count > 100 {
            let longName = nameBytes + [0]
            let header = TarWriter.header(name: Array("././@LongLink".utf8), size: Int64(longName.count),
                                          mtime: 0, type: UInt8(ascii: "L"), mode: 0o644)
            try sink.write(header)
            try sink.write(longName)
            try pad(Int64(longName.count))
        }
        try sink.write(TarWriter.header(name: Array(nameBytes.prefix(100)), size: size, mtime: mtime, type: type,
                                        mode: mode))
    }

    /// One 512-byte ustar header block.
    static func header(name: [UInt8], size: Int64, mtime: Int64, type: UInt8, mode: Int) -> [UInt8] {
        var block = [UInt8](repeating: 0, count: 512)
        func put(_ bytes: [UInt8], at offset: Int, width: Int) {
            for (index, byte) in bytes.prefix(width).enumerated() { block[offset + index] = byte }
        }
        func octal(_ value: Int64, at offset: Int, width: Int) {
            // width - 1 digits, zero padded, then NUL.
            var digits = Array(String(value, radix: 8).utf8)
            while digits.count < width - 1 { digits.insert(UInt8(ascii: "0"), at: 0) }
            put(digits, at: offset, width: width - 1)
        }
        put(name, at: 0, width: 100)
        octal(Int64(mode), at: 100, width: 8)
        octal(0, at: 108, width: 8)
        octal(0, at: 116, width: 8)
        if size < 0o777_7777_7777 {
            octal(size, at: 124, width: 12)
        } else {
            // GNU base-256: high bit of the first byte set, big-endian value in the rest.
            block[124] = 0x80
            for index in 0..<8 { block[135 - index] = UInt8(truncatingIfNeeded: size >> (8 * Int64(index))) }
        }
        octal(max(0, mtime), at: 136, width: 12)
        block[156] = type
        put(Array("ustar".utf8) + [0], at: 257, width: 6)
        put(Array("00".utf8), at: 263, width: 2)
        put(Array("root".utf8), at: 265, width: 32)
        put(Array("root".utf8), at: 297, width: 32)
        for index in 148..<156 { block[index] = UInt8(ascii: " ") }
        let checksum = block.reduce(0) { $0 + Int($1) }
        var digits = Array(String(checksum, radix: 8).utf8)
        while digits.count < 6 { digits.insert(UInt8(ascii: "0"), at: 0) }
        put(digits + [0, UInt8(ascii: " ")], at: 148, width: 8)
        return block
    }
}

/// Forwards bytes into the tar member being written.
private final class MemberSink: ByteSink {
    private let tar: TarWriter
    init(tar: TarWriter) { self.tar = tar }
    func write(_ bytes: UnsafeRawBufferPointer) throws { try tar.writeContent(bytes) }
    func finish() throws { try tar.endFile() }
}
