import Foundation
import Testing
import EPFTestSupport

/// The `epf` binary built next to the tests (`swift build --build-tests` builds it).
enum EPFBinary {
    static var url: URL { BuiltEPF.url }
    static var packageRoot: URL { BuiltEPF.packageRoot }
}

/// What a finished `epf` run printed and returned.
struct RunResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// A temporary directory for one test.
typealias WorkDirectory = TemporaryDirectory

/// Starts `epf` with arguments; the caller waits or kills.
func startEPF(_ arguments: [String], in directory: String, environment: [String: String] = [:]) throws
    -> (Process, Pipe, Pipe) {
    try BuiltEPF.start(arguments, in: directory, environment: environment)
}

/// Runs `epf` to completion and returns its status and output.
@discardableResult
func runEPF(_ arguments: [String], in directory: String, environment: [String: String] = [:]) throws -> RunResult {
    let (process, output, errors) = try startEPF(arguments, in: directory, environment: environment)
    let (outputData, errorData) = BuiltEPF.readToEnd(process, output: output, errors: errors)
    return RunResult(status: process.terminationStatus, stdout: String(decoding: outputData, as: UTF8.self),
                     stderr: String(decoding: errorData, as: UTF8.self))
}
