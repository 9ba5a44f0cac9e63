import HTTPTransport
import EPFTestSupport
import Foundation
import Glibc
import Testing

/// The built `epf` binary (see `BuiltEPF`), nil when it was not built.
func epfBinary() -> URL? {
    FileManager.default.isExecutableFile(atPath: BuiltEPF.url.path) ? BuiltEPF.url : nil
}

/// A running `epf serve`, its port read from the "listening on" line.
final class ServeProcess {
    let process = Process()
    let port: Int
    private let output = Pipe()
    private let errors = Pipe()

    init(arguments: [String]) throws {
        let binary = try #require(epfBinary(), "build the epf binary first (swift build)")
        process.executableURL = binary
        process.arguments = ["serve"] + arguments
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        var line = [UInt8]()
        let handle = output.fileHandleForReading
        let deadline = Date().addingTimeInterval(20)
        while !line.contains(10) && Date() < deadline {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            line += chunk
        }
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("listening on http://127.0.0.1:"),
              let port = Int(text.split(separator: ":").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "")
        else {
            process.terminate()
            throw ClientError(description: "unexpected start output: \(text)")
        }
        self.port = port
    }

    /// Waits up to `seconds` for exit; returns the status, or nil (after killing it) on timeout.
    func waitForExit(seconds: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        return process.terminationStatus
    }

    var standardError: String {
        String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }
}

@Suite("epf serve process")
struct ProcessTests {
    @Test func sigtermFinishesInFlightRequestsAndExitsZero() throws {
        let fixture = try CatalogueDatabase(walMode: true)
        defer { fixture.remove() }
        let serve = try ServeProcess(arguments: ["--db", fixture.path, "--port", "0", "--threads", "2",
                                                 "--access-log"])
        let client = try Client(port: serve.port)
        try client.send(request("/v1/apps/364709193"))
        #expect(try client.readResponse().status == 200)
        // A request in flight: half sent when SIGTERM arrives, completed afterwards.
        let inFlight = try Client(port: serve.port)
        try inFlight.send("GET /v1/apps/562148264 HTTP/1.1\r\nHost: x\r\n")
        usleep(100_000)
        kill(serve.process.processIdentifier, SIGTERM)
        usleep(200_000)
        try inFlight.send("\r\n")
        let response = try inFlight.readResponse()
        #expect(response.status == 200)
        #expect(response.header("Connection") == "close")
        #expect(serve.waitForExit(seconds: 10) == 0)
        #expect(serve.standardError.contains("\"GET /v1/apps/364709193 HTTP/1.1\" 200"))
        // Nothing listens any more.
        #expect(throws: (any Error).self) { try Client(port: serve.port) }
    }

    @Test func missingDatabaseExits66() throws {
        let binary = try #require(epfBinary())
        let process = Process()
        process.executableURL = binary
        process.arguments = ["serve", "--db", "/nonexistent/dir/epf.sqlite", "--port", "0"]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = Pipe()
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 66)
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(text.contains("/nonexistent/dir/epf.sqlite"))
    }

    @Test func badOptionsExit64() throws {
        let binary = try #require(epfBinary())
        let process = Process()
        process.executableURL = binary
        process.arguments = ["serve", "--port", "70000"]
        process.standardError = Pipe()
        process.standardOutput = Pipe()
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 64)
    }
}
