import Foundation

/// One regular file inside a tar archive.
package struct TarMember: Sendable, Equatable {
    /// The member's full path inside the archive (ustar prefix, GNU long name or pax path applied).
    package let name: String
    /// Size of the member's data in bytes.
    package let size: Int64
    /// Offset of the member's data in the uncompressed tar stream.
    package let dataOffset: Int64
}

/// Reads a tar stream (ustar, GNU long names, pax headers, base-256 sizes) member by member, without extracting.
///
/// Call `nextMember()`, then read the member's bytes through the reader itself (it is a `ByteSource` limited to
/// the current member). Unread bytes of a member are skipped by the next `nextMember()`.
package final class TarReader: ByteSource {
    private let inner: ByteSource
    private let path: String
    private var offset: Int64 = 0
    private var remainingInMember: Int64 = 0
    private var paddingAfterMember: Int64 = 0
    private var block = [UInt8](repeating: 0, count: 512)
    private var finished = false

    /// The largest member size accepted (2^62 bytes): far beyond any archive, with room for the padding.
    static let largestMember: Int64 = 1 << 62

    /// Reads the tar stream `inner`; `path` names the archive in errors.
    package init(_ inner: ByteSource, path: String) {
        self.inner = inner
        self.path = path
    }

    private func fail(_ message: String) -> EPFError {
        EPFError.tar(path: path, message: message, offset: offset)
    }

    /// Reads exactly `count` bytes into `destination`; false at a clean end of stream before any byte.
    private func readExactly(_ destination: UnsafeMutableRawBufferPointer) throws -> Bool {
        var got = 0
        while got < destination.count {
            let count = try inner.read(into: UnsafeMutableRawBufferPointer(rebasing: destination[got...]))
            if count == 0 {
                if got == 0 { return false }
                throw fail("archive ends inside a 512-byte block (truncated)")
            }
            got += count
        }
        offset += Int64(got)
        return true
    }

    private func skip(_ count: Int64) throws {
        var left = count
        var scratch = [UInt8](repeating: 0, count: 1 << 16)
        while left > 0 {
            let chunk = Int(min(left, Int64(scratch.count)))
            let ok = try scratch.withUnsafeMutableBytes { raw in
                try readExactly(UnsafeMutableRawBufferPointer(rebasing: raw[0..<chunk]))
            }
            if !ok { throw fail("archive ends inside a member (truncated)") }
            left -= Int64(chunk)
        }
    }

    private func readBlock() throws -> Bool {
        try block.withUnsafeMutableBytes { try readExactly($0) }
    }

    private func field(_ start: Int, _ length: Int) -> [UInt8] {
        let slice = block[start..<(start + length)]
        if let end = slice.firstIndex(of: 0) { return Array(block[start..<end]) }
        return Array(slice)
    }

    private func string(_ start: Int, _ length: Int) -> String {
        String(decoding: field(start, length), as: UTF8.self)
    }

    /// Parses a numeric header field: octal digits (space/NUL padded) or GNU base-256 when the high bit is set.
    private func number(_ start: Int, _ length: Int) throws -> Int64 {
        if block[start] & 0x80 != 0 {
            var value: Int64 = Int64(block[start] & 0x7f)
            for index in (start + 1)..<(start + length) {
                guard value < (Int64.max >> 8) else { throw fail("base-256 number too large") }
                value = (value << 8) | Int64(block[index])
            }
            return value
        }
        var value: Int64 = 0
        var seenDigit = false
        for index in start..<(start + length) {
            let byte = block[index]
            if byte == 0x20 || byte == 0 {
                if seenDigit { break } else { continue }
            }
            guard byte >= 0x30 && byte <= 0x37 else {
                throw fail("bad octal digit 0x\(String(byte, radix: 16)) in header field at \(start)")
            }
            seenDigit = true
            guard value < (Int64.max >> 3) else { throw fail("octal number too large") }
            value = value * 8 + Int64(byte - 0x30)
        }
        return value
    }

    private func checksumMatches() throws -> Bool {
        let stored = try number(148, 8)
        var unsigned: Int64 = 0
        var signed: Int64 = 0
        for (index, byte) in block.enumerated() {
            let value = (148..<156).contains(index) ? UInt8(0x20) : byte
            unsigned += Int64(value)
            signed += Int64(Int8(bitPattern: value))
        }
        return stored == unsigned || stored == signed
    }

    private func readData(_ size: Int64) throws -> [UInt8] {
        guard size <= 1 << 20 else { throw fail("extended header of \(size) bytes is too large") }
        var data = [UInt8](repeating: 0, count: Int(size))
        let ok = try data.withUnsafeMutableBytes { try readExactly($0) }
        if !ok && size > 0 { throw fail("archive ends inside an extended header (truncated)") }
        let padding = (512 - size % 512) % 512
        try skip(padding)
        return data
    }

    /// Parses pax records "LEN key=value\n" and returns the keys we use.
    private func paxRecords(_ data: [UInt8]) -> [String: String] {
        var result: [String: String] = [:]
        var index = 0
        while index < data.count {
            // The length counts the whole record, its own digits and space included: a shorter one (or one past
            // the data) is malformed, and ends the records.
            guard let space = data[index...].firstIndex(of: 0x20),
                  let length = Int(String(decoding: data[index..<space], as: UTF8.self)),
                  length > space - index, length <= data.count - index else { break }
            let record = data[(space + 1)..<(index + length)]
            if let equals = record.firstIndex(of: 0x3d) {
                let key = String(decoding: record[record.startIndex..<equals], as: UTF8.self)
                var valueEnd = record.endIndex
                if valueEnd > equals + 1 && data[valueEnd - 1] == 0x0a { valueEnd -= 1 }
                result[key] = String(decoding: data[(equals + 1)..<valueEnd], as: UTF8.self)
            }
            index += length
        }
        return result
    }

    /// Advances to the next regular file, skipping directories, links and the rest of the current member.
    /// Returns nil at the end of the archive. Throws `.tar` on a malformed or truncated archive.
    package func nextMember() throws -> TarMember? {
        guard !finished else { return nil }
        try skip(remainingInMember + paddingAfterMember)
        remainingInMember = 0
        paddingAfterMember = 0
        var longName: String?
        var paxPath: String?
        var paxSize: Int64?
        while true {
            let headerOffset = offset
            guard try readBlock() else {
                if headerOffset == 0 { throw fail("empty archive") }
                // Archives without the two terminating zero blocks are accepted: every member was complete.
                finished = true
                return nil
            }
            if block.allSatisfy({ $0 == 0 }) {
                finished = true
                return nil
            }
            guard try checksumMatches() else {
                throw EPFError.tar(path: path, message: "header checksum mismatch (not a tar archive, or corrupt)",
                                   offset: headerOffset)
            }
            let type = block[156]
            var size = try number(124, 12)
            if let override = paxSize { size = override }
            // A pax size may be negative and a base-256 one near Int64.max: neither is a member, and the padding
            // arithmetic below would trap on them.
            guard size >= 0, size <= Self.largestMember else {
                throw EPFError.tar(path: path, message: "impossible member size \(size)", offset: headerOffset)
            }
            switch type {
            case UInt8(ascii: "L"):
                let data = try readData(size)
                longName = String(decoding: data.prefix { $0 != 0 }, as: UTF8.self)
                continue
            case UInt8(ascii: "x"):
                let records = paxRecords(try readData(size))
                paxPath = records["path"] ?? paxPath
                if let text = records["size"], let value = Int64(text) { paxSize = value }
                continue
            case UInt8(ascii: "g"), UInt8(ascii: "K"):
                _ = try readData(size)
                continue
            case UInt8(ascii: "0"), 0, UInt8(ascii: "7"):
                var name = string(0, 100)
                let magic = string(257, 5)
                if magic == "ustar" {
                    let prefix = string(345, 155)
                    if !prefix.isEmpty { name = prefix + "/" + name }
                }
                if let longName { name = longName }
                if let paxPath { name = paxPath }
                remainingInMember = size
                paddingAfterMember = (512 - size % 512) % 512
                return TarMember(name: name, size: size, dataOffset: offset)
            default:
                // Directories, links, devices: no data we want; skip whatever data they declare.
                if type != UInt8(ascii: "5") && type != UInt8(ascii: "1") && type != UInt8(ascii: "2") {
                    try skip(size + (512 - size % 512) % 512)
                }
                longName = nil
                paxPath = nil
                paxSize = nil
                continue
            }
        }
    }

    /// Reads the current member's bytes; 0 at its end. Throws when the archive ends inside the member.
    package func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard remainingInMember > 0, buffer.count > 0 else { return 0 }
        let wanted = Int(min(Int64(buffer.count), remainingInMember))
        let count = try inner.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<wanted]))
        if count == 0 {
            throw fail("archive ends inside a member, \(remainingInMember) bytes short (truncated)")
        }
        offset += Int64(count)
        remainingInMember -= Int64(count)
        return count
    }
}
