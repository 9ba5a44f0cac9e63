import Foundation
import Testing

/// `epf generate --scale` and the phase times of `epf sync --json`, through the built binary.
@Suite struct ScaleCLITests {
    private static let phaseNames = ["reading", "inserting", "indexes", "committing", "searchIndex", "lookupDocuments",
                                     "checkpoint", "other", "priceHistory", "rankHistory"]

    private static func report(_ result: RunResult) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any] ?? [:]
    }

    @Test func scaledMirrorSyncsAndReportsItsPhases() throws {
        let work = try WorkDirectory()
        let mirror = work.file("mirror")
        let generated = try runEPF(["generate", mirror, "--layout", "v5", "--scale", "1/20000", "--json"],
                                   in: work.path)
        #expect(generated.status == 0, "\(generated.stderr)")
        let tables = Self.report(generated)["tables"] as? [[String: Any]] ?? []
        let priceRows = tables.first { $0["table"] as? String == "application_price" }?["rows"] as? Int
        #expect(priceRows == 100 * 175)
        #expect(FileManager.default.fileExists(atPath: mirror + "/pricing20260105/application_price.tbz.md5"))

        let database = work.file("epf.sqlite")
        let full = try runEPF(["sync", mirror, "--db", database, "--json", "--quiet"], in: work.path)
        #expect(full.status == 0, "\(full.stderr)")
        let fullReport = Self.report(full)
        let phases = fullReport["phases"] as? [String: Double] ?? [:]
        #expect(Set(phases.keys) == Set(Self.phaseNames), "\(phases)")
        #expect((phases["reading"] ?? 0) > 0 && (phases["inserting"] ?? 0) > 0 && (phases["indexes"] ?? 0) > 0)
        #expect((phases["lookupDocuments"] ?? 0) > 0 && (phases["searchIndex"] ?? 0) > 0)
        let total = fullReport["seconds"] as? Double ?? 0
        let cpu = fullReport["phasesCPU"] as? [String: Double] ?? [:]
        #expect(Set(cpu.keys) == ["loading", "indexes", "committing", "searchIndex", "lookupDocuments", "checkpoint",
                                  "total", "priceHistory", "rankHistory"], "\(cpu)")
        #expect((cpu["loading"] ?? 0) > 0 && (cpu["total"] ?? 0) >= (cpu["loading"] ?? 0))
        // priceHistory and rankHistory are parts of committing, counted there too; this import records neither.
        #expect(phases["priceHistory"] == 0 && phases["rankHistory"] == 0 && cpu["priceHistory"] == 0)
        #expect(phases.values.reduce(0, +) - (phases["priceHistory"] ?? 0) - (phases["rankHistory"] ?? 0)
                    <= total + 0.01
                    && phases.values.allSatisfy { $0 >= 0 })

        let day = work.file("mirror/incremental/20260106")
        let incremental = try runEPF(["generate", day, "--layout", "v5", "--scale", "1/20000", "--incremental",
                                      "--day", "1"], in: work.path)
        #expect(incremental.status == 0, "\(incremental.stderr)")
        let daily = try runEPF(["sync", mirror, "--db", database, "--json", "--quiet"], in: work.path)
        #expect(daily.status == 0, "\(daily.stderr)")
        let dailyReport = Self.report(daily)
        let outcomes = dailyReport["outcomes"] as? [[String: Any]] ?? []
        #expect(outcomes.contains {
            $0["table"] as? String == "application_price" && $0["mode"] as? String == "INCREMENTAL"
        })
        // The day's charts come as FULL tables (Apple ships popularity daily): they alone build indexes.
        #expect(outcomes.contains {
            $0["table"] as? String == "free_application_popularity_per_genre" && $0["mode"] as? String == "FULL"
        })
        let dailyPhases = dailyReport["phases"] as? [String: Double] ?? [:]
        #expect((dailyPhases["inserting"] ?? 0) > 0)

        let human = try runEPF(["sync", mirror, "--db", work.file("human.sqlite"), "--quiet"], in: work.path)
        #expect(human.status == 0 && human.stdout.contains("phases: reading "), "\(human.stdout)")
    }

    @Test(arguments: [["--scale", "1/16", "--apps", "500"], ["--scale", "1/16", "--price-storefronts", "3"],
                      ["--scale", "zero"], ["--scale", "1/100000"], ["--scale", "0"]])
    func badScaleOptionsAreUsageErrors(arguments: [String]) throws {
        let work = try WorkDirectory()
        let result = try runEPF(["generate", work.file("out")] + arguments, in: work.path)
        #expect(result.status == 64, "\(arguments): \(result.stderr)")
    }
}
