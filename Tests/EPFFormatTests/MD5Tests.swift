import EPFFormat
import EPFTestSupport
import Testing

/// The generator writes `.md5` sidecars with EPFFormat's MD5; these pin it to RFC 1321.
@Suite struct MD5Tests {
    /// The test suite of RFC 1321, appendix A.5.
    @Test(arguments: [
        ("", "d41d8cd98f00b204e9800998ecf8427e"),
        ("a", "0cc175b9c0f1b6a831c399e269772661"),
        ("abc", "900150983cd24fb0d6963f7d28e17f72"),
        ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
        ("abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"),
        ("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", "d174ab98d277d9f5a5611c2c9f419d9f"),
        ("12345678901234567890123456789012345678901234567890123456789012345678901234567890",
         "57edf4a22be3c955ac49da2e2107b67a"),
    ])
    func rfc1321Vectors(input: String, expected: String) {
        var digest = MD5()
        digest.update(Array(input.utf8))
        #expect(digest.finalizeHex() == expected)
    }

    @Test func streamingInOddPiecesMatchesOneShot() {
        let data = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        var digest = MD5()
        var index = 0
        var step = 1
        while index < data.count {
            let end = min(data.count, index + step)
            digest.update(Array(data[index..<end]))
            index = end
            step = step % 130 + 7
        }
        var whole = MD5()
        whole.update(data)
        #expect(digest.finalizeHex() == whole.finalizeHex())
    }
}

/// `.md5` sidecars as Apple writes them, and what is not one.
@Suite struct SidecarTests {
    @Test(arguments: [
        ("MD5 (itunes20260105.tbz) = 0cc175b9c0f1b6a831c399e269772661\n", "0cc175b9c0f1b6a831c399e269772661"),
        ("0CC175B9C0F1B6A831C399E269772661  itunes20260105.tbz\n", "0cc175b9c0f1b6a831c399e269772661"),
    ])
    func digestsAreRead(text: String, digest: String) throws {
        let scratch = try TemporaryDirectory()
        try scratch.write("a.tbz.md5", Array(text.utf8))
        #expect(try FeedInput.parseSidecar(scratch.file("a.tbz.md5")) == digest)
    }

    /// Full-width digits are hex digits to `Character.isHexDigit`; they are not an MD5 digest, and the sidecar is
    /// bad (not an archive whose checksum disagrees).
    @Test(arguments: ["MD5 (a.tbz) = \u{FF10}cc175b9c0f1b6a831c399e26977266\u{FF11}",
                      "MD5 (a.tbz) = 0cc175b9c0f1b6a831c399e26977266", "MD5 (a.tbz) = ", "nothing here"])
    func whatIsNotADigestIsABadSidecar(text: String) throws {
        let scratch = try TemporaryDirectory()
        try scratch.write("a.tbz.md5", Array(text.utf8))
        #expect(throws: EPFError.self) { try FeedInput.parseSidecar(scratch.file("a.tbz.md5")) }
    }
}
