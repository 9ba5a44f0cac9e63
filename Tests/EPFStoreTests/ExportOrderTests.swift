import EPFFormat
import EPFImport
@testable import EPFStore
import Testing

/// The rule that keeps exports applied out of date order from losing data (docs/import.md), case by case.
@Suite struct ExportOrderTests {
    private func full(_ day: String) -> AppliedExport { AppliedExport(day: day, full: true) }
    private func incremental(_ day: String) -> AppliedExport { AppliedExport(day: day, full: false) }

    private func decide(_ mode: ExportMode, _ day: String, _ history: [AppliedExport],
                        force: Bool = false) -> String {
        switch ExportOrderRule.decide(table: "application", mode: mode, day: day, history: history, force: force) {
        case .apply: "apply"
        case .superseded: "superseded"
        case .refused: "refused"
        }
    }

    @Test(arguments: [
        // A full: newer or the same as the newest applied export applies; older than the last full is superseded;
        // between the last full and a newer incremental it would undo that incremental: refused.
        (ExportMode.full, "20260105", [] as [String], "apply"),
        (.full, "20260112", ["F20260105", "I20260106"], "apply"),
        (.full, "20260105", ["F20260105"], "apply"),
        (.full, "20260105", ["F20260105", "I20260106"], "superseded"),
        (.full, "20260101", ["F20260105"], "superseded"),
        (.full, "20260106", ["F20260105", "I20260107"], "refused"),
        (.full, "20260106", ["I20260107"], "refused"),
        (.full, "20260107", ["F20260105", "I20260107"], "refused"),
        // An incremental: refused without a table, superseded before the last full, applied otherwise (rows are
        // replaced only by rows dated the same or later, so the order of incrementals does not matter).
        (.incremental, "20260106", [], "refused"),
        (.incremental, "20260106", ["F20260105"], "apply"),
        (.incremental, "20260106", ["F20260105", "I20260108"], "apply"),
        (.incremental, "20260105", ["F20260105"], "apply"),
        (.incremental, "20260104", ["F20260105"], "superseded"),
        (.incremental, "20260106", ["I20260105"], "apply"),
    ])
    func decisions(mode: ExportMode, day: String, history: [String], expected: String) {
        let applied = history.map { entry in
            entry.hasPrefix("F") ? full(String(entry.dropFirst())) : incremental(String(entry.dropFirst()))
        }
        #expect(decide(mode, day, applied) == expected, "\(mode) \(day) after \(history)")
        #expect(decide(mode, day, applied, force: true) == "apply")
    }

    @Test func failuresStayOpenUntilTheSameExportOrANewerFullIsApplied() {
        var id: Int64 = 0
        func entry(_ table: String, _ day: String, _ mode: String, _ outcome: String,
                   feed: String = "itunes") -> ImportFailures.Entry {
            id += 1
            return ImportFailures.Entry(id: id, table: table, location: "\(feed)\(day)/\(table)", source: "s\(id)",
                                        feed: feed, feedDate: day, exportDate: nil, mode: mode, outcome: outcome,
                                        finished: nil, message: "broken")
        }
        let failed = entry("application", "20260107", "INCREMENTAL", "failed")
        // Another table applied, or the same table from a later incremental: still open.
        #expect(ImportFailures.open([failed, entry("artist", "20260107", "INCREMENTAL", "applied")]).count == 1)
        #expect(ImportFailures.open([failed, entry("application", "20260108", "INCREMENTAL", "applied")]).count == 1)
        // The same export applied again, or a newer full: made up for.
        #expect(ImportFailures.open([failed, entry("application", "20260107", "INCREMENTAL", "applied")]).isEmpty)
        #expect(ImportFailures.open([failed, entry("application", "20260112", "FULL", "applied")]).isEmpty)
        // A file that failed before a table was named is made up for by its feed's export applied again.
        let archive = entry("", "20260107", "", "failed")
        #expect(ImportFailures.open([archive, entry("application", "20260107", "FULL", "applied",
                                                    feed: "pricing")]).count == 1)
        #expect(ImportFailures.open([archive, entry("application", "20260107", "FULL", "applied")]).isEmpty)
        // Tried twice, listed once.
        #expect(ImportFailures.open([failed, entry("application", "20260107", "INCREMENTAL", "failed")]).count == 1)
        // Any table of a newer full of the feed: the feed is replaced whole (a table it no longer ships is not
        // waited for); not a full of the same day (its other tables may be applied after the failed one), nor of
        // another feed.
        #expect(ImportFailures.open([failed, entry("artist", "20260112", "FULL", "applied")]).isEmpty)
        #expect(ImportFailures.open([failed, entry("artist", "20260107", "FULL", "applied")]).count == 1)
        #expect(ImportFailures.open([failed, entry("artist", "20260112", "FULL", "applied", feed: "pricing")])
            .count == 1)
    }

    @Test func failuresSayWhetherTheFileOrTheDiskWasAtFault() {
        func failure(_ reason: String) -> ImportFailure {
            ImportFailure(table: "application", location: "itunes20260112/application", feed: "itunes",
                          day: "20260112", mode: "FULL", when: nil, reason: reason)
        }
        let order = failure(ImportFailures.orderRefusalPrefix + "an incremental export updates a table ...")
        #expect(order.isOrderRefusal && !order.isStorageFailure)
        #expect(failure("SQLite error 778: disk I/O error - while executing COMMIT").isStorageFailure)
        #expect(failure("SQLite error 13: database or disk is full").isStorageFailure)
        #expect(failure("PostgreSQL: could not extend file \"base/16384/16385\": No space left on device")
            .isStorageFailure)
        let damaged = failure("itunes20260112/application: not an EPF table file: the first line ...")
        #expect(!damaged.isOrderRefusal && !damaged.isStorageFailure)
    }

    @Test func midnightIsTheUTCDay() {
        #expect(ImportFailures.midnight("19700101") == 0)
        #expect(ImportFailures.midnight("20260105") == 1_767_571_200_000)
        #expect(ImportFailures.midnight("20240229") == 1_709_164_800_000)
        #expect(ImportFailures.midnight("2026010") == nil)
        #expect(ImportFailures.midnight("20261301") == nil)
    }
}
