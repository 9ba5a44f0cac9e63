import EPFFuzzTargets
import Foundation
import Testing

/// Every committed seed and every regression input, through its target's harness: the harnesses keep working,
/// and the bugs the fuzzers found stay fixed.
@Suite struct ReplayTests {
    /// The repository's `fuzz/` directory, from this file's place in it.
    static let fuzzDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The files of `fuzz/<kind>/<target>`, sorted; none when the directory does not exist.
    static func inputs(_ kind: String, _ target: String) -> [URL] {
        let directory = fuzzDirectory.appendingPathComponent(kind).appendingPathComponent(target)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.sorted().map { directory.appendingPathComponent($0) }
    }

    /// One test per target; its inputs run one after another (a harness may keep per-process state).
    @Test(arguments: FuzzTarget.all.map(\.name))
    func seedsAndRegressionsPass(target name: String) throws {
        let target = try #require(FuzzTarget.named(name))
        let seeds = Self.inputs("corpus", name)
        #expect(!seeds.isEmpty, "no seeds in fuzz/corpus/\(name)")
        for file in seeds + Self.inputs("regressions", name) {
            let bytes = try [UInt8](Data(contentsOf: file))
            #expect(bytes.count <= target.maximumLength, "\(file.lastPathComponent) is longer than -max_len")
            let failure = bytes.withUnsafeBytes { raw -> FuzzFailure? in
                do throws(FuzzFailure) { try target.run(raw) } catch { return error }
                return nil
            }
            #expect(failure == nil, "\(name)/\(file.lastPathComponent): \(failure?.description ?? "")")
        }
    }

    /// Every target has its directories and a distinct name.
    @Test func targetsAreDistinct() {
        let names = FuzzTarget.all.map(\.name)
        #expect(Set(names).count == names.count)
        #expect(names.count == 8)
    }
}
