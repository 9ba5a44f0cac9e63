import EPFImport
import EPFPostgres
import EPFPostgresStore
import EPFSQLite
import EPFStore
import Foundation

/// What one run of `epf sync` or `epf fetch` tells monitoring, in the Prometheus text format that
/// node_exporter's textfile collector reads (`--metrics-file PATH`, one file per job).
///
/// The file says when the job last ran and last succeeded, how long it took and how it exited, the bytes it
/// downloaded (fetch), the rows it applied, rejected and repaired per table (sync), and the newest export date in
/// the database. A failed run keeps the previous file's last-success time, so "no success for 36 hours" can be
/// alerted on across failures.
struct JobMetrics {
    /// The job, the `job` label of every sample.
    enum Job: String {
        case sync, fetch
    }

    /// The rows of one table in this run, summed over its files (a full and its incrementals).
    struct TableRows: Equatable {
        var applied = 0
        var rejected = 0
        var repaired = 0
    }

    var job: Job
    var started: Date
    var finished: Date
    var exitCode: Int32
    /// The end of the last run that exited 0: this run's when it did, else the previous file's.
    var lastSuccess: Date?
    /// Bytes downloaded (fetch); nil when the job downloads nothing.
    var downloadedBytes: Int64?
    /// Per table (sync).
    var tables: [String: TableRows] = [:]
    /// The newest export date over the database's tables, milliseconds since 1970; nil when unknown.
    var newestExportDate: Int64?
    /// The database's claims after the run (`StoreStatus`): the date its data is complete as of, whether its tables
    /// mix exports, and how many failed files nothing made up for; nil when unknown.
    var claims: (asOf: Int64?, mixed: Bool, failures: Int)?

    /// `--metrics-file FILE` of sync and fetch.
    static let fileOption = TextOption(
        "metrics-file", "FILE",
        "Write the run's metrics for Prometheus (node_exporter's textfile collector) to FILE, atomically: last "
            + "run and last success times, duration, exit code, bytes downloaded, rows applied, rejected and "
            + "repaired per table, the newest export date in the database (see docs/operations.md).")

    /// Adds an import's outcomes: rows applied (of the tables applied), rejected and repaired, per table.
    mutating func add(_ report: ImportReport) {
        for outcome in report.outcomes {
            var rows = tables[outcome.table] ?? TableRows()
            if outcome.status == .applied { rows.applied += outcome.rows }
            rows.rejected += outcome.rejects
            rows.repaired += outcome.repaired
            tables[outcome.table] = rows
        }
    }

    /// The file's text: HELP and TYPE lines, then the samples, every metric name prefixed `epf_`.
    func text() -> String {
        let label = "job=\"\(job.rawValue)\""
        var lines: [String] = []
        func metric(_ name: String, _ help: String, _ samples: [(labels: String, value: String)]) {
            guard !samples.isEmpty else { return }
            lines.append("# HELP \(name) \(help)")
            lines.append("# TYPE \(name) gauge")
            for sample in samples { lines.append("\(name){\(sample.labels)} \(sample.value)") }
        }
        metric("epf_job_last_run_timestamp_seconds", "When the job's last run ended (Unix time).",
               [(label, Self.number(finished.timeIntervalSince1970))])
        metric("epf_job_last_success_timestamp_seconds", "When the job's last run with exit code 0 ended (Unix time).",
               lastSuccess.map { [(label, Self.number($0.timeIntervalSince1970))] } ?? [])
        metric("epf_job_duration_seconds", "How long the job's last run took.",
               [(label, Self.number(finished.timeIntervalSince(started)))])
        metric("epf_job_exit_code", "The exit code of the job's last run (0 ok; see epf(1) for the others).",
               [(label, "\(exitCode)")])
        metric("epf_job_downloaded_bytes", "Bytes the job's last run downloaded.",
               downloadedBytes.map { [(label, "\($0)")] } ?? [])
        let sortedTables = tables.sorted { $0.key < $1.key }
        func perTable(_ value: (TableRows) -> Int) -> [(labels: String, value: String)] {
            sortedTables.map { ("\(label),table=\"\(Self.labelValue($0.key))\"", "\(value($0.value))") }
        }
        metric("epf_job_rows_applied", "Rows the job's last run applied, per table.", perTable(\.applied))
        metric("epf_job_rows_rejected", "Rows the job's last run rejected (listed in the rejects file), per table.",
               perTable(\.rejected))
        metric("epf_job_rows_repaired",
               "Rows the job's last run kept with a bad value stored as NULL (--bad-values null), per table.",
               perTable(\.repaired))
        metric("epf_database_newest_export_timestamp_seconds",
               "The newest export date over the database's tables (Unix time), read after the run.",
               newestExportDate.map { [(label, Self.number(Double($0) / 1000))] } ?? [])
        metric("epf_database_data_as_of_timestamp_seconds",
               "The date the database's data is complete as of (Unix time): older than the newest export date when a "
                   + "failed file or an older full holds a table back (epf status).",
               claims?.asOf.map { [(label, Self.number(Double($0) / 1000))] } ?? [])
        metric("epf_database_mixed_exports", "1 when the database's tables mix exports (epf status), else 0.",
               claims.map { [(label, $0.mixed ? "1" : "0")] } ?? [])
        metric("epf_database_failed_files",
               "Files that failed and that nothing applied since made up for (listed by epf status).",
               claims.map { [(label, "\($0.failures)")] } ?? [])
        return lines.joined(separator: "\n") + "\n"
    }

    /// The last-success time `text()` wrote for `job` into the file at `path`; nil when there is none.
    static func lastSuccess(inFileAt path: String, job: Job) -> Date? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let prefix = "epf_job_last_success_timestamp_seconds{job=\"\(job.rawValue)\"} "
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") where line.hasPrefix(prefix) {
            if let seconds = Double(line.dropFirst(prefix.count)), seconds.isFinite, seconds > 0 {
                return Date(timeIntervalSince1970: seconds)
            }
        }
        return nil
    }

    /// The status of the database at `path` (SQLite file or postgresql:// URL); nil when there is no database yet
    /// or it cannot be read (its metrics are then left out).
    static func databaseStatus(database path: String, schema: String) -> StoreStatus? {
        if PostgresURL.isPostgres(path) {
            return try? PostgresCLI.status(url: path, schema: schema, lastImports: 0)
        }
        guard FileManager.default.fileExists(atPath: path),
              let connection = try? SQLiteConnection(path: path, mode: .readOnly, busyTimeoutMilliseconds: 5000)
        else { return nil }
        return try? StoreStatus.read(connection, databasePath: path, lastImports: 0)
    }

    /// A number as Prometheus reads it: whole numbers without a fraction, others with millisecond precision.
    static func number(_ value: Double) -> String {
        value.rounded() == value ? String(Int64(value)) : String(format: "%.3f", value)
    }

    /// A label value with `\`, `"` and newlines escaped as the text format requires.
    static func labelValue(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}

/// Records one run of a job for `--metrics-file`: the body fills in what it learns, and the file is written
/// however the body ends (exit status, failure or usage error).
final class JobRecorder {
    private(set) var metrics: JobMetrics
    /// The database whose newest export date goes into the file; set by the body once it knows it.
    var database: String?
    /// The PostgreSQL schema, for a postgresql:// `database`.
    var schema = PostgresTarget.defaultSchema

    private init(job: JobMetrics.Job) {
        let now = Date()
        metrics = JobMetrics(job: job, started: now, finished: now, exitCode: 0)
    }

    /// Adds an import's rows per table.
    func add(_ report: ImportReport) { metrics.add(report) }

    /// Sets the bytes downloaded.
    func setDownloadedBytes(_ bytes: Int64) { metrics.downloadedBytes = bytes }

    /// Runs `body`; when `path` is given, writes the metrics file after it, then returns its status or rethrows
    /// its error. A file that cannot be written is reported on standard error and does not change the status:
    /// the job's own outcome is what its exit status says.
    static func record(_ job: JobMetrics.Job, to path: String?,
                       _ body: (JobRecorder) throws -> ExitCode) throws -> ExitCode {
        let recorder = JobRecorder(job: job)
        guard let path else { return try body(recorder) }
        do {
            let code = try body(recorder)
            recorder.finish(exitCode: code.rawValue, path: path)
            return code
        } catch {
            recorder.finish(exitCode: exitStatus(of: error), path: path)
            throw error
        }
    }

    /// The status `runMain` exits with for an error a command throws.
    static func exitStatus(of error: any Error) -> Int32 {
        switch error {
        case is UsageError: return ExitCode.usage.rawValue
        case let failure as CommandFailure: return failure.code.rawValue
        default: return ExitCode.software.rawValue
        }
    }

    private func finish(exitCode: Int32, path: String) {
        metrics.finished = Date()
        metrics.exitCode = exitCode
        metrics.lastSuccess = exitCode == 0
            ? metrics.finished : JobMetrics.lastSuccess(inFileAt: path, job: metrics.job)
        if let database {
            let status = JobMetrics.databaseStatus(database: database, schema: schema)
            metrics.newestExportDate = status?.exportDate
            metrics.claims = status.map { ($0.dataAsOf, $0.mixed, $0.failures.count) }
        }
        do {
            try AtomicFile.write(Data(metrics.text().utf8), to: path)
        } catch {
            printError("epf \(metrics.job.rawValue): warning: metrics not written: \(error)")
        }
    }
}

/// A failed step of `AtomicFile.write`: the file to replace, the file the call worked on, the call and its errno.
struct AtomicFileError: Error, CustomStringConvertible {
    let path: String
    let file: String
    let call: String
    let code: Int32

    var description: String {
        "cannot write \(path): \(call) of \(file) failed: \(String(cString: strerror(code))) (errno \(code)); "
            + "check that the directory exists and this user may write there"
    }
}

/// Replaces a file whole: readers see the old contents or the new, never a part.
enum AtomicFile {
    /// Writes `data` into a temporary file beside `path` (same directory, so the rename cannot cross
    /// filesystems), fsyncs it, makes it readable by all (0644, for node_exporter), renames it over `path` and
    /// fsyncs the directory. On failure the temporary file is removed and `path` is unchanged.
    static func write(_ data: Data, to path: String) throws(AtomicFileError) {
        let directory = (path as NSString).deletingLastPathComponent.isEmpty
            ? "." : (path as NSString).deletingLastPathComponent
        // Not ending in .prom: node_exporter's collector must not read the file while it is being written.
        let temporary = path + ".tmp-\(getpid())"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw AtomicFileError(path: path, file: temporary, call: "open", code: errno) }
        var failure: AtomicFileError?
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count, let base = raw.baseAddress {
                let written = Foundation.write(descriptor, base + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = AtomicFileError(path: path, file: temporary, call: "write", code: errno)
                    return
                }
                offset += written
            }
        }
        if failure == nil, fchmod(descriptor, 0o644) != 0 {
            failure = AtomicFileError(path: path, file: temporary, call: "fchmod", code: errno)
        }
        if failure == nil, fsync(descriptor) != 0 {
            failure = AtomicFileError(path: path, file: temporary, call: "fsync", code: errno)
        }
        if close(descriptor) != 0, failure == nil {
            failure = AtomicFileError(path: path, file: temporary, call: "close", code: errno)
        }
        if failure == nil, rename(temporary, path) != 0 {
            failure = AtomicFileError(path: path, file: temporary, call: "rename", code: errno)
        }
        if let failure {
            unlink(temporary)
            throw failure
        }
        let directoryDescriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryDescriptor >= 0 {
            fsync(directoryDescriptor)
            close(directoryDescriptor)
        }
    }
}
