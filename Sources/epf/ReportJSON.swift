import EPFFetch
import EPFFormat
import EPFGenerator
import EPFImport
import EPFStore
import JSONText

/// The `--json` documents of `import`, `sync`, `fetch` and `generate`, written by the one JSON writer (JSONText)
/// as every other `--json` is: dates in ISO 8601 UTC, seconds rounded to the millisecond, rates to whole numbers.
/// The keys are those docs/cli.md lists under "JSON output".
enum ReportJSON {
    /// Prints a document as `--json` does: indented, one line per member, a newline at the end.
    static func write(_ value: JSONValue) {
        Output.shared.write(value.prettyText + "\n")
    }

    /// Seconds, rounded to the millisecond.
    static func seconds(_ value: Double) -> JSONValue { .double((value * 1000).rounded() / 1000) }

    /// A rate (rows or megabytes per second), rounded to a whole number.
    static func rate(_ value: Double) -> JSONValue {
        value.isFinite ? .int(Int64(value.rounded())) : .null
    }

    /// An export date held as milliseconds since 1970, as ISO 8601 UTC (`2026-01-05T00:00:00Z`).
    static func date(_ milliseconds: Int64?) -> JSONValue {
        milliseconds.map { .string(EPFValues.isoTimestamp(milliseconds: $0)) } ?? .null
    }

    /// A feed folder's date stamp (`20260105`) as the midnight it names, in ISO 8601 UTC like every other date.
    static func feedDay(_ stamp: String?) -> JSONValue {
        stamp.map { .string(EPFValues.isoTimestamp(feedDay: $0)) } ?? .null
    }

    static func text(_ value: String?) -> JSONValue { value.map { .string($0) } ?? .null }
    static func int(_ value: Int) -> JSONValue { .int(Int64(value)) }
    static func strings(_ values: [String]) -> JSONValue { .array(values.map { .string($0) }) }

    // MARK: import and sync

    /// The report of `epf import --json` and `epf sync --json`.
    static func importReport(_ report: ImportReport) -> JSONValue {
        .object([
            ("database", .string(report.database)),
            ("succeeded", .bool(report.succeeded)),
            ("seconds", seconds(report.seconds)),
            ("outcomes", .array(report.outcomes.map(outcome))),
            ("unchangedSources", strings(report.unchangedSources)),
            ("fileErrors", strings(report.fileErrors)),
            ("failedFiles", .array(report.failedFiles.map { file in
                .object([("path", .string(file.path)), ("error", .string(file.message))])
            })),
            ("derived", .array(report.derived.map { derived in
                .object([("name", .string(derived.name)), ("items", int(derived.items)),
                         ("seconds", seconds(derived.seconds))])
            })),
            ("phases", phases(report.phases)),
            ("phasesCPU", phasesCPU(report.phasesCPU)),
            ("stopped", report.stopped.map(stop) ?? .null),
        ])
    }

    static func outcome(_ outcome: TableOutcome) -> JSONValue {
        .object([
            ("table", .string(outcome.table)),
            ("status", .string(outcome.status.rawValue)),
            ("mode", text(outcome.mode)),
            ("exportDate", date(outcome.exportDate)),
            ("feed", text(outcome.feed)),
            ("feedDate", feedDay(outcome.feedDate)),
            ("location", .string(outcome.location)),
            ("parts", int(outcome.parts)),
            ("records", int(outcome.records)),
            ("rows", int(outcome.rows)),
            ("insertedRows", int(outcome.insertedRows)),
            ("rejects", int(outcome.rejects)),
            ("repaired", int(outcome.repaired)),
            ("duplicates", int(outcome.duplicates)),
            ("leftOut", int(outcome.leftOut)),
            ("resumedRecords", int(outcome.resumedRecords)),
            ("bytes", .int(outcome.bytes)),
            ("seconds", seconds(outcome.seconds)),
            ("rowsPerSecond", rate(outcome.rowsPerSecond)),
            ("message", text(outcome.message)),
            ("warnings", strings(outcome.warnings)),
            ("rejectsFile", text(outcome.rejectsFile)),
            ("noRoom", text(outcome.noRoom?.rawValue)),
        ])
    }

    static func phases(_ phases: PhaseTimes) -> JSONValue {
        .object([
            ("reading", seconds(phases.reading)), ("inserting", seconds(phases.inserting)),
            ("indexes", seconds(phases.indexes)), ("committing", seconds(phases.committing)),
            ("priceHistory", seconds(phases.priceHistory)), ("rankHistory", seconds(phases.rankHistory)),
            ("searchIndex", seconds(phases.searchIndex)),
            ("lookupDocuments", seconds(phases.lookupDocuments)), ("checkpoint", seconds(phases.checkpoint)),
            ("other", seconds(phases.other)),
        ])
    }

    static func phasesCPU(_ cpu: PhaseCPU) -> JSONValue {
        .object([
            ("loading", seconds(cpu.loading)), ("indexes", seconds(cpu.indexes)),
            ("committing", seconds(cpu.committing)), ("priceHistory", seconds(cpu.priceHistory)),
            ("rankHistory", seconds(cpu.rankHistory)),
            ("searchIndex", seconds(cpu.searchIndex)), ("lookupDocuments", seconds(cpu.lookupDocuments)),
            ("checkpoint", seconds(cpu.checkpoint)), ("total", seconds(cpu.total)),
        ])
    }

    static func stop(_ stop: ImportStop) -> JSONValue {
        .object([
            ("cause", .string(stop.cause.rawValue)), ("table", text(stop.table)), ("error", .string(stop.error)),
            ("directory", .string(stop.directory)), ("freeBytes", stop.freeBytes.map { .int($0) } ?? .null),
            ("appliedBefore", strings(stop.appliedBefore)), ("message", .string(stop.message)),
        ])
    }

    // MARK: sync --plan

    /// `epf sync --plan --json`: the steps in the order sync applies them, as the text plan lists them, each with
    /// its `status` in the database (`applied`, `superseded`, `partial` or `pending`) and the input files still `pending`.
    static func syncPlan(_ plan: SyncPlan, progress: [SyncStepProgress], root: String) -> JSONValue {
        .object([
            ("root", .string(root)),
            ("steps", .array(zip(plan.steps, progress).map { step, progress in
                .object([("mode", .string(step.mode == .full ? "full" : "incremental")),
                         ("date", .string(EPFValues.isoTimestamp(feedDay: step.date))),
                         ("paths", strings(step.paths)), ("status", .string(progress.state.rawValue)),
                         ("pending", strings(progress.pending))])
            })),
        ])
    }

    // MARK: fetch

    /// The report of `epf fetch --json`.
    static func fetchReport(_ report: FetchReport) -> JSONValue {
        .object([
            ("source", .string(report.source)),
            ("mirror", .string(report.mirror)),
            ("dryRun", .bool(report.dryRun)),
            ("files", .array(report.files.map { file in
                .object([
                    ("path", .string(file.path)), ("url", .string(file.url)), ("status", .string(file.status)),
                    ("bytes", file.bytes.map { .int($0) } ?? .null), ("downloadedBytes", .int(file.downloadedBytes)),
                    ("resumedBytes", .int(file.resumedBytes)), ("seconds", seconds(file.seconds)),
                    ("megabytesPerSecond", megabytesPerSecond(file.megabytesPerSecond)),
                    ("error", text(file.error)),
                ])
            })),
            ("published", strings(report.published)),
            ("pruned", strings(report.pruned)),
            ("downloadedBytes", .int(report.downloadedBytes)),
            ("pendingBytes", .int(report.pendingBytes)),
            ("seconds", seconds(report.seconds)),
            ("megabytesPerSecond", megabytesPerSecond(report.megabytesPerSecond)),
            ("errors", strings(report.errors)),
        ])
    }

    /// MB/s to one decimal, as the table shows it.
    static func megabytesPerSecond(_ value: Double) -> JSONValue {
        value.isFinite ? .double((value * 10).rounded() / 10) : .null
    }

    // MARK: generate

    /// The report of `epf generate --json`.
    static func generatedFeed(_ feed: GeneratedFeed) -> JSONValue {
        let options = feed.options
        return .object([
            ("exportDate", date(options.exportDate)),
            ("mode", .string(options.mode.rawValue)),
            ("layout", .string(options.layout.rawValue)),
            ("apps", int(options.apps)),
            ("seed", .decimal(String(options.seed))),
            ("scale", options.scale.map { .double($0) } ?? .null),
            ("seconds", seconds(feed.seconds)),
            ("uncompressedBytes", .int(feed.uncompressedBytes)),
            ("tables", .array(feed.tables.map { table in
                .object([("feed", .string(table.feed.rawValue)), ("table", .string(table.table)),
                         ("rows", int(table.rows)), ("bytes", .int(table.bytes)), ("path", .string(table.path)),
                         ("member", text(table.member))])
            })),
            ("files", .array(feed.files.map { file in
                .object([("path", .string(file.path)), ("feed", .string(file.feed.rawValue)),
                         ("table", text(file.table)), ("bytes", .int(file.bytes)), ("md5", text(file.md5))])
            })),
            ("dirtManifest", text(feed.manifest?.path)),
            ("dirt", .array(feed.dirt.map { entry in
                .object([("feed", .string(entry.feed.rawValue)), ("table", .string(entry.table)),
                         ("kind", .string(entry.kind.rawValue)), ("record", int(entry.record)),
                         ("offset", .int(entry.offset)), ("column", text(entry.column)),
                         ("value", text(entry.value)), ("note", .string(entry.note))])
            })),
        ])
    }
}
