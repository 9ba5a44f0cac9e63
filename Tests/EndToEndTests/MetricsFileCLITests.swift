import EPFTestSupport
import Foundation
import Testing

/// `epf sync --metrics-file` and `epf fetch --metrics-file`: Prometheus text for node_exporter's textfile
/// collector, written atomically, keeping the last success across failed runs.
@Suite struct MetricsFileCLITests {
    /// The samples of a metrics file, keyed by `name{labels}`.
    static func samples(_ path: String) throws -> [String: Double] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            #expect(parts.count == 2, "not a sample: \(line)")
            if parts.count == 2 { samples[String(parts[0])] = Double(parts[1]) }
        }
        return samples
    }

    /// Every sample's metric has HELP and TYPE lines before it, and every name starts with `epf_`.
    static func expectWellFormed(_ path: String) throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var described = Set<String>()
        for line in text.split(separator: "\n") {
            if line.hasPrefix("# TYPE ") {
                let words = line.split(separator: " ")
                #expect(words.count == 4 && words[3] == "gauge", "\(line)")
                described.insert(String(words[2]))
            } else if !line.hasPrefix("# HELP ") {
                let name = String(line.prefix { $0 != "{" })
                #expect(name.hasPrefix("epf_") && described.contains(name), "no TYPE before \(line)")
            }
        }
    }

    /// Files in `directory` other than the metrics files (a temporary file left behind would show here).
    static func leftovers(_ directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).filter { !$0.hasSuffix(".prom") }
    }

    @Test func syncWritesRowsPerTableAndAFailedRunKeepsTheLastSuccess() throws {
        let work = try WorkDirectory(prefix: "epf-metrics")
        let feeds = BuiltEPF.packageRoot.appendingPathComponent("feeds").path
        try FileManager.default.createDirectory(atPath: work.file("metrics"), withIntermediateDirectories: true)
        let metrics = work.file("metrics", "epf-sync.prom")
        let database = work.file("epf.sqlite")
        let before = Date().timeIntervalSince1970.rounded(.down)
        let synced = try runEPF(["sync", feeds, "--db", database, "--quiet", "--metrics-file", metrics],
                                in: work.path)
        #expect(synced.status == 0, "\(synced.stderr)")
        try Self.expectWellFormed(metrics)
        let first = try Self.samples(metrics)
        let lastRun = first["epf_job_last_run_timestamp_seconds{job=\"sync\"}"] ?? 0
        #expect(lastRun >= before)
        #expect(first["epf_job_last_success_timestamp_seconds{job=\"sync\"}"] == lastRun)
        #expect(first["epf_job_exit_code{job=\"sync\"}"] == 0)
        #expect((first["epf_job_duration_seconds{job=\"sync\"}"] ?? -1) >= 0)
        // The full's 150 apps, then the incremental's 5.
        #expect(first["epf_job_rows_applied{job=\"sync\",table=\"application\"}"] == 155)
        #expect(first["epf_job_rows_rejected{job=\"sync\",table=\"application\"}"] == 0)
        #expect(first["epf_job_rows_repaired{job=\"sync\",table=\"application_price\"}"] == 0)
        // The incremental of 2026-01-06.
        #expect(first["epf_database_newest_export_timestamp_seconds{job=\"sync\"}"] == 1_767_657_600)
        // Everything applied: complete as of the same day, one export, nothing failed.
        #expect(first["epf_database_data_as_of_timestamp_seconds{job=\"sync\"}"] == 1_767_657_600)
        #expect(first["epf_database_mixed_exports{job=\"sync\"}"] == 0)
        #expect(first["epf_database_failed_files{job=\"sync\"}"] == 0)
        #expect(first["epf_job_downloaded_bytes{job=\"sync\"}"] == nil)
        #expect(try Self.leftovers(work.file("metrics")).isEmpty)
        let mode = try FileManager.default.attributesOfItem(atPath: metrics)[.posixPermissions] as? Int
        #expect(mode == 0o644, "node_exporter (another user) must be able to read it")

        let failed = try runEPF(["sync", work.file("no-mirror"), "--db", database, "--metrics-file", metrics],
                                in: work.path)
        #expect(failed.status == 66)
        let second = try Self.samples(metrics)
        #expect(second["epf_job_exit_code{job=\"sync\"}"] == 66)
        #expect((second["epf_job_last_run_timestamp_seconds{job=\"sync\"}"] ?? 0) >= lastRun)
        #expect(second["epf_job_last_success_timestamp_seconds{job=\"sync\"}"] == lastRun)
        #expect(second["epf_database_newest_export_timestamp_seconds{job=\"sync\"}"] == 1_767_657_600)

        let usage = try runEPF(["sync", feeds, "--db", database, "--no-such-option", "--metrics-file", metrics],
                               in: work.path)
        #expect(usage.status == 64)
        #expect(try Self.samples(metrics)["epf_job_exit_code{job=\"sync\"}"] == 64)
        #expect(try Self.samples(metrics)["epf_job_last_success_timestamp_seconds{job=\"sync\"}"] == lastRun)
        #expect(try Self.leftovers(work.file("metrics")).isEmpty)
    }

    @Test func syncCountsRejectedAndRepairedRowsOfADirtyFeed() throws {
        let work = try WorkDirectory(prefix: "epf-metrics")
        let feed = try ImportCLITests.generate(work, name: "dirty", apps: 200, extra: ["--dirt"])
        let metrics = work.file("epf-sync.prom")
        let synced = try runEPF(["sync", feed, "--db", work.file("epf.sqlite"), "--quiet", "--max-rejects", "100000",
                                 "--metrics-file", metrics], in: work.path)
        let samples = try Self.samples(metrics)
        #expect(samples["epf_job_exit_code{job=\"sync\"}"] == Double(synced.status))
        let rejected = samples.filter { $0.key.hasPrefix("epf_job_rows_rejected{") }.values.reduce(0, +)
        let repaired = samples.filter { $0.key.hasPrefix("epf_job_rows_repaired{") }.values.reduce(0, +)
        #expect(rejected > 0, "\(synced.stdout)")
        #expect(repaired > 0, "\(synced.stdout)")
    }

    @Test func aMetricsFileThatCannotBeWrittenIsAWarningNotAFailure() throws {
        let work = try WorkDirectory(prefix: "epf-metrics")
        let feeds = BuiltEPF.packageRoot.appendingPathComponent("feeds").path
        let metrics = work.file("missing-directory", "epf-sync.prom")
        let synced = try runEPF(["sync", feeds, "--db", work.file("epf.sqlite"), "--quiet", "--metrics-file", metrics],
                                in: work.path)
        #expect(synced.status == 0)
        #expect(synced.stderr.contains("warning: metrics not written: cannot write \(metrics)"), "\(synced.stderr)")
    }

    @Test func fetchWritesTheBytesItDownloadedAndKeepsTheLastSuccessWhenRefused() throws {
        let fixture = try FetchFixture()
        let metrics = fixture.work.file("epf-fetch.prom")
        let fetched = try fixture.fetch(["--metrics-file", metrics])
        #expect(fetched.status == 0, "\(fetched.stderr)")
        try Self.expectWellFormed(metrics)
        let first = try Self.samples(metrics)
        #expect(first["epf_job_exit_code{job=\"fetch\"}"] == 0)
        #expect(first["epf_job_downloaded_bytes{job=\"fetch\"}"] == Double(fixture.server.archiveBytesSent))
        let success = first["epf_job_last_success_timestamp_seconds{job=\"fetch\"}"]
        #expect(success != nil)

        var wrong = fixture.credentials
        wrong["EPF_PASSWORD"] = "not-the-password"
        let refused = try fixture.fetch(["--metrics-file", metrics], environment: wrong)
        #expect(refused.status == 77)
        let second = try Self.samples(metrics)
        #expect(second["epf_job_exit_code{job=\"fetch\"}"] == 77)
        #expect(second["epf_job_last_success_timestamp_seconds{job=\"fetch\"}"] == success)
    }
}
