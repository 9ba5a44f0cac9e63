import Foundation

/// The `epf` binary that `swift build --build-tests` built next to the tests, and a way to run it to completion.
public enum BuiltEPF {
    /// The package's root directory (two levels above this file's folder).
    public static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    /// `EPF_BINARY` when set; else the `epf` beside the running test bundle (so a build with another scratch path,
    /// a sanitizer's, runs its own binary); else the debug build, then the release build, under the package root.
    public static let url: URL = {
        let fileManager = FileManager.default
        if let path = ProcessInfo.processInfo.environment["EPF_BINARY"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<3 {
            let candidate = directory.appendingPathComponent("epf")
            if fileManager.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        for configuration in ["debug", "release"] {
            let candidate = packageRoot.appendingPathComponent(".build/\(configuration)/epf")
            if fileManager.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return packageRoot.appendingPathComponent(".build/debug/epf")
    }()

    /// What one finished run printed and returned.
    public struct Run: Sendable {
        /// The exit status (128 + the signal when it was killed).
        public var status: Int32
        public var stdout: String
        public var stderr: String

        public init(status: Int32, stdout: String, stderr: String) {
            self.status = status
            self.stdout = stdout
            self.stderr = stderr
        }
    }

    /// Starts `epf arguments` in `directory`, without `EPF_DB` in its environment and with its standard input
    /// empty; returns the process and the pipes of its standard output and error. The caller waits or kills.
    public static func start(_ arguments: [String], in directory: String,
                             environment: [String: String] = [:]) throws -> (Process, Pipe, Pipe) {
        try start(program: url.path, arguments, in: directory, environment: environment)
    }

    /// Whether the tests run as root and can start `epf` as another OS user (`setpriv`, util-linux).
    public static let canRunAsReader = getuid() == 0
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")

    /// Starts `epf arguments` as the reader user `nobody` (through `setpriv`) when the tests run as root, else as the
    /// current user, who is not root either: how an analyst on a shared server runs the query commands.
    public static func startAsReader(_ arguments: [String], in directory: String) throws -> (Process, Pipe, Pipe) {
        guard canRunAsReader else { return try start(arguments, in: directory) }
        return try start(program: "/usr/bin/setpriv",
                         ["--reuid=nobody", "--regid=nogroup", "--clear-groups", url.path] + arguments,
                         in: directory)
    }

    /// Runs `epf arguments` as the reader user (see `startAsReader`) and waits for it.
    public static func runAsReader(_ arguments: [String], in directory: String) throws -> Run {
        let (process, output, errors) = try startAsReader(arguments, in: directory)
        return finish(process, output: output, errors: errors)
    }

    /// Starts `program arguments` as `start` starts epf.
    public static func start(program: String, _ arguments: [String], in directory: String,
                             environment: [String: String] = [:]) throws -> (Process, Pipe, Pipe) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        var merged = ProcessInfo.processInfo.environment
        merged.removeValue(forKey: "EPF_DB")
        for (key, value) in environment { merged[key] = value }
        process.environment = merged
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return (process, output, errors)
    }

    /// Runs `epf arguments` in `directory` (see `start`) and waits for it.
    public static func run(_ arguments: [String], in directory: String,
                           environment: [String: String] = [:]) throws -> Run {
        let (process, output, errors) = try start(arguments, in: directory, environment: environment)
        return finish(process, output: output, errors: errors)
    }

    /// Reads a started process to its end (`readToEnd`) and says what it printed and returned.
    public static func finish(_ process: Process, output: Pipe, errors: Pipe) -> Run {
        let (outputData, errorData) = readToEnd(process, output: output, errors: errors)
        let status = process.terminationReason == .uncaughtSignal
            ? 128 + process.terminationStatus : process.terminationStatus
        return Run(status: status, stdout: String(decoding: outputData, as: UTF8.self),
                   stderr: String(decoding: errorData, as: UTF8.self))
    }

    /// Reads a started process's standard output and standard error to their ends, both while it runs (so a large
    /// output cannot block it), and waits for it to exit.
    ///
    /// Standard error is read on a thread of its own, which hands its bytes over under a condition: polling
    /// `Thread.isFinished` orders nothing, and ThreadSanitizer rightly reported the read of the bytes as racing
    /// with the thread's write.
    public static func readToEnd(_ process: Process, output: Pipe, errors: Pipe) -> (stdout: Data, stderr: Data) {
        let handedOver = NSCondition()
        nonisolated(unsafe) var errorData: Data?
        let errorReader = Thread {
            let data = errors.fileHandleForReading.readDataToEndOfFile()
            handedOver.lock()
            errorData = data
            handedOver.signal()
            handedOver.unlock()
        }
        errorReader.start()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        handedOver.lock()
        while errorData == nil { handedOver.wait() }
        let stderrData = errorData ?? Data()
        handedOver.unlock()
        return (outputData, stderrData)
    }
}
