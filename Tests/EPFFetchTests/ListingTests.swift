@testable import EPFFetch
import EPFTestSupport
import Foundation
import Testing

/// Apache listings, `.md5` sidecars and pruning the mirror.
@Suite struct ListingTests {
    static let apache = """
        <!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 3.2 Final//EN">
        <html><head><title>Index of /feeds/epf/v5/current</title></head><body>
        <h1>Index of /feeds/epf/v5/current</h1>
        <pre><img src="/icons/blank.gif" alt="Icon "> <a href="?C=N;O=D">Name</a> <a href="?C=M;O=A">Last modified</a>
        <a HREF="?C=S;O=A">Size</a> <a href="?C=D;O=A">Description</a><hr>
        <img src="/icons/back.gif" alt="[PARENTDIR]"> <a href="/feeds/epf/v5/">Parent Directory</a>   -
        <img src="/icons/folder.gif" alt="[DIR]"> <a href="incremental/">incremental/</a>  2026-01-07 01:00    -
        <img src="/icons/folder.gif" alt="[DIR]"> <a href="itunes20260105/">itunes20260105/</a>  2026-01-05 10:00 -
        <img src="/icons/folder.gif" alt="[DIR]"> <a href="popularity20260105/">popularity20260105/</a> -
        <img alt="[   ]"> <a href="application_popularity_per_genre.tbz">application_popu..&gt;</a>
        <img src="/icons/unknown.gif" alt="[   ]"> <a href='odd%20name.tbz'>odd name.tbz</a>
        <a href="https://example.com/elsewhere">elsewhere</a> <a href="../">up</a> <a href="#top">top</a>
        <a href="a&amp;b.tbz">a&amp;b.tbz</a>
        </pre></body></html>
        """

    @Test func namesComeFromTheHrefNeverTheCutLinkText() {
        let entries = Listing.entries(Self.apache)
        #expect(entries.map(\.name) == ["incremental", "itunes20260105", "popularity20260105",
                                        "application_popularity_per_genre.tbz", "odd name.tbz", "a&b.tbz"])
        #expect(entries.filter(\.isDirectory).map(\.name) == ["incremental", "itunes20260105", "popularity20260105"])
    }

    @Test(arguments: [
        ("MD5 (application.tbz) = 0123456789abcdef0123456789ABCDEF\n", "0123456789abcdef0123456789abcdef"),
        ("0123456789abcdef0123456789abcdef  application.tbz\n", "0123456789abcdef0123456789abcdef"),
        ("MD5 (itunes20110928.tbz)= d41d8cd98f00b204e9800998ecf8427e", "d41d8cd98f00b204e9800998ecf8427e"),
    ])
    func sidecarsInBothFormats(_ text: String, _ digest: String) {
        #expect(MD5Sidecar.digest(text) == digest)
    }

    @Test(arguments: ["", "<html>Not Found</html>", "MD5 (a.tbz) = 1234",
                      "MD5 (a.tbz) = zz23456789abcdef0123456789abcdef"])
    func garbageIsNotASidecar(_ text: String) {
        #expect(MD5Sidecar.digest(text) == nil)
    }

    @Test func keepRemovesOlderFullsButNeverTheOneTheDatabaseWasBuiltFrom() throws {
        let work = try TemporaryDirectory()
        for path in ["itunes20260101/application.tbz", "pricing20260101/application_price.tbz",
                     "itunes20260108/application.tbz", "itunes20260115/application.tbz",
                     "itunes20260122/application.tbz", "incremental/20260102/itunes20260102/application.tbz",
                     "incremental/20260116/itunes20260116/application.tbz"] {
            try work.write(path, [1])
        }
        let mirror = Mirror(root: work.path)
        let removed = try mirror.prune(keep: 1, protected: "20260108")
        #expect(removed.sorted() == ["incremental/20260102", "itunes20260101", "itunes20260115", "pricing20260101"])
        let left = try FileManager.default.contentsOfDirectory(atPath: work.path).sorted()
        #expect(left == ["incremental", "itunes20260108", "itunes20260122"])
        #expect(FileManager.default.fileExists(atPath: work.file("incremental/20260116/itunes20260116")))
    }
}
