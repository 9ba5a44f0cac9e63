import EPFFormat

/// The tar reader (ustar, GNU long names and base-256 sizes, pax headers) over one archive.
///
/// The first input byte picks the input read size, how much of each member is read (all, some, none: the reader
/// skips the rest) and whether every 512-byte block gets a valid header checksum (so that mutations of header
/// fields are not all stopped by the checksum); the rest is the archive. The members, their data and the final
/// error must not depend on the read size, and every member's data must be the input's bytes at its offset.
enum TarHarness {
    static func run(_ data: UnsafeRawBufferPointer) throws(FuzzFailure) {
        guard let knob = data.first else { return }
        var archive = Array(data.dropFirst())
        if knob & 0x10 != 0 { fixChecksums(&archive) }
        let portion = [Int.max, 0, 1, 700][Int(knob >> 2 & 3)]
        let whole = read(archive, maximumRead: .max, portion: portion)
        let maximumRead = [Int.max, 1, 13, 512][Int(knob & 3)]
        if maximumRead != .max {
            let pieces = read(archive, maximumRead: maximumRead, portion: portion)
            try check(pieces == whole, "reads of \(maximumRead): \(pieces); one read: \(whole)")
        }
        for member in whole.members {
            try check(member.size >= 0, "member \(member.name) has size \(member.size)")
            let start = Int(member.dataOffset)
            try check(start <= archive.count && member.data.count <= archive.count - start
                          && archive[start..<(start + member.data.count)].elementsEqual(member.data),
                      "member \(member.name) at \(start): its data is not the archive's bytes there")
        }
    }

    /// Writes a valid checksum (octal, then NUL and space) into every whole 512-byte block.
    static func fixChecksums(_ archive: inout [UInt8]) {
        var start = 0
        while start + 512 <= archive.count {
            for index in (start + 148)..<(start + 156) { archive[index] = 0x20 }
            let sum = archive[start..<(start + 512)].reduce(0) { $0 + Int($1) }
            let digits = Array(String(sum, radix: 8).utf8)
            let field = [UInt8](repeating: UInt8(ascii: "0"), count: max(0, 6 - digits.count)) + digits.suffix(6)
            for (offset, byte) in (field + [0, 0x20]).enumerated() { archive[start + 148 + offset] = byte }
            start += 512
        }
    }

    struct Member: Equatable {
        var name: String
        var size: Int64
        var dataOffset: Int64
        var data: [UInt8]
    }

    struct Reading: Equatable, CustomStringConvertible {
        var members: [Member] = []
        var error: String?
        var description: String {
            "\(members.map { "\($0.name) (\($0.size) bytes at \($0.dataOffset))" }) error \(error ?? "none")"
        }
    }

    /// Every member (at most 1000), reading `portion` bytes of each.
    static func read(_ archive: [UInt8], maximumRead: Int, portion: Int) -> Reading {
        var reading = Reading()
        let reader = TarReader(MemoryByteSource(archive, maximumRead: maximumRead), path: "fuzz.tar")
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 16)
        defer { buffer.deallocate() }
        do {
            while reading.members.count < 1000, let member = try reader.nextMember() {
                var bytes: [UInt8] = []
                while bytes.count < portion {
                    let wanted = min(buffer.count, portion - bytes.count)
                    let count = try reader.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<wanted]))
                    if count == 0 { break }
                    bytes += buffer[0..<count]
                }
                reading.members.append(Member(name: member.name, size: member.size, dataOffset: member.dataOffset,
                                              data: bytes))
            }
        } catch {
            reading.error = "\(error)"
        }
        return reading
    }
}
