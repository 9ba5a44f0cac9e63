import Foundation
import Glibc
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

/// An `epf serve --port 0` of a database, for tests: started on a free port on 127.0.0.1, stopped by `stop`.
final class ServedEPF {
    let process: Process
    let port: UInt16

    /// Starts `epf serve --db database --port 0` with `options` added, in `directory`.
    init(database: String, in directory: String, options: [String] = []) throws {
        let (serve, output, _) = try startEPF(["serve", "--db", database, "--port", "0"] + options, in: directory)
        process = serve
        let line = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        guard let port = line.firstMatch(of: /127\.0\.0\.1:(\d+)/).flatMap({ UInt16($0.1) }) else {
            serve.terminate()
            serve.waitUntilExit()
            throw ServedEPFError(description: "epf serve did not say its port: \(line)")
        }
        self.port = port
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }

    /// `GET path` on a connection of its own: the status code and the body parsed as JSON.
    func get(_ path: String) throws -> (status: Int, json: Any) {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw ServedEPFError(description: "connect to \(port) failed") }
        let request = "GET \(path) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        _ = request.withCString { send(socket, $0, strlen($0), 0) }
        var response = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(socket, &buffer, buffer.count, 0)
            if count <= 0 { break }
            response += buffer[0..<count]
        }
        let text = String(decoding: response, as: UTF8.self)
        guard let end = text.range(of: "\r\n\r\n"), let status = Int(text.dropFirst(9).prefix(3)) else {
            throw ServedEPFError(description: "not an HTTP response: \(text.prefix(200))")
        }
        let body = String(text[end.upperBound...])
        return (status, try JSONSerialization.jsonObject(with: Data(body.utf8)))
    }
}

struct ServedEPFError: Error, CustomStringConvertible {
    let description: String
}
