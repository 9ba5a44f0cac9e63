import EPFTestSupport
import Foundation

// The test feed server as a process, for benchmarks/bench_fetch.py:
//   epf-feed-server ROOT [--rate BYTES_PER_SECOND_PER_CONNECTION]
// Prints "port=N" on stdout once listening, then serves ROOT until killed. With EPF_FEED_SERVER_CREDENTIALS set
// (user:password) it asks for HTTP Basic auth.
var arguments = Array(CommandLine.arguments.dropFirst())
var rate = 0
if let index = arguments.firstIndex(of: "--rate"), index + 1 < arguments.count, let value = Int(arguments[index + 1]) {
    rate = value
    arguments.removeSubrange(index...(index + 1))
}
guard arguments.count == 1 else {
    FileHandle.standardError.write(Data("usage: epf-feed-server ROOT [--rate BYTES_PER_SECOND]\n".utf8))
    exit(64)
}
let server = FeedServer(root: arguments[0],
                        credentials: ProcessInfo.processInfo.environment["EPF_FEED_SERVER_CREDENTIALS"])
var faults = FeedFaults()
faults.bytesPerSecond = rate
server.faults = faults
do {
    let port = try server.start()
    FileHandle.standardOutput.write(Data("port=\(port)\n".utf8))
} catch {
    FileHandle.standardError.write(Data("epf-feed-server: \(error)\n".utf8))
    exit(1)
}
while true { sleep(3600) }
