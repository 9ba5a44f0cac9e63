/// Parquet's RLE/bit-packed hybrid encoding (Encodings.md), for definition levels and dictionary indices: runs of
/// one repeated value (`varint(count << 1)` then the value in ceil(bitWidth / 8) little-endian bytes) and groups of
/// eight values packed `bitWidth` bits each, least significant bit first (`varint(groups << 1 | 1)` then the bits).
enum HybridEncoding {
    /// The fewest bits that hold every value up to `maximum` (at least 1).
    static func bitWidth(forMaximum maximum: Int) -> Int {
        var width = 1
        while width < 32 && (1 << width) <= maximum { width += 1 }
        return width
    }

    /// Appends `count` values read by `value(i)` (each below 2^bitWidth) to `output`. A run of 8 or more equal values
    /// is one RLE run; the rest goes in bit-packed groups, at most 63 groups a run (a one-byte header), the last group
    /// padded with zeros (readers stop at the page's value count).
    static func encode(count: Int, bitWidth: Int, into output: inout [UInt8], value: (Int) -> UInt32) {
        var index = 0
        func runLength(at start: Int) -> Int {
            let first = value(start)
            var end = start + 1
            while end < count && value(end) == first { end += 1 }
            return end - start
        }
        while index < count {
            let run = runLength(at: index)
            if run >= 8 {
                Varint.append(UInt64(run) << 1, to: &output)
                var repeated = value(index)
                for _ in 0..<((bitWidth + 7) / 8) {
                    output.append(UInt8(truncatingIfNeeded: repeated))
                    repeated >>= 8
                }
                index += run
                continue
            }
            let start = index
            var groups = 0
            while index < count && groups < 63 {
                if index > start && runLength(at: index) >= 8 { break }
                index += 8
                groups += 1
            }
            index = min(index, count)
            output.append(UInt8(groups << 1 | 1))
            pack(from: start, values: groups * 8, available: count, bitWidth: bitWidth, into: &output, value: value)
        }
    }

    /// Bit-packs `values` values from `start` (zeros past `available`), LSB first.
    private static func pack(from start: Int, values: Int, available: Int, bitWidth: Int, into output: inout [UInt8],
                             value: (Int) -> UInt32) {
        var buffer: UInt64 = 0
        var bits = 0
        for offset in 0..<values {
            let position = start + offset
            let item = position < available ? UInt64(value(position)) : 0
            buffer |= item << UInt64(bits)
            bits += bitWidth
            while bits >= 8 {
                output.append(UInt8(truncatingIfNeeded: buffer))
                buffer >>= 8
                bits -= 8
            }
        }
        if bits > 0 { output.append(UInt8(truncatingIfNeeded: buffer)) }
    }
}
