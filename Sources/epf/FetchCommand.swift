import EPFFetch
import Foundation

/// `epf fetch`: mirrors the newest full export and its incrementals from Apple's feed server.
enum FetchCommand: Command {
    static let name = "fetch"
    static let summary = "Download what is new from Apple's feed server into a mirror, verified and resumable"
    static let help = """
    USAGE: epf fetch [--mirror DIR] [--only TABLE,...] [--feeds itunes,pricing,popularity,match] [options]

    Lists the server's newest full export of each feed and the incrementals after it, and downloads into DIR what
    the mirror (and, for incrementals, the database's ledger) lacks. Each file streams into <name>.part, is checked
    against its .md5 and only then renamed into place; a new feed directory is assembled hidden and appears whole.
    An interrupted fetch continues from its .part files. The mirror is what 'epf sync DIR' reads:

      epf fetch --mirror /srv/epf-mirror && epf sync /srv/epf-mirror --db /srv/epf/epf.sqlite

    Credentials (HTTP Basic): the netrc file given with --netrc-file, else EPF_USER and EPF_PASSWORD from the
    environment, else ~/.netrc ('machine feeds.itunes.apple.com login USER password PASS'). Never on the command
    line.

    OPTIONS:
    \(optionsHelp(declaredOptions))

    EXIT STATUS:
      0 the mirror holds everything listed; 65 a file did not match its .md5 twice (named); 66 no full export at
      the URL; 69 the server did not deliver after retries (the .part files are kept: run again to resume); 73 the
      mirror cannot be written; 75 another fetch holds the mirror's lock; 77 the server refused the credentials.

    EXAMPLES:
      epf fetch --mirror /srv/epf-mirror --only application,application_detail,application_price
      epf fetch --mirror /srv/epf-mirror --dry-run
      epf fetch --mirror /srv/epf-mirror --connections 16 --keep 2 --json
      epf fetch --mirror /srv/epf-mirror --quiet --metrics-file /var/lib/prometheus/node-exporter/epf-fetch.prom
    """

    /// Every option of `epf fetch`, declared once.
    enum Options {
        /// The library's defaults, which the declarations show.
        private static let defaults = (fetch: FetchOptions(mirror: "epf-mirror"), http: HTTPSettings())

        static let mirror = TextOption("mirror", "DIR", default: defaults.fetch.mirror, "The local mirror.",
                                       shownDefault: "$EPF_MIRROR, else ./epf-mirror")
        static let url = TextOption("url", "URL", default: defaults.fetch.url,
                                    "The folder listing the feeds; v3 (one .tbz per feed) and v4 trees work too.")
        static let feeds = TextOption("feeds", "LIST", default: defaults.fetch.feeds.sorted().joined(separator: ","),
                                      "Feeds to mirror, a list of itunes, pricing, popularity, match.")
        static let only = TextOption("only", "TABLE,...",
                                     "Only these tables (v4/v5), e.g. application,application_price.")
        static let connections = IntOption("connections", default: defaults.fetch.connections, range: 1...32,
                                           "Connections at once, 1 ... 32: a large file is split into byte ranges "
                                               + "fetched together, small files go in parallel.")
        static let minSplit = TextOption("min-split", "SIZE", default: "\(defaults.fetch.minSplit >> 20)M",
                                         "Split a file only into ranges of at least SIZE (K, M, G suffixes).")
        static let netrcFile = TextOption("netrc-file", "FILE", "Credentials from FILE instead of ~/.netrc.")
        static let database = TextOption("db", "FILE", default: CommonOptions.database.defaultValue,
                                         "Database whose ledger lists incrementals already applied, when it "
                                             + "exists; also the full --keep never removes.",
                                         shownDefault: CommonOptions.database.help.shownDefault)
        static let keep = IntOption("keep", default: 0, range: 1...10_000,
                                    "After a complete fetch, remove mirror fulls older than the newest N (never the "
                                        + "one the database was built from) and the incrementals before them.",
                                    shownDefault: "keep every full")
        static let retries = IntOption("retries", default: defaults.http.retries, range: 0...100,
                                       "Tries after the first for timeouts, dropped connections, 5xx.")
        static let retryWait = TextOption("retry-wait", "SECONDS", default: "\(Int(defaults.http.retryWait))",
                                          "Wait before the first retry, doubled each time.")
        static let stallTimeout = TextOption("stall-timeout", "SECONDS", default: "\(defaults.http.stallSeconds)",
                                             "Drop and resume a connection that received nothing for this long.")
        static let connectTimeout = TextOption("connect-timeout", "SECONDS", default: "\(defaults.http.connectTimeout)",
                                               "Give up on a connection not established within this long.")
        static let dryRun = Flag("dry-run", "List what would be downloaded and its size; write nothing.")
        static let json = CommonOptions.json("Print the summary as JSON.")
        static let quiet = Flag("quiet", "No progress lines.")

        /// In the order `--help` lists them.
        static let listed: [any DeclaredOption] = [
            mirror, url, feeds, only, connections, minSplit, netrcFile, database, keep, retries, retryWait,
            stallTimeout, connectTimeout, dryRun, json, quiet,
        ]
    }

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let metricsFile = try arguments.read(JobMetrics.fileOption)
        return try JobRecorder.record(.fetch, to: metricsFile) { recorder in
            try run(&arguments, recorder: recorder)
        }
    }

    private static func run(_ arguments: inout Arguments, recorder: JobRecorder) throws -> ExitCode {
        for secret in ["user", "password", "pass"] where try arguments.option(secret) != nil {
            throw UsageError("--\(secret) is not accepted: the command line shows in 'ps'. Put the credentials in "
                             + "EPF_USER and EPF_PASSWORD, or in ~/.netrc (or --netrc-file)")
        }
        let environment = ProcessInfo.processInfo.environment
        let mirror = try arguments.option(Options.mirror.help.name)
            ?? environment["EPF_MIRROR"].flatMap { $0.isEmpty ? nil : $0 } ?? Options.mirror.defaultValue ?? ""
        var options = FetchOptions(mirror: mirror)
        if let url = try arguments.option(Options.url.help.name) {
            guard url.hasPrefix("http://") || url.hasPrefix("https://") else {
                throw UsageError("--url must start with http:// or https://, got '\(url)'")
            }
            options.url = url
        }
        if let feeds = try arguments.option(Options.feeds.help.name) {
            let names = Set(feeds.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            let known: Set<String> = ["itunes", "pricing", "popularity", "match"]
            guard !names.isEmpty, names.isSubset(of: known) else {
                throw UsageError("--feeds takes a list of itunes, pricing, popularity, match; got '\(feeds)'")
            }
            options.feeds = names
        }
        if let only = try arguments.read(Options.only) {
            options.tables = Set(only.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        }
        options.connections = try arguments.read(Options.connections)
        if let text = try arguments.option(Options.minSplit.help.name) {
            guard let bytes = byteCount(text), bytes >= 64 * 1024 else {
                throw UsageError("--min-split must be a size of at least 64K, like 4M or 1048576; got '\(text)'")
            }
            options.minSplit = bytes
        }
        var http = HTTPSettings()
        if let netrc = try arguments.read(Options.netrcFile) {
            guard FileManager.default.isReadableFile(atPath: netrc) else {
                throw UsageError("--netrc-file \(netrc): no readable file there")
            }
            http.credentials = .netrc(path: netrc)
        } else if let user = environment["EPF_USER"], !user.isEmpty {
            guard let password = environment["EPF_PASSWORD"] else {
                throw UsageError("EPF_USER is set but EPF_PASSWORD is not")
            }
            http.credentials = .environment(user: user, password: password)
        }
        http.retries = try arguments.read(Options.retries)
        http.retryWait = try seconds(&arguments, Options.retryWait)
        http.stallSeconds = Int(try seconds(&arguments, Options.stallTimeout).rounded(.up))
        http.connectTimeout = Int(try seconds(&arguments, Options.connectTimeout).rounded(.up))
        options.http = http
        let database = try databasePath(&arguments, allowPostgres: true)
        recorder.database = database
        options.database = FileManager.default.fileExists(atPath: database) ? database : nil
        let keep = try arguments.read(Options.keep)
        options.keep = keep > 0 ? keep : nil
        options.dryRun = arguments.read(Options.dryRun)
        let json = arguments.read(Options.json)
        let quiet = arguments.read(Options.quiet)
        let positionals = try arguments.finish()
        guard positionals.isEmpty else {
            throw UsageError("unexpected argument '\(positionals[0])' (the mirror is given with --mirror)")
        }
        return try execute(options, json: json, quiet: quiet, recorder: recorder)
    }

    /// A size like `4M`, `512K`, `1G` or plain bytes.
    static func byteCount(_ text: String) -> Int64? {
        let units: [Character: Int64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        if let last = text.uppercased().last, let unit = units[last] {
            return Int64(text.dropLast()).map { $0 * unit }
        }
        return Int64(text)
    }

    /// A number of seconds above 0, at most a day: the option's value or its default.
    static func seconds(_ arguments: inout Arguments, _ option: TextOption) throws -> Double {
        let text = try arguments.read(option) ?? ""
        guard let number = Double(text), number > 0, number <= 86_400 else {
            throw UsageError("--\(option.help.name) must be a number of seconds above 0, got '\(text)'")
        }
        return number
    }

    static func execute(_ options: FetchOptions, json: Bool, quiet: Bool,
                        recorder: JobRecorder? = nil) throws -> ExitCode {
        let live = isTerminal(STDERR_FILENO)
        let showProgress = !quiet && !(json && !live)
        let log: @Sendable (String) -> Void = { message in
            let line = live ? "\r\u{1B}[K" + message : ISO8601DateFormatter().string(from: Date()) + " " + message
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
        var lastLog = Date.distantPast  // the progress callback runs on this thread only
        let fetcher = Fetcher(options: options, log: log) { progress in
            guard showProgress else { return }
            let megabytes = Double(progress.bytesDone) / 1e6
            let rate = progress.elapsed > 0 ? megabytes / progress.elapsed : 0
            var text = String(format: "fetch: %d/%d files, %.1f of %.1f MB, %.1f MB/s", progress.filesDone,
                              progress.files, megabytes, Double(progress.bytesTotal) / 1e6, rate)
            if progress.bytesTotal > 0, rate > 0, !progress.finished {
                let left = Double(progress.bytesTotal - progress.bytesDone) / 1e6 / rate
                text += String(format: ", ETA %.0fs", max(0, left))
            }
            if live {
                FileHandle.standardError.write(Data(("\r\u{1B}[K" + text + (progress.finished ? "\n" : "")).utf8))
            } else if progress.finished || Date().timeIntervalSince(lastLog) >= 5 {
                lastLog = Date()
                log(text)
            }
        }
        let report: FetchReport
        let failures: [FetchError]
        do {
            (report, failures) = try fetcher.run()
        } catch let error as FetchError {
            throw CommandFailure(exitCode(error), error.description)
        }
        recorder?.setDownloadedBytes(report.downloadedBytes)
        if json {
            ReportJSON.write(ReportJSON.fetchReport(report))
        } else {
            printSummary(report)
        }
        for failure in failures { printError("error: \(failure)") }
        guard let worst = failures.map(exitCode).max(by: { severity($0) < severity($1) }) else { return .ok }
        return worst
    }

    static func exitCode(_ error: FetchError) -> ExitCode {
        switch error {
        case .unauthorized: return .noPermission
        case .unavailable: return .unavailable
        case .checksumMismatch, .badSidecar: return .dataError
        case .noFeed: return .noInput
        case .io: return .cannotCreate
        case .locked: return .tempFail
        case .badOption: return .usage
        }
    }

    private static func severity(_ code: ExitCode) -> Int {
        [ExitCode.unavailable, .cannotCreate, .dataError, .noPermission].firstIndex(of: code) ?? -1
    }

    static func printSummary(_ report: FetchReport) {
        let rows = report.files.map { file -> [String] in
            [file.status, file.path, file.bytes.map { String(format: "%.1f", Double($0) / 1e6) } ?? "-",
             file.downloadedBytes > 0 ? String(format: "%.1f", Double(file.downloadedBytes) / 1e6) : "-",
             file.seconds > 0 ? String(format: "%.1f", file.seconds) : "-",
             file.megabytesPerSecond > 0 ? String(format: "%.1f", file.megabytesPerSecond) : "-"]
        }
        if !rows.isEmpty {
            printTable(header: ["status", "file", "MB", "fetched MB", "seconds", "MB/s"], rows: rows,
                       rightAligned: [2, 3, 4, 5], priorities: [0, 0, 1, 3, 2, 2])
        }
        for directory in report.published { say("published  \(directory)") }
        for path in report.pruned { say("removed    \(path) (--keep)") }
        let count: (String) -> Int = { status in report.files.filter { $0.status == status }.count }
        if report.dryRun {
            say(String(format: "would download %d files (%.1f MB), resume %d; %d present, %d applied -> %@",
                       count("would download"), Double(report.pendingBytes) / 1e6, count("would resume"),
                       count("present"), count("applied"), report.mirror))
            return
        }
        say(String(format: "%d downloaded, %d resumed, %d present, %d applied, %d failed: %.1f MB in %.1f s "
                   + "(%.1f MB/s) -> %@", count("downloaded"), count("resumed"), count("present"), count("applied"),
                   count("failed"), Double(report.downloadedBytes) / 1e6, report.seconds,
                   report.megabytesPerSecond, report.mirror))
    }
}
