import EPFFormat
import EPFImport
import EPFStore
import Foundation
import JSONText

/// `epf inspect`: reads feed files end to end without loading them, and reports what they hold and what is wrong.
enum InspectCommand: Command {
    static let name = "inspect"
    static let summary = "Check feed files: header, counts, bad records, throughput"
    static let help = """
    USAGE: epf inspect PATH... [--json] [--samples N] [--threads N]

    Reads every table in each PATH (a table file, .gz, .tbz/.tar.bz2/.tar.gz archive, or a v3/v4/v5 feed
    directory) without extracting or loading anything, and prints for each table file: feed, table, export
    date, mode, columns with types, primary key, declared #recordsWritten, records actually read, bad records by
    kind with the first record numbers and byte offsets, bytes and throughput. Archives with .md5 sidecars are
    verified first.

    OPTIONS:
    \(optionsHelp(declaredOptions))

    EXIT STATUS:
      0 every file is sound; 65 a file is truncated, has a count or MD5 mismatch, or bad records;
      66 a path does not exist; 64 usage error.

    EXAMPLES:
      epf inspect feeds/itunes20260105/application
      epf inspect feeds/itunes20260105 feeds/pricing20260105 --json
      epf inspect feeds/v5/itunes20260105/application.tbz
    """

    struct Report {
        var file: TableFile
        var header: EPFHeader?
        var summary: EPFReadSummary?
        var exportDate: Int64?
        var seconds: Double = 0
        var error: String?

        var isSound: Bool {
            guard error == nil, let summary else { return false }
            return !summary.truncated && !summary.countMismatch && summary.badRecords == 0
        }
    }

    static let json = CommonOptions.json("One JSON document on stdout (an array of table reports).")
    static let samples = IntOption("samples", default: 5, range: 0...1000, "Bad records listed per table.")

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let json = arguments.read(Self.json)
        let samples = try arguments.read(Self.samples)
        let threads = try arguments.read(CommonOptions.decompressionThreads)
        let paths = try arguments.finish()
        guard !paths.isEmpty else { throw UsageError("give at least one PATH") }
        for path in paths where !FileManager.default.fileExists(atPath: path) {
            printError("epf inspect: \(path): no such file or directory")
            return .noInput
        }
        var reports: [Report] = []
        var options = ReadOptions(problemSamples: samples)
        options.decompressionThreads = threads
        // Plain files are split in place, checked on a second thread: inspect only counts, so nothing is copied.
        options.memoryMap = true
        for path in paths {
            // One unit (file, or headerless parts) at a time, so a broken archive does not hide the files after it.
            let units: [[String]]
            do {
                units = try FeedInput.units(at: path, options: options)
            } catch {
                let report = Report(file: TableFile(location: path, table: "?"), error: "\(error)")
                reports.append(report)
                if !json { printHuman(report) }
                continue
            }
            for unit in units {
                do {
                    try FeedInput.forEachTable(inUnit: unit, options: options) { file, reader in
                        let report = inspect(file, reader)
                        reports.append(report)
                        if !json { printHuman(report) }
                    }
                } catch {
                    let location = unit.first ?? path
                    let report = Report(file: TableFile(location: location, table: "?"), error: "\(error)")
                    reports.append(report)
                    if !json { printHuman(report) }
                }
            }
        }
        if json {
            Output.shared.write(JSONValue.array(reports.map(jsonObject)).prettyText + "\n")
        } else {
            let bad = reports.filter { !$0.isSound }.count
            say("\(reports.count) table file(s), \(bad) with problems")
        }
        return reports.allSatisfy(\.isSound) ? .ok : .dataError
    }

    /// Reads one table to the end and reports what it found.
    static func inspect(_ file: TableFile, _ reader: EPFTableReader) -> Report {
        var report = Report(file: file, header: reader.header)
        let started = Date()
        let exportColumn = reader.header.index(of: "export_date")
        var exportDate: Int64?
        do {
            report.summary = try reader.forEachRecord { record in
                if exportDate == nil, let exportColumn, record.issues.isEmpty {
                    exportDate = EPFValues.integer(record.field(exportColumn))
                }
            }
        } catch {
            report.error = "\(error)"
        }
        report.exportDate = exportDate
        report.seconds = Date().timeIntervalSince(started)
        return report
    }

    static func megabytesPerSecond(_ bytes: Int64, _ seconds: Double) -> String {
        guard seconds > 0 else { return "-" }
        return String(format: "%.1f MB/s", Double(bytes) / 1_000_000 / seconds)
    }

    static func printHuman(_ report: Report) {
        say("== \(report.file.location)")
        if let feed = report.file.feed { say("  feed:            \(feed) \(report.file.feedDate ?? "")") }
        say("  table:           \(report.file.table)\(report.file.part.map { " (part \($0))" } ?? "")")
        if let digest = report.file.verifiedMD5 { say("  md5:             \(digest) (matches sidecar)") }
        if let header = report.header {
            if let exportDate = report.exportDate {
                say("  export date:     \(exportDate) (\(EPFValues.isoTimestamp(milliseconds: exportDate)))")
            }
            say("  mode:            \(header.exportMode?.rawValue ?? header.unknownExportMode ?? "none")"
                + (header.flavor == .flat ? " (EPF Flat)" : ""))
            say("  primary key:     \(header.primaryKey.isEmpty ? "none" : header.primaryKey.joined(separator: ", "))")
            say("  columns:         \(header.columns.count)")
            for (index, column) in header.columns.enumerated() {
                let type = index < header.dbTypes.count ? header.dbTypes[index] : "(no type)"
                say("    \(column.padding(toLength: 34, withPad: " ", startingAt: 0)) \(type)")
            }
            for correction in KnownSchemas.resolve(table: report.file.table, header: header).corrections {
                say("  header warning:  \(correction)")
            }
        }
        if let summary = report.summary {
            say("  recordsWritten:  \(summary.declaredRecords.map(String.init) ?? "missing")")
            say("  records read:    \(summary.records)"
                + (summary.countMismatch ? "  MISMATCH (declared \(summary.declaredRecords ?? 0))" : ""))
            if summary.truncated {
                say("  TRUNCATED:       no #recordsWritten footer; the file ends at byte \(summary.bytes)")
            }
            say("  bad records:     \(summary.badRecords)")
            for (kind, count) in summary.problemCounts.sorted(by: { $0.key < $1.key }) where kind != "truncated" {
                say("    \(kind): \(count)")
            }
            for sample in summary.problemSamples {
                let fields = sample.fields.map { ", \($0) fields" } ?? ""
                let kinds = sample.kinds.joined(separator: ", ")
                say("    record \(sample.record) at byte \(sample.offset): \(kinds)\(fields)")
            }
            say("  bytes:           \(summary.bytes) in \(String(format: "%.3f", report.seconds)) s"
                + " (\(megabytesPerSecond(summary.bytes, report.seconds)))")
        }
        if let error = report.error { say("  ERROR:           \(error)") }
        say(report.isSound ? "  status:          ok" : "  status:          PROBLEM")
    }

    /// The JSON object of one report (`--json`): keys in a fixed order, optional facts left out when unknown.
    static func jsonObject(_ report: Report) -> JSONValue {
        var object: [(String, JSONValue)] = [
            ("location", .string(report.file.location)),
            ("table", .string(report.file.table)),
            ("sound", .bool(report.isSound)),
        ]
        func add(_ key: String, _ value: JSONValue?) {
            if let value { object.append((key, value)) }
        }
        func text(_ value: String?) -> JSONValue { value.map { .string($0) } ?? .null }
        add("feed", report.file.feed.map { .string($0) })
        add("feedDate", report.file.feedDate.map { ReportJSON.feedDay($0) })
        add("part", report.file.part.map { .int(Int64($0)) })
        add("md5", report.file.verifiedMD5.map { .string($0) })
        add("exportDate", report.exportDate.map(ReportJSON.date))
        if let header = report.header {
            add("mode", text(header.exportMode?.rawValue ?? header.unknownExportMode))
            add("flavor", .string(header.flavor.rawValue))
            add("primaryKey", .array(header.primaryKey.map { .string($0) }))
            let corrections = KnownSchemas.resolve(table: report.file.table, header: header).corrections
            add("headerWarnings", .array(corrections.map { .string($0) }))
            add("columns", .array(header.columns.enumerated().map { index, name in
                .object([("name", .string(name)),
                         ("type", index < header.dbTypes.count ? .string(header.dbTypes[index]) : .null)])
            }))
        }
        if let summary = report.summary {
            add("recordsWritten", summary.declaredRecords.map { .int(Int64($0)) } ?? .null)
            add("recordsRead", .int(Int64(summary.records)))
            add("countMismatch", .bool(summary.countMismatch))
            add("truncated", .bool(summary.truncated))
            if summary.truncated { add("endsAtByte", .int(Int64(summary.bytes))) }
            add("badRecords", .int(Int64(summary.badRecords)))
            add("problems", .object(summary.problemCounts.sorted { $0.key < $1.key }.map {
                ($0.key, .int(Int64($0.value)))
            }))
            add("samples", .array(summary.problemSamples.map { sample in
                var entry: [(String, JSONValue)] = [("record", .int(Int64(sample.record))),
                                                    ("offset", .int(sample.offset)),
                                                    ("kinds", .array(sample.kinds.map { .string($0) }))]
                if let fields = sample.fields { entry.append(("fields", .int(Int64(fields)))) }
                return .object(entry)
            }))
            add("bytes", .int(Int64(summary.bytes)))
            add("seconds", ReportJSON.seconds(report.seconds))
            add("megabytesPerSecond", ReportJSON.megabytesPerSecond(report.seconds > 0
                ? Double(summary.bytes) / 1_000_000 / report.seconds : 0))
        }
        add("error", report.error.map { .string($0) })
        return .object(object)
    }
}
