import EPFFuzzTargets
import Foundation

/// `epf-fuzz TARGET PATH...`: runs each file (directories: each file in them) through a target's harness.
enum ReplayCommand {
    /// Runs the command and returns the exit status: 0 all passed, 1 an oracle failed, 64 a usage error.
    static func main(_ arguments: [String]) -> Int32 {
        let names = FuzzTarget.all.map(\.name)
        if arguments.first == "--list" {
            for target in FuzzTarget.all { print("\(target.name)\t\(target.maximumLength)\t\(target.oracle)") }
            return 0
        }
        guard arguments.count >= 2, let target = FuzzTarget.named(arguments[0]) else {
            let usage = "usage: epf-fuzz TARGET FILE-OR-DIRECTORY...   (epf-fuzz --list)\ntargets: "
            FileHandle.standardError.write(Data((usage + names.joined(separator: " ") + "\n").utf8))
            return 64
        }
        var failures = 0
        var count = 0
        for path in arguments.dropFirst() {
            for file in files(at: path) {
                guard let data = FileManager.default.contents(atPath: file) else {
                    FileHandle.standardError.write(Data("epf-fuzz: cannot read \(file)\n".utf8))
                    return 66
                }
                count += 1
                if let failure = run(target, [UInt8](data)) {
                    failures += 1
                    print("FAIL \(file): \(failure)")
                }
            }
        }
        print("\(target.name): \(count) inputs, \(failures) failures")
        return failures == 0 ? 0 : 1
    }

    /// Runs one input; the oracle's failure, or nil.
    static func run(_ target: FuzzTarget, _ bytes: [UInt8]) -> FuzzFailure? {
        bytes.withUnsafeBytes { raw -> FuzzFailure? in
            do throws(FuzzFailure) { try target.run(raw) } catch { return error }
            return nil
        }
    }

    /// The file itself, or the regular files in a directory, sorted.
    static func files(at path: String) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            return [path]
        }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.sorted().map { path + "/" + $0 }.filter { name in
            var directory: ObjCBool = false
            return FileManager.default.fileExists(atPath: name, isDirectory: &directory) && !directory.boolValue
        }
    }
}
