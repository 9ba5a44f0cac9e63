import EPFTestSupport
import Foundation
import Glibc
import Testing

/// End to end: `epf import` of generated feeds with dirt (and a table of extremes: the largest and smallest ids,
/// NULLs, multi-line CJK and emoji text; and a table of zero rows), price history and the change log on, then
/// `epf export`; pyarrow and DuckDB (Tests/clients/parquet_compare.py) must read every table's files with the
/// manifest's types and find exactly the database's rows, and a DuckDB aggregate over the files must equal
/// `epf sql`'s over the database.
@Suite struct ExportCLITests {
    static var python: String {
        ProcessInfo.processInfo.environment["EPF_TEST_PYTHON"]
            ?? EPFBinary.packageRoot.appendingPathComponent(".build/test-venv/bin/python").path
    }

    /// Runs Tests/clients/parquet_compare.py: its status and output.
    static func compare(_ arguments: [String]) throws -> (Int32, String) {
        #expect(FileManager.default.isExecutableFile(atPath: python),
                "no \(python): run scripts/prerequisites --test (it installs pyarrow and duckdb)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [EPFBinary.packageRoot.appendingPathComponent("Tests/clients/parquet_compare.py").path]
            + arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let (stdout, stderr) = BuiltEPF.readToEnd(process, output: output, errors: errors)
        return (process.terminationStatus, String(decoding: stdout + stderr, as: UTF8.self))
    }

    /// A feed directory of two tables the catalogue does not know: extremes, and none at all.
    static func writeExtremes(_ work: WorkDirectory) throws -> String {
        let field = "\u{1}"
        let end = "\u{2}\n"
        func header(_ columns: [String], _ types: [String], key: String) -> String {
            "#" + columns.joined(separator: field) + end + "#primaryKey:\(key)" + end + "#dbTypes:"
                + types.joined(separator: field) + end + "#exportMode:FULL" + end
        }
        let rows = [
            ["1767744000000", "9223372036854775807", "line one\nline two 日本語 😀", "1225000.000"],
            ["1767744000000", "-9223372036854775808", "", "0.99"],
            ["1767744000000", "0", "中文\r\nüñí 👍🏽", ""],
        ]
        let extremes = header(["export_date", "item_id", "name", "price"],
                              ["BIGINT", "BIGINT", "VARCHAR(1000)", "DECIMAL(9,3)"], key: "item_id")
            + rows.map { $0.joined(separator: field) + end }.joined() + "#recordsWritten:3" + end
        let empty = header(["export_date", "thing_id", "label"], ["BIGINT", "BIGINT", "VARCHAR(10)"], key: "thing_id")
            + "#recordsWritten:0" + end
        try work.write("extra/itunes20260107/zz_extremes", Array(extremes.utf8))
        try work.write("extra/itunes20260107/zz_empty", Array(empty.utf8))
        return work.file("extra/itunes20260107")
    }

    /// A database of a dirty full export, its next incremental, and the extremes.
    static func database(_ work: WorkDirectory) throws -> String {
        let common = ["--dirt", "--only", "application,application_price,application_detail,storefront"]
        let full = try ImportCLITests.generate(work, name: "full", apps: 400, seed: 7, storefronts: 8, extra: common)
        let daily = try ImportCLITests.generate(work, name: "daily", apps: 400, seed: 7, storefronts: 8,
                                                extra: common + ["--incremental", "--day", "1"])
        let database = work.file("epf.sqlite")
        for (paths, extra) in [([full + "/itunes20260105", full + "/pricing20260105"], ["--history", "prices"]),
                               ([daily + "/itunes20260106", daily + "/pricing20260106"], []),
                               ([try writeExtremes(work)], [])] {
            let run = try runEPF(["import"] + paths + ["--db", database, "--quiet"] + extra, in: work.path)
            #expect(run.status == 0 || run.status == 65, "\(run.stderr)")
        }
        return database
    }

    @Test func everyTableReadsBackExactlyInPyarrowAndDuckDB() throws {
        let work = try WorkDirectory()
        let database = try Self.database(work)
        let out = work.file("parquet")
        let run = try runEPF(["export", out, "--db", database], in: work.path)
        #expect(run.status == 0, "\(run.stderr)")
        for table in ["application", "application_price", "application_detail", "storefront", "epf_changes",
                      "epf_price_history", "zz_extremes", "zz_empty"] {
            #expect(run.stdout.contains("\(table): "), "\(table) not exported: \(run.stdout)")
        }
        #expect(!run.stdout.contains("note:"), "\(run.stdout)")
        #expect(run.stdout.contains("zz_empty: 0 rows, 1 file"))
        #expect(FileManager.default.fileExists(atPath: out + "/application_price/storefront=US/part-0.parquet"))
        let (status, output) = try Self.compare([database, out])
        #expect(status == 0 && output.hasPrefix("ok 8 "), "\(output)")
        // No staging directory or temporary file is left.
        let hidden = try FileManager.default.contentsOfDirectory(atPath: out).filter { $0.hasPrefix(".") }
        #expect(hidden.isEmpty, "\(hidden)")

        // DuckDB's aggregate over the files equals epf sql's over the database (max as a number: the text trap).
        let sql = try runEPF(["sql", "SELECT storefront_id, count(*), printf('%.3f', sum(retail_price)), "
                              + "printf('%.3f', max(CAST(retail_price AS REAL))) FROM application_price "
                              + "GROUP BY 1 ORDER BY 1", "--csv", "--db", database], in: work.path)
        #expect(sql.status == 0, "\(sql.stderr)")
        let (aggregateStatus, duck) = try Self.compare([database, out, "--aggregate"])
        #expect(aggregateStatus == 0, "\(duck)")
        let sqlLines = sql.stdout.split(separator: "\r\n").dropFirst().map(String.init)
        #expect(sqlLines.count >= 8 && sqlLines == duck.split(separator: "\n").map(String.init),
                "\(sql.stdout)\n\(duck)")
    }

    @Test func someTablesSinceADateUncompressedReplaceOnlyThemselves() throws {
        let work = try WorkDirectory()
        let database = try Self.database(work)
        let out = work.file("parquet")
        // --json (before the command too): one JSON document, the same tables as the manifest.
        let first = try runEPF(["--json", "export", out, "--db", database, "--tables", "storefront"], in: work.path)
        #expect(first.status == 0, "\(first.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(first.stdout.utf8)) as? [String: Any]
        let reported = (report?["tables"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        #expect(reported == ["storefront"] && (report?["rows"] as? Int ?? 0) > 0, "\(first.stdout)")
        let run = try runEPF(["export", out, "--db", database, "--tables", "epf_changes,epf_price_history",
                              "--since", "2026-01-06", "--compression", "none"], in: work.path)
        #expect(run.status == 0, "\(run.stderr)")
        let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out
                                                                                  + "/_manifest.json")))
        let entries = (manifest as? [String: Any])?["tables"] as? [[String: Any]]
        let tables = entries?.compactMap { $0["name"] as? String }
        #expect(tables == ["epf_changes", "epf_price_history"])
        #expect((manifest as? [String: Any])?["since"] as? String == "2026-01-06T00:00:00Z")
        let (status, output) = try Self.compare([database, out])
        #expect(status == 0 && output.hasPrefix("ok 2 "), "\(output)")
        // The earlier export of storefront is still there.
        #expect(FileManager.default.fileExists(atPath: out + "/storefront/part-0.parquet"))
    }

    @Test func aFailedExportLeavesThePreviousFilesWhole() throws {
        let work = try WorkDirectory()
        let database = try Self.database(work)
        let out = work.file("parquet")
        #expect(try runEPF(["export", out, "--db", database], in: work.path).status == 0)
        let file = out + "/application_detail/part-0.parquet"
        let before = try Data(contentsOf: URL(fileURLWithPath: file))
        // A file size limit (RLIMIT_FSIZE, set by util-linux's prlimit) makes the write of the table's file fail
        // partway (EFBIG; epf ignores SIGXFSZ). Written uncompressed, the file is well over the 640 KB limit; the
        // limit stays above 512 KB because ThreadSanitizer's runtime writes a 512 KB file of its own at start-up
        // (/tmp/tsan.rodata.PID) and a sanitized epf dies of SIGBUS before main when that write comes up short.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
        process.arguments = ["--fsize=\(640 * 1024)", EPFBinary.url.path, "export", out, "--db", database,
                             "--tables", "application_detail", "--compression", "none"]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = Pipe()
        try process.run()
        process.waitUntilExit()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 73, "\(message)")
        #expect(message.contains("write failed"), "\(message)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == before)
        let hidden = try FileManager.default.contentsOfDirectory(atPath: out).filter { $0.hasPrefix(".") }
        #expect(hidden.isEmpty, "\(hidden)")
    }

    @Test func usageErrors() throws {
        let work = try WorkDirectory()
        let database = work.file("epf.sqlite")
        let imported = try runEPF(["import", try Self.writeExtremes(work), "--db", database, "--quiet"], in: work.path)
        #expect(imported.status == 0, "\(imported.stderr)")
        for (arguments, text) in [([String](), "give the directory"), (["x", "--since", "2026-13-01"], "not a date"),
                                  (["x", "--tables", "nope"], "has no table 'nope'"), (["x", "y"], "unexpected"),
                                  (["x", "--compression", "zstd"], "not gzip or none")] {
            let run = try runEPF(["export"] + arguments + ["--db", database], in: work.path)
            #expect(run.status == 64 && run.stderr.contains(text), "\(arguments): \(run.stderr)")
        }
        let missing = try runEPF(["export", "x", "--db", work.file("none.sqlite")], in: work.path)
        #expect(missing.status == 66, "\(missing.stderr)")
    }
}
