import EPFGenerator
import Foundation
import Testing
import EPFTestSupport
@testable import EPFFormat
@testable import EPFStore

@Suite struct ParallelBzip2ImportTests {
    /// A v5 feed (one .tbz per table, several bzip2 blocks each for the big tables) imported with the serial
    /// decoder and with the parallel one on 2 and 3 threads gives the same database.
    @Test func aV5FeedImportsToTheSameRowsWithEveryThreadCount() throws {
        let scratch = try Scratch()
        var options = GeneratorOptions()
        options.apps = 1500
        options.seed = 11
        options.priceStorefronts = 3
        options.layout = .v5
        options.tables = ["application", "application_detail", "genre", "application_price"]
        let paths = try generate(options, in: scratch.path, name: "feed")
        let detail = try FeedInput.files(at: paths[0]).first { $0.hasSuffix("application_detail.tbz") } ?? ""
        let blocks = try Self.blockCount(detail)
        #expect(blocks >= 3, "the test needs a multi-block archive")

        var dumps: [[String]] = []
        for threads in [1, 2, 3] {
            let database = scratch.file("epf-\(threads).sqlite")
            let report = try importPaths(paths, database: database) { $0.readOptions.decompressionThreads = threads }
            #expect(report.succeeded, "\(report.outcomes.map { "\($0.table): \($0.message ?? "")" })")
            #expect(report.outcomes.filter { $0.status == .applied }.count == 4)
            var rows: [String] = []
            for table in ["application", "application_detail", "genre", "application_price"] {
                rows += try dump(database, "SELECT * FROM \(table)").map { "\(table): \($0)" }
            }
            dumps.append(rows)
        }
        #expect(dumps[0].count > 1500)
        #expect(dumps[1] == dumps[0])
        #expect(dumps[2] == dumps[0])
    }

    /// Block magics in a bzip2 file, counted by the parallel decoder's scanner.
    static func blockCount(_ path: String) throws -> Int {
        let scanner = Bzip2BlockScanner(try FileByteSource(path: path))
        var count = 0
        while let span = try scanner.next() {
            if span.kind == .block { count += 1 }
        }
        return count
    }
}
