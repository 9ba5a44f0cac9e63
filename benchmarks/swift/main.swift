// epf-bench: Swift-side micro-benchmarks, run by benchmarks/run. Each subcommand prints one line of
// key=value pairs that the harness parses; nothing here is part of the shipped tool.
//
//   epf-bench parse FILE [--reps N] [--validate]
//       Reads FILE into memory once, then runs EPFFormat's table reader (record splitter + field location)
//       over the in-memory bytes, counting data records and fields; only the scan is timed, the fastest of
//       N passes (default 3) is reported. --validate also checks UTF-8 and NUL bytes per record.
//       Output: bytes records fields seconds gbps
//   epf-bench validate FILE [--reps N]
//       Reads FILE into memory once, then checks it for UTF-8 and NUL bytes as the reading thread does
//       (`UTF8Validator.isCleanText` over 1 MiB chunks), and scans it with memchr for a NUL (the C library's
//       baseline, same bytes, same run). Fastest of N passes (default 5) each.
//       Output: bytes non_ascii clean seconds gbps cpu_gbps (by the thread's CPU time) memchr_gbps
//   epf-bench lookups DB N --ids FILE [--country CC] [--from-tables]
//       N app lookups through EPFQuery's QueryEngine in one process, each one what GET /v1/apps/{id} does:
//       `entityJSON(kind: .software, ...)` (the stored lookup document when current, else built from the
//       tables and serialised); --from-tables never reads the stored documents (the path of lookups with a
//       language, and of databases imported with --no-documents).
//       Ids come from FILE, one per line, cycled.
//       One untimed warm-up pass over the ids first (opens the statements, warms the page cache).
//       Output: lookups found seconds per_s bytes
//   epf-bench routes DB N --ids FILE --target TEMPLATE
//       N requests through the HTTP API's routes in one process, without sockets: what a worker does between
//       reading a request and writing its response (`EPFRoutes.respond(to:)`, with the response cache off).
//       TEMPLATE is a request target with `{id}` where the id goes, e.g. '/lookup?id={id}&country=gb'.
//       Ids from FILE, cycled, after one untimed warm-up pass. For exact A/B comparisons of request shapes run
//       it under `valgrind --tool=callgrind`. Output: requests ok seconds per_s bytes
//   epf-bench bunzip2 FILE [--threads N] [--stdout | --scan-only]
//       Decompresses FILE with EPFFormat's bzip2 decoder (the parallel one for N > 1, the serial one for N = 1;
//       default one thread per active core), discarding the output or, with --stdout, writing it to stdout
//       (to compare with `bzip2 -dc`). Output (stderr with --stdout): bytes seconds mbps threads.
//       --scan-only times finding and re-aligning the blocks alone (no decoding), over the compressed bytes:
//       compressed_bytes spans seconds mbps
//   epf-bench ranks DB --ids FILE [--days N] [--charts N] [--reps N]
//       The rank history's reads (EPFSchema's RankHistoryRead) on a database imported with --history ranks: for
//       each app id of FILE, its history over the last N recorded days (default 90) in every chart, storefront
//       and genre; then --charts N (default 200) charts on random recorded days (random storefront, genre and
//       chart of that day). Each read is timed alone, the fastest of --reps passes (default 3: the first warms
//       the page cache). Output, one line per app: app points keys ms; then: charts entries median_ms max_ms
import EPFFormat
import EPFQuery
import EPFSchema
import EPFServer
import EPFSQLite
import Foundation
import HTTPTransport

enum BenchError: Error, CustomStringConvertible {
    case usage(String)
    case io(String)

    var description: String {
        switch self {
        case .usage(let text): return text
        case .io(let text): return text
        }
    }
}

let usage = """
USAGE: epf-bench parse FILE [--reps N] [--validate]
       epf-bench validate FILE [--reps N]
       epf-bench lookups DB N --ids FILE [--country CC] [--from-tables]
       epf-bench routes DB N --ids FILE --target TEMPLATE
       epf-bench bunzip2 FILE [--threads N] [--stdout | --scan-only]
       epf-bench ranks DB --ids FILE [--days N] [--charts N] [--reps N]
"""

func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) * 1e-9
}

/// Reads a whole file into one array; the corresponding C functions are `open(2)`, `fstat(2)` and `read(2)`.
func readWholeFile(_ path: String) throws -> [UInt8] {
    let descriptor = open(path, O_RDONLY)
    guard descriptor >= 0 else { throw BenchError.io("cannot open \(path): \(String(cString: strerror(errno)))") }
    defer { close(descriptor) }
    var info = stat()
    guard fstat(descriptor, &info) == 0 else { throw BenchError.io("fstat \(path) failed") }
    let size = Int(info.st_size)
    var bytes = [UInt8](repeating: 0, count: size)
    var got = 0
    try bytes.withUnsafeMutableBytes { raw in
        guard let base = raw.baseAddress else { return }
        while got < size {
            let count = read(descriptor, base + got, size - got)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw BenchError.io("read \(path) failed at byte \(got)") }
            got += count
        }
    }
    return bytes
}

/// Option value after `name`, if any.
func option(_ arguments: [String], _ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

func parse(_ arguments: [String]) throws {
    guard let path = arguments.first, !path.hasPrefix("-") else { throw BenchError.usage(usage) }
    let reps = Int(option(arguments, "--reps") ?? "3") ?? 3
    let validate = arguments.contains("--validate")
    let bytes = try readWholeFile(path)
    var best = Double.infinity
    var records = 0
    var fields = 0
    for _ in 0..<max(1, reps) {
        // The reader copies from the source into its own buffer in 1 MiB reads, as it does from a file.
        let source = MemoryByteSource(bytes)
        let started = monotonicSeconds()
        let reader = try EPFTableReader(source: source, location: path,
                                        options: ReadOptions(validate: validate, prefetch: false))
        var recordCount = 0
        var fieldCount = 0
        let summary = try reader.forEachRecord { record in
            recordCount &+= 1
            fieldCount &+= record.fieldCount
        }
        let elapsed = monotonicSeconds() - started
        best = min(best, elapsed)
        records = recordCount
        fields = fieldCount
        if summary.records != recordCount { throw BenchError.io("summary disagrees with the callback count") }
    }
    let gbps = best > 0 ? Double(bytes.count) / best / 1e9 : 0
    print("bytes=\(bytes.count) records=\(records) fields=\(fields) seconds=\(String(format: "%.6f", best)) "
          + "gbps=\(String(format: "%.4f", gbps)) validate=\(validate)")
}

/// CPU time of the calling thread: unlike wall time, not inflated by other processes on a shared machine.
func threadCPUSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) * 1e-9
}

func validate(_ arguments: [String]) throws {
    guard let path = arguments.first, !path.hasPrefix("-") else { throw BenchError.usage(usage) }
    let reps = max(1, Int(option(arguments, "--reps") ?? "5") ?? 5)
    let bytes = try readWholeFile(path)
    var best = Double.infinity
    var bestCPU = Double.infinity
    var bestMemchr = Double.infinity
    var clean = true
    var nonASCII = 0
    bytes.withUnsafeBytes { raw in
        guard let base = raw.baseAddress else { return }
        for byte in raw where byte >= 0x80 { nonASCII += 1 }
        // 1 MiB chunks, as the reading thread sees them, each ending on a character boundary.
        var ends: [Int] = []
        var end = 0
        while end < raw.count {
            end = min(end + (1 << 20), raw.count)
            while end < raw.count && raw[end] & 0xc0 == 0x80 { end -= 1 }
            ends.append(end)
        }
        for _ in 0..<reps {
            var started = monotonicSeconds()
            let startedCPU = threadCPUSeconds()
            var allClean = true
            var start = 0
            for end in ends {
                allClean = UTF8Validator.isCleanText(base + start, count: end - start) && allClean
                start = end
            }
            best = min(best, monotonicSeconds() - started)
            bestCPU = min(bestCPU, threadCPUSeconds() - startedCPU)
            clean = allClean
            started = monotonicSeconds()
            var found = 0
            start = 0
            for end in ends {
                if memchr(base + start, 0, end - start) != nil { found += 1 }
                start = end
            }
            bestMemchr = min(bestMemchr, monotonicSeconds() - started)
            if found > 0 { clean = false }
        }
    }
    func gbps(_ seconds: Double) -> String {
        String(format: "%.4f", seconds > 0 ? Double(bytes.count) / seconds / 1e9 : 0)
    }
    let share = String(format: "%.4f", Double(nonASCII) / Double(max(1, bytes.count)))
    print("bytes=\(bytes.count) non_ascii=\(share) clean=\(clean) seconds=\(String(format: "%.6f", best)) "
          + "gbps=\(gbps(best)) cpu_gbps=\(gbps(bestCPU)) memchr_gbps=\(gbps(bestMemchr))")
}

func lookups(_ arguments: [String]) throws {
    guard arguments.count >= 2, let count = Int(arguments[1]), count > 0, let idPath = option(arguments, "--ids")
    else { throw BenchError.usage(usage) }
    let text = String(decoding: try readWholeFile(idPath), as: UTF8.self)
    let ids = text.split(whereSeparator: \.isNewline).compactMap { Int64($0) }
    guard !ids.isEmpty else { throw BenchError.io("no ids in \(idPath)") }
    let fromTables = arguments.contains("--from-tables")
    let engine = try QueryEngine(databasePath: arguments[0], useLookupDocuments: !fromTables)
    let country = option(arguments, "--country")
    var found = 0
    var bytes = 0
    for id in ids.prefix(count) {
        _ = try engine.lookups.entityJSON(kind: .software, id: id, country: country, language: nil)
    }
    let started = monotonicSeconds()
    for index in 0..<count {
        if let body = try engine.lookups.entityJSON(kind: .software, id: ids[index % ids.count], country: country,
                                            language: nil) {
            found += 1
            bytes += body.count
        }
    }
    let elapsed = monotonicSeconds() - started
    print("lookups=\(count) found=\(found) seconds=\(String(format: "%.6f", elapsed)) "
          + "per_s=\(String(format: "%.1f", Double(count) / elapsed)) bytes=\(bytes)")
}

func ranks(_ arguments: [String]) throws {
    guard arguments.count >= 1, let idPath = option(arguments, "--ids") else { throw BenchError.usage(usage) }
    let days = Int(option(arguments, "--days") ?? "90") ?? 90
    let charts = Int(option(arguments, "--charts") ?? "200") ?? 200
    let reps = max(1, Int(option(arguments, "--reps") ?? "3") ?? 3)
    let ids = String(decoding: try readWholeFile(idPath), as: UTF8.self).split(whereSeparator: \.isNewline)
        .compactMap { Int64($0) }
    let connection = try SQLiteConnection(path: arguments[0], mode: .readOnly)
    guard let history = try RankHistoryRead(connection) else { throw BenchError.io("no rank history") }
    let recorded = try history.recordedDays()
    guard let newest = recorded.last else { throw BenchError.io("no recorded day") }
    let since = recorded[max(0, recorded.count - days)]
    func timed<T>(_ body: () throws -> T) rethrows -> (T, Double) {
        var started = monotonicSeconds()
        let result = try body()
        var best = monotonicSeconds() - started
        for _ in 1..<reps {
            started = monotonicSeconds()
            _ = try body()
            best = min(best, monotonicSeconds() - started)
        }
        return (result, best * 1000)
    }
    for id in ids {
        let (points, ms) = try timed { try history.history(of: id, since: since) }
        // The item index's part (finding the charts): its reads do not grow with the storefronts, the lists' do.
        let (_, indexMs) = try timed { try history.charts(of: id, since: since) }
        print("app=\(id) points=\(points.count) keys=\(Set(points.map(\.key)).count) "
              + "ms=\(String(format: "%.3f", ms)) index_ms=\(String(format: "%.3f", indexMs))")
    }
    var random = SystemRandomNumberGenerator()
    var times: [Double] = []
    var entries = 0
    while times.count < charts {
        let day = recorded.randomElement(using: &random) ?? newest
        guard let chart = try history.recordedCharts(on: day).randomElement(using: &random),
              let key = try history.depths(chart: chart, on: day).keys.randomElement(using: &random) else { continue }
        let (list, ms) = try timed { try history.chart(key, on: day) }
        entries += list?.count ?? 0
        times.append(ms)
    }
    times.sort()
    print("charts=\(times.count) entries=\(entries) median_ms=\(String(format: "%.3f", times[times.count / 2])) "
          + "max_ms=\(String(format: "%.3f", times.last ?? 0))")
}

func routes(_ arguments: [String]) throws {
    guard arguments.count >= 2, let count = Int(arguments[1]), count > 0, let idPath = option(arguments, "--ids"),
          let template = option(arguments, "--target"), template.contains("{id}")
    else { throw BenchError.usage(usage) }
    let text = String(decoding: try readWholeFile(idPath), as: UTF8.self)
    let ids = text.split(whereSeparator: \.isNewline).map(String.init)
    guard !ids.isEmpty else { throw BenchError.io("no ids in \(idPath)") }
    let parts = template.components(separatedBy: "{id}")
    let requests = try ids.map { id -> HTTPRequest in
        let target = parts.joined(separator: id)
        guard let request = HTTPRequest(method: .get, target: target) else {
            throw BenchError.io("not a request target: \(target)")
        }
        return request
    }
    var configuration = EPFServerConfiguration(databasePath: arguments[0])
    // Every request is computed: the response cache would turn the timed pass into cache hits.
    configuration.responseCacheEntries = 0
    let routes = try EPFRoutes(configuration: configuration)
    for request in requests.prefix(count) { _ = routes.respond(to: request) }
    var ok = 0
    var bytes = 0
    let started = monotonicSeconds()
    for index in 0..<count {
        let response = routes.respond(to: requests[index % requests.count])
        if response.status == 200 { ok += 1 }
        bytes += response.body.count
    }
    let elapsed = monotonicSeconds() - started
    print("requests=\(count) ok=\(ok) seconds=\(String(format: "%.6f", elapsed)) "
          + "per_s=\(String(format: "%.1f", Double(count) / elapsed)) bytes=\(bytes)")
}

func bunzip2(_ arguments: [String]) throws {
    guard let path = arguments.first, !path.hasPrefix("-") else { throw BenchError.usage(usage) }
    let threads = Int(option(arguments, "--threads") ?? "") ?? ProcessInfo.processInfo.activeProcessorCount
    let toStdout = arguments.contains("--stdout")
    if arguments.contains("--scan-only") {
        let started = monotonicSeconds()
        let file = try FileByteSource(path: path)
        let spans = try Bzip2Decompression.scanBlocks(file)
        let elapsed = monotonicSeconds() - started
        print("compressed_bytes=\(file.offset) spans=\(spans) seconds=\(String(format: "%.6f", elapsed)) "
              + "mbps=\(String(format: "%.1f", Double(file.offset) / 1e6 / elapsed))")
        return
    }
    let source = try Bzip2Decompression.source(try FileByteSource(path: path), path: path, threads: threads)
    let capacity = 1 << 20
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 64)
    defer { buffer.deallocate() }
    var total = 0
    let started = monotonicSeconds()
    while true {
        let count = try source.read(into: buffer)
        if count == 0 { break }
        total += count
        guard toStdout, let base = buffer.baseAddress else { continue }
        var written = 0
        while written < count {
            let result = write(STDOUT_FILENO, base + written, count - written)
            if result < 0 && errno == EINTR { continue }
            guard result > 0 else { throw BenchError.io("write to stdout failed") }
            written += result
        }
    }
    let elapsed = monotonicSeconds() - started
    let line = "bytes=\(total) seconds=\(String(format: "%.6f", elapsed)) "
        + "mbps=\(String(format: "%.1f", Double(total) / 1e6 / elapsed)) threads=\(threads)\n"
    if toStdout {
        FileHandle.standardError.write(Data(line.utf8))
    } else {
        FileHandle.standardOutput.write(Data(line.utf8))
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
do {
    switch arguments.first {
    case "parse": try parse(Array(arguments.dropFirst()))
    case "validate": try validate(Array(arguments.dropFirst()))
    case "lookups": try lookups(Array(arguments.dropFirst()))
    case "routes": try routes(Array(arguments.dropFirst()))
    case "ranks": try ranks(Array(arguments.dropFirst()))
    case "bunzip2": try bunzip2(Array(arguments.dropFirst()))
    default:
        FileHandle.standardError.write(Data((usage + "\n").utf8))
        exit(64)
    }
} catch let error as BenchError {
    FileHandle.standardError.write(Data("epf-bench: \(error)\n".utf8))
    if case .usage = error { exit(64) }
    exit(1)
} catch {
    FileHandle.standardError.write(Data("epf-bench: \(error)\n".utf8))
    exit(1)
}
