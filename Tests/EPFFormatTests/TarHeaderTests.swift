import Testing
@testable import EPFFormat

/// Tar headers with impossible sizes or pax records: errors or ignored records, never traps.
@Suite struct TarHeaderTests {
    /// A 512-byte ustar header of `type` for `name` with the size field `size` (12 bytes) and a valid checksum.
    static func header(_ name: String, type: Character, size: [UInt8]) -> [UInt8] {
        var block = [UInt8](repeating: 0, count: 512)
        block.replaceSubrange(0..<name.utf8.count, with: name.utf8)
        block.replaceSubrange(124..<136, with: size)
        block[156] = UInt8(ascii: type.unicodeScalars.first ?? "0")
        block.replaceSubrange(257..<263, with: Array("ustar\u{0}".utf8))
        block.replaceSubrange(148..<156, with: [UInt8](repeating: 0x20, count: 8))
        let digits = Array(String(block.reduce(0) { $0 + Int($1) }, radix: 8).utf8)
        block.replaceSubrange(148..<156, with: [UInt8](repeating: UInt8(ascii: "0"), count: 6 - digits.count)
                              + digits + [0, 0x20])
        return block
    }

    static func octal(_ value: Int) -> [UInt8] {
        let digits = Array(String(value, radix: 8).utf8)
        return [UInt8](repeating: UInt8(ascii: "0"), count: 11 - digits.count) + digits + [0]
    }

    /// What the reader makes of an archive: member names until it throws, and the error.
    static func members(_ archive: [UInt8]) -> (names: [String], error: EPFError?) {
        let reader = TarReader(MemoryByteSource(archive), path: "test.tar")
        var names: [String] = []
        do {
            while let member = try reader.nextMember() { names.append(member.name) }
        } catch {
            return (names, error as? EPFError)
        }
        return (names, nil)
    }

    /// Found while checking the tar fuzz target (fuzz/regressions/tar/negative-pax-size).
    @Test func aNegativePaxSizeIsAnError() {
        let record = Array("15 size=-12345\n".utf8)
        let pax = Self.header("a/pax", type: "x", size: Self.octal(record.count))
            + record + [UInt8](repeating: 0, count: 512 - record.count)
        let archive = pax + Self.header("a/neg", type: "0", size: Self.octal(0)) + [UInt8](repeating: 1, count: 512)
        let result = Self.members(archive)
        #expect(result.names.isEmpty)
        guard case .tar(_, let message, let offset) = result.error else {
            Issue.record("no tar error: \(String(describing: result.error))")
            return
        }
        #expect(message == "impossible member size -12345")
        #expect(offset == 1024)
    }

    /// Found while checking the tar fuzz target (fuzz/regressions/tar/base256-size-near-int64-max).
    @Test func aBase256SizeNearInt64MaxIsAnError() {
        let size: [UInt8] = [0x80, 0, 0, 0, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE, 0xFF]
        let archive = Self.header("a/genre", type: "0", size: size) + [UInt8](repeating: 0x78, count: 512)
        let result = Self.members(archive)
        #expect(result.names.isEmpty)
        guard case .tar(_, let message, _) = result.error else {
            Issue.record("no tar error: \(String(describing: result.error))")
            return
        }
        #expect(message.hasPrefix("impossible member size 9223372036854775"))
    }

    /// A pax record whose length is shorter than its own "LEN " prefix, or far past the data, ends the records
    /// instead of trapping. Found by the tar fuzz target (fuzz/regressions/tar/pax-length-shorter-than-prefix).
    @Test(arguments: ["1 path=x\n", "3 path=x\n", "9223372036854775807 path=x\n"])
    func malformedPaxLengthsEndTheRecords(record: String) {
        let data = Array(record.utf8)
        let pax = Self.header("a/pax", type: "x", size: Self.octal(data.count))
            + data + [UInt8](repeating: 0, count: 512 - data.count)
        let member = Self.header("a/genre", type: "0", size: Self.octal(1)) + [UInt8](repeating: 0x41, count: 512)
        let result = Self.members(pax + member)
        #expect(result.names == ["a/genre"])
        #expect(result.error == nil)
    }

    /// Sizes that are merely large still make a member (the archive then ends inside it).
    @Test func aLargeButPossibleBase256SizeIsAMember() {
        let size: [UInt8] = [0x80, 0, 0, 0, 0, 0, 0, 0x01, 0, 0, 0, 0]
        let archive = Self.header("a/big", type: "0", size: size) + [UInt8](repeating: 0x78, count: 512)
        #expect(Self.members(archive).names == ["a/big"])
    }
}
