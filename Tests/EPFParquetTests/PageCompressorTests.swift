@testable import EPFParquet
import Testing

/// Pages compressed on the `PageCompressor`'s queue come back in the order given, byte for byte what compressing
/// each in line gives, however many are in flight and whichever order they are taken in.
struct PageCompressorTests {
    private static func pages(count: Int, seed: UInt64) -> [[UInt8]] {
        var state = seed
        func next() -> UInt64 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return state >> 33
        }
        let words = ["アプリ", "game", "ゲーム", "😀", "photo", "Café", "\n", "日本語", "the", "of"]
        return (0..<count).map { _ in
            var page: [UInt8] = []
            let length = Int(next() % 70_000)
            while page.count < length { page.append(contentsOf: Array(words[Int(next() % 10)].utf8) + [32]) }
            return page
        }
    }

    @Test(arguments: [1, 4, 40])
    func pagesComeBackAsCompressingInLineGives(inFlight: Int) throws {
        let pages = Self.pages(count: 60, seed: UInt64(inFlight))
        let inline = try GzipCompressor(level: 1)
        let expected = try pages.map { try inline.compress($0) }
        let compressor = try PageCompressor(level: 1)
        var waiting: [CompressedPage] = []
        var results: [[UInt8]] = []
        for page in pages {
            waiting.append(compressor.submit(page))
            if waiting.count > inFlight { results.append(try waiting.removeFirst().take()) }
        }
        for page in waiting { results.append(try page.take()) }
        #expect(results == expected)
    }

    @Test func anEmptyPageIsAnEmptyGzipMember() throws {
        let compressed = try PageCompressor(level: 1).submit([]).take()
        #expect(compressed == (try GzipCompressor(level: 1).compress([])))
        #expect(compressed.count > 10)
    }
}
