import EPFFormat

/// What reading a whole decompressing source gave: its bytes (at most a limit), and how it ended.
struct Drained: CustomStringConvertible {
    var bytes: [UInt8] = []
    /// The source ended cleanly (false: it threw, or the limit stopped the reading).
    var finished = false
    /// The error the source threw, if it did.
    var error: String?
    /// The limit stopped the reading before the source ended.
    var limited: Bool { !finished && error == nil }

    var description: String {
        "\(bytes.count) bytes, " + (finished ? "finished" : error.map { "error \($0)" } ?? "stopped at the limit")
    }
}

/// Most output read from one input: a decompression bomb is not a bug, only slow.
let drainLimit = 8 << 20

/// Reads `source` in reads of `chunk` bytes until it ends, throws, or `drainLimit` bytes have come out.
func drain(_ source: ByteSource, chunk: Int) -> Drained {
    var result = Drained()
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
    defer { buffer.deallocate() }
    do {
        while result.bytes.count < drainLimit {
            let count = try source.read(into: buffer)
            if count == 0 {
                result.finished = true
                break
            }
            result.bytes += buffer[0..<count]
        }
    } catch {
        result.error = "\(error)"
    }
    if result.bytes.count > drainLimit { result.bytes.removeLast(result.bytes.count - drainLimit) }
    return result
}

/// Checks that `candidate` answers as `reference` does: the same bytes when the reference finished; an error, and
/// the same bytes as far as both went, when it failed; when the limit stopped the reference, the same bytes or an
/// error after a prefix of them.
func checkSameAnswer(_ candidate: Drained, _ reference: Drained, _ what: String) throws(FuzzFailure) {
    let prefix = candidate.bytes.count <= reference.bytes.count
        && candidate.bytes[...] == reference.bytes[0..<candidate.bytes.count]
    let shorter = min(candidate.bytes.count, reference.bytes.count)
    let agree = candidate.bytes[0..<shorter] == reference.bytes[0..<shorter]
    if reference.finished {
        try check(candidate.finished && candidate.bytes == reference.bytes,
                  "\(what): \(candidate), reference finished with \(reference.bytes.count) bytes"
                      + (candidate.finished ? " (different bytes)" : ""))
    } else if reference.error != nil {
        // How much of a damaged block libbz2 hands out before it finds the damage depends on its output buffer
        // sizes: both must fail, and agree on the bytes both handed out.
        try check(candidate.error != nil && agree,
                  "\(what): \(candidate), reference \(reference)" + (agree ? "" : " (different bytes)"))
    } else {
        try check((candidate.limited && candidate.bytes == reference.bytes) || (candidate.error != nil && prefix),
                  "\(what): \(candidate), reference \(reference)")
    }
}
