/// MD5 (RFC 1321), streaming, for the `.md5` sidecars Apple ships next to every archive. Not for security.
///
/// Named `MD5Digest` so it does not clash with an `MD5` the format layer may declare.
public struct MD5Digest: Sendable {
    private var a0: UInt32 = 0x6745_2301
    private var b0: UInt32 = 0xefcd_ab89
    private var c0: UInt32 = 0x98ba_dcfe
    private var d0: UInt32 = 0x1032_5476
    private var block = [UInt8](repeating: 0, count: 64)
    private var blockCount = 0
    private var totalBytes: UInt64 = 0

    private static let shifts: [UInt32] = [
        7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
        5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
        4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
        6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
    ]

    /// floor(abs(sin(i + 1)) * 2^32), written out as in RFC 1321 so no floating point is involved.
    private static let table: [UInt32] = [
        0xd76a_a478, 0xe8c7_b756, 0x2420_70db, 0xc1bd_ceee, 0xf57c_0faf, 0x4787_c62a, 0xa830_4613, 0xfd46_9501,
        0x6980_98d8, 0x8b44_f7af, 0xffff_5bb1, 0x895c_d7be, 0x6b90_1122, 0xfd98_7193, 0xa679_438e, 0x49b4_0821,
        0xf61e_2562, 0xc040_b340, 0x265e_5a51, 0xe9b6_c7aa, 0xd62f_105d, 0x0244_1453, 0xd8a1_e681, 0xe7d3_fbc8,
        0x21e1_cde6, 0xc337_07d6, 0xf4d5_0d87, 0x455a_14ed, 0xa9e3_e905, 0xfcef_a3f8, 0x676f_02d9, 0x8d2a_4c8a,
        0xfffa_3942, 0x8771_f681, 0x6d9d_6122, 0xfde5_380c, 0xa4be_ea44, 0x4bde_cfa9, 0xf6bb_4b60, 0xbebf_bc70,
        0x289b_7ec6, 0xeaa1_27fa, 0xd4ef_3085, 0x0488_1d05, 0xd9d4_d039, 0xe6db_99e5, 0x1fa2_7cf8, 0xc4ac_5665,
        0xf429_2244, 0x432a_ff97, 0xab94_23a7, 0xfc93_a039, 0x655b_59c3, 0x8f0c_cc92, 0xffef_f47d, 0x8584_5dd1,
        0x6fa8_7e4f, 0xfe2c_e6e0, 0xa301_4314, 0x4e08_11a1, 0xf753_7e82, 0xbd3a_f235, 0x2ad7_d2bb, 0xeb86_d391,
    ]

    /// A fresh digest with nothing hashed yet.
    public init() {}

    /// Hashes `bytes` in one call and returns the 32 lowercase hex digits.
    public static func hex(of bytes: [UInt8]) -> String {
        var digest = MD5Digest()
        digest.update(bytes)
        return digest.finalizeHex()
    }

    /// Adds bytes to the hash.
    public mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// Adds bytes to the hash; any length, including zero.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        totalBytes &+= UInt64(bytes.count)
        var index = 0
        if blockCount > 0 {
            let take = min(64 - blockCount, bytes.count)
            for offset in 0..<take { block[blockCount + offset] = bytes[offset] }
            blockCount += take
            index = take
            if blockCount == 64 {
                let copy = block
                copy.withUnsafeBytes { raw in
                    if let pointer = raw.baseAddress { compress(pointer) }
                }
                blockCount = 0
            }
        }
        while index + 64 <= bytes.count {
            compress(base + index)
            index += 64
        }
        while index < bytes.count {
            block[blockCount] = bytes[index]
            blockCount += 1
            index += 1
        }
    }

    /// Finishes the hash and returns the 16 digest bytes; the digest must not be updated afterwards.
    public mutating func finalize() -> [UInt8] {
        let bitLength = totalBytes &* 8
        var padding: [UInt8] = [0x80]
        let afterMark = (blockCount + 1) % 64
        let zeros = afterMark <= 56 ? 56 - afterMark : 120 - afterMark
        padding.append(contentsOf: repeatElement(0, count: zeros))
        for shift in stride(from: 0, to: 64, by: 8) {
            padding.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
        }
        let savedTotal = totalBytes
        update(padding)
        totalBytes = savedTotal
        var result: [UInt8] = []
        result.reserveCapacity(16)
        for word in [a0, b0, c0, d0] {
            for shift in stride(from: 0, to: 32, by: 8) {
                result.append(UInt8(truncatingIfNeeded: word >> UInt32(shift)))
            }
        }
        return result
    }

    /// Finishes the hash and returns 32 lowercase hex digits, the form `md5sum` and Apple's sidecars use.
    public mutating func finalizeHex() -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in finalize() {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    private mutating func compress(_ pointer: UnsafeRawPointer) {
        var words = [UInt32](repeating: 0, count: 16)
        for index in 0..<16 {
            words[index] = UInt32(littleEndian: pointer.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self))
        }
        var a = a0
        var b = b0
        var c = c0
        var d = d0
        for round in 0..<64 {
            var f: UInt32
            let g: Int
            switch round {
            case 0..<16:
                f = (b & c) | (~b & d)
                g = round
            case 16..<32:
                f = (d & b) | (~d & c)
                g = (5 &* round &+ 1) % 16
            case 32..<48:
                f = b ^ c ^ d
                g = (3 &* round &+ 5) % 16
            default:
                f = c ^ (b | ~d)
                g = (7 &* round) % 16
            }
            f = f &+ a &+ MD5Digest.table[round] &+ words[g]
            a = d
            d = c
            c = b
            let shift = MD5Digest.shifts[round]
            b = b &+ ((f << shift) | (f >> (32 - shift)))
        }
        a0 = a0 &+ a
        b0 = b0 &+ b
        c0 = c0 &+ c
        d0 = d0 &+ d
    }
}
