/// The model of later full exports: which apps each one holds, and what it changes in a database.
///
/// A later full export (`GeneratorOptions.week` 1 ... 52, 7 days apart) holds the catalogue of its day: the first
/// full's apps and those incrementals added up to then, with their changes, minus the apps removed by then
/// (about 1 % of the apps at each week, never apps 0 ... 7). Only `application` and the tables keyed by app
/// follow removals; popularity ranks the apps in the store on the export's day (`Popularity`).
extension FeedModel {
    /// The options of the full export `week` weeks after the first (0: the first).
    package func fullOptions(week: Int) -> GeneratorOptions {
        var full = options
        full.week = week
        return full
    }

    /// Every data record of one table file of the full export of `week` (see `forEachRecord`).
    package func records(_ table: String, week: Int) throws -> [[String?]] {
        var result: [[String?]] = []
        try forEachRecord(table, exportOptions: fullOptions(week: week)) { result.append($0) }
        return result
    }

    /// The Apple IDs of the apps in the store on `day` (days after the first full; a full of week w is day 7w).
    package func appIDs(presentAtDay day: Int) -> Set<Int64> {
        let plan = Plan(options)
        return Set((0..<appCount(throughDay: day)).filter { plan.isPresent($0, atDay: day) }.map(plan.appID))
    }

    /// The Apple IDs of the apps the incremental of `day` holds: those changed on days 1 ... `day` and those
    /// added up to it, while in the store on that day.
    package func appIDs(inIncremental day: Int) -> Set<Int64> {
        let plan = Plan(incrementalOptions(day: day))
        let changed = (0..<plan.apps).filter { plan.isPresent($0, atDay: day) && plan.appRevision($0, day: day) > 0 }
        let added = (plan.apps..<plan.appsAtExport).filter { plan.isPresent($0, atDay: day) }
        return Set((changed + added).map(plan.appID))
    }

    /// What the full export of `week` changes in the `application` table of a database that holds the full
    /// export of week `week - 1`, then the incrementals of `incrementalDays`: the ids that disappear and those
    /// that appear.
    package func fullChanges(week: Int, afterIncrementals incrementalDays: [Int] = []) -> (removed: Set<Int64>,
                                                                                          added: Set<Int64>) {
        var before = appIDs(presentAtDay: 7 * (week - 1))
        for day in incrementalDays { before.formUnion(appIDs(inIncremental: day)) }
        let after = appIDs(presentAtDay: 7 * week)
        return (before.subtracting(after), after.subtracting(before))
    }

    /// What the incremental of `day` records for `application` in a database holding the full export of `week`
    /// and no incremental since: the ids it updates and those it adds.
    package func incrementalChanges(day: Int, afterWeek week: Int) -> (updated: Set<Int64>, added: Set<Int64>) {
        let written = appIDs(inIncremental: day)
        let held = appIDs(presentAtDay: 7 * week)
        return (written.intersection(held), written.subtracting(held))
    }
}
