import EPFFormat
import EPFGenerator
import Testing

/// Later full exports (`week`): apps removed and added, and the model of what changed.
@Suite struct LaterFullTests {
    static func model() -> FeedModel {
        var options = GeneratorOptions()
        options.apps = 1000
        options.seed = 5
        options.priceStorefronts = 2
        return FeedModel(options)
    }

    static func ids(_ records: [[String?]], column: Int = 1) -> Set<Int64> {
        Set(records.compactMap { $0[column].flatMap { Int64($0) } })
    }

    @Test func aLaterFullHoldsTheAppsPresentOnItsDay() throws {
        let model = Self.model()
        let first = try model.records("application", week: 0)
        #expect(first == (try model.records("application")))
        #expect(Self.ids(first) == model.appIDs(presentAtDay: 0))
        let later = try model.records("application", week: 2)
        #expect(Self.ids(later) == model.appIDs(presentAtDay: 14))
        let date = String(model.fullOptions(week: 2).exportDate)
        #expect(later.allSatisfy { $0[0] == date })
        #expect(model.fullOptions(week: 2).dateStamp == "20260119")
        // The tables keyed by app follow the removals.
        #expect(Self.ids(try model.records("application_price", week: 2)) == model.appIDs(presentAtDay: 14))
        #expect(Self.ids(try model.records("genre_application", week: 2), column: 2) == model.appIDs(presentAtDay: 14))
    }

    @Test func removalsAndAdditionsBetweenFulls() throws {
        let model = Self.model()
        let changes = model.fullChanges(week: 1)
        let firstIDs = model.appIDs(presentAtDay: 0)
        // About 1 % of the apps leave at each week; the fixed apps never do.
        #expect((3...30).contains(changes.removed.count))
        #expect(changes.removed.isSubset(of: firstIDs))
        #expect(FeedModel.fixedApps.allSatisfy { !changes.removed.contains(model.appID($0.index)) })
        // The apps added by the incrementals of days 1 ... 7, less any removed again on day 7.
        let addedByIncrementals = Set((model.appCount()..<model.appCount(throughDay: 7)).map(model.appID))
        #expect(changes.added.isSubset(of: addedByIncrementals) && changes.added.count > 7 * model.newAppsPerDay - 5)
        #expect(changes.added.isDisjoint(with: firstIDs))
        // After an incremental, its additions are no longer new to the full.
        let afterDay1 = model.fullChanges(week: 1, afterIncrementals: [1])
        #expect(afterDay1.added == changes.added.subtracting(model.appIDs(inIncremental: 1)))
    }

    @Test func incrementalsBeforeTheFirstWeekAreUnchangedByRemovals() throws {
        let model = Self.model()
        // Removals happen at weekly fulls: the incremental of day 6 still holds every app it would without them.
        let ids = Self.ids(try model.records("application", day: 6))
        #expect(ids == model.appIDs(inIncremental: 6))
        #expect(Set((model.appCount()..<model.appCount(throughDay: 6)).map(model.appID)).isSubset(of: ids))
        // After a week, a removed app is in no incremental.
        let removed = model.fullChanges(week: 1).removed
        #expect(Self.ids(try model.records("application", day: 8)).isDisjoint(with: removed))
    }
}
