import EPFImport
@testable import EPFStore
import Testing

/// `--storefronts` / `--languages` parsing and the rule that keeps a database's selection (`RowSelection.settle`).
@Suite struct RowSelectionTests {
    @Test func storefrontsAreISOCodesOrIdsInAnyCase() throws {
        let request = try RowSelection.Request(storefronts: " US,gbr ,143462,us", languages: nil)
        #expect(request.storefronts == .only([143441, 143444, 143462]))
        #expect(request.languages == nil)
        #expect(try RowSelection.Request(storefronts: "ALL", languages: "all")
                    == RowSelection.Request(storefronts: .all, languages: .all))
        #expect(RowSelection.describe([143441, 999]) == "us (143441), 999")
        #expect(RowSelection.describe(nil as [Int]?) == "all")
    }

    @Test func languagesAreNormalized() throws {
        let request = try RowSelection.Request(storefronts: nil, languages: "EN,zh_Hant,ja-JP")
        #expect(request.languages == .only(["en", "ja-jp", "zh-hant"]))
    }

    @Test func unreadableValuesAreRefusedAndATrailingCommaIsNot() throws {
        for (storefronts, languages) in [("narnia", nil), ("us,xx", nil), (",", nil), ("-5", nil), (nil, "e n"),
                                         (nil, "toolongsubtag"), (nil, "ja--jp"), (nil, " , ")]
            as [(String?, String?)] {
            #expect(throws: ImportError.self, "\(String(describing: storefronts)) \(String(describing: languages))") {
                try RowSelection.Request(storefronts: storefronts, languages: languages)
            }
        }
        #expect(try RowSelection.Request(storefronts: "us,", languages: "en,")
                    == RowSelection.Request(storefronts: .only([143441]), languages: .only(["en"])))
    }

    @Test func aDatabaseKeepsItsSelectionAndRefusesAnotherUnlessForced() throws {
        let kept = RowSelection(storefronts: [143441], languages: ["en"])
        // Not given: the database's stays.
        #expect(try RowSelection.settle(RowSelection.Request(), stored: kept, databaseHasTables: true, force: false)
                    == kept)
        // The same again is fine.
        let same = RowSelection.Request(storefronts: .only([143441]), languages: .only(["en"]))
        #expect(try RowSelection.settle(same, stored: kept, databaseHasTables: true, force: false) == kept)
        // Another one: refused while the database holds tables, unless forced; taken on an empty database.
        let other = RowSelection.Request(storefronts: .all)
        #expect(throws: ImportError.self) {
            try RowSelection.settle(other, stored: kept, databaseHasTables: true, force: false)
        }
        let wider = RowSelection(storefronts: nil, languages: ["en"])
        #expect(try RowSelection.settle(other, stored: kept, databaseHasTables: true, force: true) == wider)
        #expect(try RowSelection.settle(other, stored: kept, databaseHasTables: false, force: false) == wider)
    }

    @Test func theStoredFormRoundTrips() {
        let selection = RowSelection(storefronts: [143441, 143462], languages: ["en", "zh-hant"])
        let stored = RowSelection(storedStorefronts: selection.storedStorefronts,
                                  storedLanguages: selection.storedLanguages)
        #expect(stored == selection)
        #expect(RowSelection(storedStorefronts: nil, storedLanguages: nil).keepsEverything)
    }

    /// A dry run over a database that keeps a selection leaves out what the import would, and is refused as the
    /// import would be, without recording anything.
    @Test func aDryRunAppliesTheSelectionTheDatabaseKeeps() throws {
        let scratch = try Scratch()
        let database = scratch.file("epf.sqlite")
        let rows = (1...3).flatMap { item in ["143441", "143444"].map { ["\(item)", "1.99", "USD", $0] } }
        let full = try IncrementalPriceHistoryTests.write(scratch.path, date: "20260105", mode: "FULL", rows: rows)
        let us = try RowSelection.Request(storefronts: "us", languages: nil)
        let gb = try RowSelection.Request(storefronts: "gb", languages: nil)
        #expect(try importPaths([full], database: database) { $0.selectionRequest = us }.succeeded)
        let settings = try dump(database, "SELECT name, value FROM epf_settings")

        let dry = try importPaths([full], database: database) {
            $0.dryRun = true
            $0.force = true
        }
        #expect(dry.outcomes.first?.leftOut == 3, "the gb rows, as the import would leave them out")
        #expect(throws: ImportError.self) {
            try importPaths([full], database: database) {
                $0.dryRun = true
                $0.selectionRequest = gb
            }
        }
        #expect(try dump(database, "SELECT name, value FROM epf_settings") == settings)
    }
}
