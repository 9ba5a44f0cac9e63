import EPFStore
import Foundation
import Testing
@testable import EPFQuery

/// Timings on a large database, run only when `EPF_BENCH_DB` names one (apps with ids from 1000001).
///
/// `EPF_BENCH_REBUILD=1` also times `SearchIndex.rebuild` (it writes to the database).
@Suite struct BenchmarkTests {
    static let path = ProcessInfo.processInfo.environment["EPF_BENCH_DB"]

    static func seconds(_ body: () throws -> Void) rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    @Test(.enabled(if: path != nil)) func timings() throws {
        let path = try #require(Self.path)
        if ProcessInfo.processInfo.environment["EPF_BENCH_REBUILD"] == "1" {
            let writer = try SQLiteConnection(path: path, mode: .readWrite)
            let rebuild = try Self.seconds { try writer.transaction { try SearchIndex.rebuild(writer) } }
            print("rebuild: \(rebuild) s")
        }
        var engine: QueryEngine?
        let open = try Self.seconds { engine = try QueryEngine(databasePath: path) }
        let queries = try #require(engine)
        var generator = SystemRandomNumberGenerator()
        let ids = (0..<10_000).map { _ in String(Int64.random(in: 1_000_001...2_000_000, using: &generator)) }
        _ = try queries.lookup([ids[0]], country: "us", language: nil)
        var bytes = 0
        let lookups = try Self.seconds {
            for id in ids {
                bytes += try queries.lookup([id], country: "us", language: nil).json.serialized().count
            }
        }
        // The same 1000 IDs ten times: CPU cost once their pages are cached (cold pages are disk-bound).
        let warmIDs = Array(ids.prefix(1000))
        for id in warmIDs { _ = try queries.lookup([id], country: "us", language: nil) }
        let warm = try Self.seconds {
            for _ in 0..<10 {
                for id in warmIDs {
                    bytes += try queries.lookup([id], country: "us", language: nil).json.serialized().count
                }
            }
        }
        let allPrices = try Self.seconds {
            for id in ids.prefix(1000) {
                bytes += try queries.lookup([id], country: nil, language: nil, allPrices: true).json.serialized().count
            }
        }
        var results = 0
        let terms = ["kalo", "mira ne", "dev", "tor", "zzzz", "bantor lin", "ka"]
        var perTerm: [String] = []
        for term in terms {
            let time = try Self.seconds {
                results += try queries.search(term: term, entity: nil, country: "us", limit: 20).items.count
            }
            perTerm.append("\(term): \(Int(time * 1000)) ms")
        }
        print("open: \(Int(open * 1e6)) µs; 10000 lookups: \(lookups) s = \(Int(10_000 / lookups))/s; "
              + "10000 warm lookups: \(Int(10_000 / warm))/s; "
              + "1000 all-price lookups: \(Int(1000 / allPrices))/s; bytes \(bytes)")
        print("search: " + perTerm.joined(separator: ", ") + "; results \(results)")
    }
}
