import Foundation
import Testing
@testable import EPFGenerator

/// One record of a table file as the test sees it: raw bytes, its offset, and its fields.
struct TestRecord {
    let offset: Int
    let bytes: [UInt8]
    var isMetadata: Bool { bytes.first == UInt8(ascii: "#") }
    var fields: [[UInt8]] { bytes.split(separator: 0x01, omittingEmptySubsequences: false).map(Array.init) }
    var strings: [String?] { fields.map { $0.isEmpty ? nil : String(decoding: $0, as: UTF8.self) } }
    var text: String { String(decoding: bytes, as: UTF8.self) }
}

/// Splits a table file at 0x02 0x0A, independently of the generator's own parser.
func splitRecords(_ data: [UInt8]) -> [TestRecord] {
    var records: [TestRecord] = []
    var start = 0
    var index = 0
    while index + 1 < data.count {
        if data[index] == 0x02 && data[index + 1] == 0x0A {
            records.append(TestRecord(offset: start, bytes: Array(data[start..<index])))
            index += 2
            start = index
        } else {
            index += 1
        }
    }
    return records
}

func readBytes(_ path: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
}

/// Runs a program and returns its standard output and exit status.
func run(_ executable: String, _ arguments: [String]) throws -> (output: [UInt8], status: Int32) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    try process.run()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return ([UInt8](output), process.terminationStatus)
}

func smallOptions(apps: Int = 120, seed: UInt64 = 7) -> GeneratorOptions {
    var options = GeneratorOptions()
    options.apps = apps
    options.seed = seed
    options.priceStorefronts = 5
    return options
}
