import EPFTestSupport
import Foundation

/// The database `scripts/demo` builds, made once per test run by the same commands (`scripts/demo-data`: the
/// sample full with price history, its incremental, the next weekly full), in a directory that links `feeds/`.
/// Tests get a copy each (`copy(into:)`), so they may write to it and run in parallel.
enum DemoDatabase {
    /// The directory holding the built `epf.sqlite` and `.build/demo-feeds`, or why it could not be built.
    nonisolated(unsafe) private static let built: Result<TemporaryDirectory, DemoDatabaseError> = {
        do {
            let directory = try TemporaryDirectory(prefix: "epf-demo")
            // Held for the whole run, so never released: removed when the test process exits.
            removeAtExit = directory.path
            atexit { if let path = DemoDatabase.removeAtExit { try? FileManager.default.removeItem(atPath: path) } }
            try linkFeeds(into: directory.path)
            let script = EPFBinary.packageRoot.appendingPathComponent("scripts/demo-data").path
            let run = try runShell("\"\(script)\"", in: directory.path, environment: ["EPF_BIN": EPFBinary.url.path])
            guard run.status == 0 else {
                return .failure(DemoDatabaseError(description: "scripts/demo-data exited \(run.status): "
                                                      + run.stdout.suffix(2000) + run.stderr.suffix(2000)))
            }
            return .success(directory)
        } catch {
            return .failure(DemoDatabaseError(description: "scripts/demo-data could not run: \(error)"))
        }
    }()

    /// The directory `built` made (and the `epf` link of `DocExamplesTests`' commands), removed at exit.
    nonisolated(unsafe) static var removeAtExit: String?

    /// Makes `directory` look like the repository root after `scripts/demo`: `feeds` (a link to the sample feed)
    /// and a copy of `epf.sqlite`. Returns the database's path.
    @discardableResult
    static func copy(into directory: String) throws -> String {
        let source = try built.get()
        try linkFeeds(into: directory)
        let manager = FileManager.default
        for suffix in ["", "-wal"] where manager.fileExists(atPath: source.file("epf.sqlite" + suffix)) {
            try manager.copyItem(atPath: source.file("epf.sqlite" + suffix),
                                 toPath: (directory as NSString).appendingPathComponent("epf.sqlite" + suffix))
        }
        return (directory as NSString).appendingPathComponent("epf.sqlite")
    }

    /// The absolute paths of the weekly full of 2026-01-12 that `scripts/demo-data` generated and imported last
    /// (`itunes20260112`, `pricing20260112`): read them, never write.
    static func laterFull() throws -> [String] {
        let source = try built.get()
        return ["itunes20260112", "pricing20260112"].map { source.file(".build/demo-feeds/" + $0) }
    }

    /// Links `directory/feeds` to the repository's sample feed, as a clone has it.
    static func linkFeeds(into directory: String) throws {
        let link = (directory as NSString).appendingPathComponent("feeds")
        guard !FileManager.default.fileExists(atPath: link) else { return }
        try FileManager.default.createSymbolicLink(
            atPath: link, withDestinationPath: EPFBinary.packageRoot.appendingPathComponent("feeds").path)
    }
}

struct DemoDatabaseError: Error, CustomStringConvertible {
    let description: String
}

/// Runs `command` with `/bin/sh -c` in `directory`, without `EPF_DB`, with `environment` added and standard input
/// empty; waits for it. The status is 128 + the signal when a signal ended it.
func runShell(_ command: String, in directory: String, environment: [String: String] = [:]) throws -> RunResult {
    let (process, output, errors) = try BuiltEPF.start(program: "/bin/sh", ["-c", command], in: directory,
                                                       environment: environment)
    let run = BuiltEPF.finish(process, output: output, errors: errors)
    return RunResult(status: run.status, stdout: run.stdout, stderr: run.stderr)
}
