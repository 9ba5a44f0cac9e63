import EPFGenerator
import EPFImport
import EPFPostgres
import EPFPostgresStore
import EPFStore
import EPFTestSupport
import Foundation

/// Generates a feed into `directory/name` and returns the feed directories.
func generate(_ options: GeneratorOptions, in directory: String, name: String) throws -> [String] {
    let target = URL(fileURLWithPath: directory).appendingPathComponent(name)
    return try FeedGenerator.write(options, to: target).feedPaths.values.map(\.path).sorted()
}

/// A small deterministic feed.
func feedOptions(apps: Int = 200, dirt: Bool = false) -> GeneratorOptions {
    var options = GeneratorOptions()
    options.apps = apps
    options.seed = 7
    options.priceStorefronts = 5
    options.dirt = dirt
    return options
}

/// Imports into PostgreSQL with rejects files in `scratch`.
func importPostgres(_ paths: [String], url: String, scratch: TemporaryDirectory, schema: String = "epf",
                    configure: (inout ImportOptions) -> Void = { _ in }) throws -> ImportReport {
    var options = ImportOptions()
    options.rejectsDirectory = scratch.file("pg.rejects")
    configure(&options)
    return try PostgresImporter(target: PostgresTarget(url: url, schema: schema), options: options).run(paths: paths)
}

/// Every row of a query as `a|b|c` (NULL for NULL), sorted, for exact comparisons.
func dump(_ url: String, _ sql: String) throws -> [String] {
    try PostgresConnection(url: url).query(sql).map { row in
        row.map { $0 ?? "NULL" }.joined(separator: "|")
    }.sorted()
}

/// The failed outcomes' messages, for expectation comments.
func failures(_ report: ImportReport) -> [String] {
    report.outcomes.filter { $0.status == .failed }.map { "\($0.table): \($0.message ?? "")" } + report.fileErrors
}
