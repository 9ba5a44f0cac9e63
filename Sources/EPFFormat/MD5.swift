import Foundation

/// MD5 (RFC 1321), for checking Apple's `.md5` sidecars. Not for security.
package struct MD5: Sendable {
    private var state: (UInt32, UInt32, UInt32, UInt32) = (0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476)
    private var pending = [UInt8]()
    private var length: UInt64 = 0

    private static let shifts: [UInt32] = [
        7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
        5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
        4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
        6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
    ]
    private static let constants: [UInt32] = (0..<64).map { index in
        UInt32(truncatingIfNeeded: Int64(abs(sin(Double(index + 1))) * 4_294_967_296.0))
    }

    /// A fresh hash.
    package init() {
        pending.reserveCapacity(64)
    }

    /// Adds bytes.
    package mutating func update(_ buffer: UnsafeRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        length &+= UInt64(buffer.count)
        var index = 0
        if !pending.isEmpty {
            let take = min(64 - pending.count, buffer.count)
            pending.append(contentsOf: UnsafeRawBufferPointer(start: base, count: take))
            index = take
            if pending.count == 64 {
                let block = pending
                block.withUnsafeBytes { raw in if let pointer = raw.baseAddress { compress(pointer) } }
                pending.removeAll(keepingCapacity: true)
            }
        }
        while index + 64 <= buffer.count {
            compress(base + index)
            index += 64
        }
        if index < buffer.count {
            pending.append(contentsOf: UnsafeRawBufferPointer(start: base + index, count: buffer.count - index))
        }
    }

    /// Adds bytes.
    package mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    private mutating func compress(_ block: UnsafeRawPointer) {
        var (a, b, c, d) = state
        @inline(__always) func word(_ index: Int) -> UInt32 {
            UInt32(littleEndian: block.loadUnaligned(fromByteOffset: index &* 4, as: UInt32.self))
        }
        for round in 0..<64 {
            var f: UInt32
            var g: Int
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
            f = f &+ a &+ MD5.constants[round] &+ word(g)
            a = d
            d = c
            c = b
            let shift = MD5.shifts[round]
            b = b &+ ((f << shift) | (f >> (32 - shift)))
        }
        state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d)
    }

    /// Finishes and returns the digest as 32 lowercase hex digits.
    package mutating func finalizeHex() -> String {
        let bitLength = length &* 8
        var padding: [UInt8] = [0x80]
        let afterPad = (pending.count + 1) % 64
        padding += [UInt8](repeating: 0, count: afterPad <= 56 ? 56 - afterPad : 120 - afterPad)
        for shift in stride(from: 0, to: 64, by: 8) {
            padding.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
        }
        let savedLength = length
        update(padding)
        length = savedLength
        var hex = ""
        for word in [state.0, state.1, state.2, state.3] {
            for shift in stride(from: 0, to: 32, by: 8) {
                let byte = UInt8(truncatingIfNeeded: word >> UInt32(shift))
                hex += String(format: "%02x", byte)
            }
        }
        return hex
    }

    /// The MD5 of a whole file, read in 1 MiB chunks. Throws `EPFError` when the file cannot be read, and
    /// `EPFError.io` with `ECANCELED` when `shouldStop` (asked before each chunk) turns true.
    package static func hexDigest(ofFile path: String, shouldStop: () -> Bool = { false }) throws -> String {
        let source = try FileByteSource(path: path)
        var hash = MD5()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 64)
        defer { buffer.deallocate() }
        while true {
            if shouldStop() { throw EPFError.io(path: path, call: "read", errno: ECANCELED) }
            let count = try source.read(into: buffer)
            if count == 0 { break }
            hash.update(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        }
        return hash.finalizeHex()
    }
}
