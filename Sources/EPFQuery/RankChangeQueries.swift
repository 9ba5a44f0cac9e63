import EPFFormat
import EPFSQLite
import EPFSchema
import JSONText

/// One change of a chart between two recorded days: an app entered its top, left it, or moved within it.
package struct RankChange: Sendable, Equatable {
    /// The app's Apple ID.
    package let id: Int64
    /// The app's name, nil when the catalogue lacks the app.
    package let title: String?
    /// `entered`, `left` or `moved`.
    package let change: String
    /// The chart (`free`, `paid`, `free-ipad`, `paid-ipad`).
    package let chart: String
    package let country: String
    package let storefrontId: Int64
    package let genreId: Int64
    /// The rank on the recorded day before (nil: not in the chart then) and on the day (nil: not in it now).
    package let oldRank: Int?
    package let newRank: Int?
    /// The day (export date, ms) and the recorded day before it that it is compared with.
    package let exportDate: Int64
    package let previousDate: Int64
    /// The change's position among the day's changes, from 1: the page cursor's second half.
    package let sequence: Int64

    /// "entered", "left", "up 3", "down 12".
    package var text: String {
        guard change == "moved", let oldRank, let newRank else { return change }
        return ChartMove(from: oldRank, to: newRank).text
    }

    /// `{"id", "kind": "app", "change", "exportDate", "previousDate", "chart", "country", "storefrontId", "genreId",
    /// "oldRank", "newRank", "trackName"}`.
    package var json: JSONValue {
        .object([
            ("id", .int(id)), ("kind", .string("app")), ("change", .string(change)),
            ("exportDate", .string(EPFValues.isoTimestamp(milliseconds: exportDate))),
            ("previousDate", .string(EPFValues.isoTimestamp(milliseconds: previousDate))), ("chart", .string(chart)),
            ("country", .string(country)), ("storefrontId", .int(storefrontId)), ("genreId", .int(genreId)),
            ("oldRank", oldRank.map { .int(Int64($0)) } ?? .null),
            ("newRank", newRank.map { .int(Int64($0)) } ?? .null),
            ("trackName", title.map { .string($0) } ?? .null),
        ])
    }
}

/// One page of `ChartQueries.rankPage`.
package struct RankChangePage: Sendable {
    package let changes: [RankChange]
    /// The cursor of the next page, nil on the last one.
    package let nextCursor: String?

    /// `{"resultCount": N, "changes": [...], "nextCursor": "..." or null}`.
    package var json: JSONValue {
        .object([("resultCount", .int(Int64(changes.count))), ("changes", .array(changes.map(\.json))),
                 ("nextCursor", nextCursor.map { .string($0) } ?? .null)])
    }
}

/// What changed in a chart from each recorded day to the next (`epf changes --kind rank`, `/v1/changes?kind=rank`).
extension ChartQueries {
    /// Places an app must move by to be listed when `moved` is not given.
    package static let defaultMoved = 5

    /// The changes of one chart (`country`'s storefront, `kind`, `genre`) on each recorded day from `since`
    /// (`YYYY-MM-DD`) on, against the chart's recorded day before (a day without data is skipped, never read as an
    /// empty chart; the first day ever recorded has nothing to compare with): apps that entered the top `top`
    /// (every place when nil), left it, or moved within it by `moved` places or more. By day, then new rank
    /// (entered and moved), then old rank (left); at most `limit` after `cursor` (a page's `nextCursor`). Throws
    /// `QueryError.badArgument` naming `since`, `country` (also a storefront `--storefronts` left out), `top`,
    /// `moved`, `limit` or `cursor`, and `ChartUnavailable` for a chart the database does not hold or a database
    /// without rank history.
    package func rankPage(since: String, country: String, kind: ChartKind, genre: Int64 = ChartQueries.allApps,
                          top: Int?, moved: Int = ChartQueries.defaultMoved, limit: Int, cursor: String?) throws
        -> RankChangePage {
        let after = try ChangeQueries.pagePosition(since: try ChangeQueries.changesSince(since, kind: nil),
                                                   limit: limit, cursor: cursor)
        if let top, !(1...Self.maximumLimit).contains(top) {
            throw QueryError.badArgument(name: "top", message: "must be from 1 to \(Self.maximumLimit), got \(top)")
        }
        guard (1...Self.maximumLimit).contains(moved) else {
            throw QueryError.badArgument(name: "moved", message: "must be from 1 to \(Self.maximumLimit), got \(moved)")
        }
        return try reading {
            let (code, storefront) = try chartStorefront(country)
            guard let history = RankHistoryRead(connection, tables: tables) else {
                throw ChartUnavailable(description: "rank changes need rank history, which this database does not "
                                       + "record: imports record it with --history ranks")
            }
            let source = try self.source(kind, history: history)
            let key = RankChartKey(chart: source.recorded, storefrontID: storefront, genreID: genre)
            var changes: [RankChange] = []
            var kept: (day: Int64, entries: [RankedEntry])?
            days: for day in try history.recordedDays(chart: source.recorded, since: after.date) {
                guard let previous = try history.recordedDay(before: day, chart: source.recorded),
                      let entries = try history.chart(key, on: day) else { continue }
                let today = try split(entries, source: source, storefront: storefront)
                let before = try kept.flatMap { $0.day == previous ? $0.entries : nil }
                    ?? split(try history.chart(key, on: previous) ?? [], source: source, storefront: storefront)
                kept = (day, today)
                let differences = Self.differences(from: before, to: today, top: top ?? Int.max, moved: moved)
                for (index, difference) in differences.enumerated() {
                    let sequence = Int64(index + 1)
                    guard (day, sequence) > (after.date, after.sequence) else { continue }
                    changes.append(RankChange(
                        id: difference.id, title: try appTitle(of: difference.id), change: difference.change,
                        chart: kind.rawValue, country: code, storefrontId: storefront, genreId: genre,
                        oldRank: difference.old, newRank: difference.new, exportDate: day, previousDate: previous,
                        sequence: sequence))
                    if changes.count > limit { break days }
                }
            }
            guard changes.count > limit else { return RankChangePage(changes: changes, nextCursor: nil) }
            changes.removeLast()
            let last = changes[changes.count - 1]
            return RankChangePage(changes: changes,
                                  nextCursor: ChangeCursor.encode(date: last.exportDate, sequence: last.sequence))
        }
    }

    /// The apps that entered the top `top` from `before` to `after`, left it, or moved within it by `moved` places
    /// or more: entered and moved by new rank, then left by old rank. An app ranked twice counts at its best.
    static func differences(from before: [RankedEntry], to after: [RankedEntry], top: Int, moved: Int)
        -> [(id: Int64, change: String, old: Int?, new: Int?)] {
        let old = Self.bestRanks(before)
        let new = Self.bestRanks(after)
        var listed: Set<Int64> = []
        var found: [(id: Int64, change: String, old: Int?, new: Int?)] = []
        for entry in after where entry.rank <= top && listed.insert(entry.id).inserted {
            let rank = new[entry.id] ?? entry.rank
            guard let previous = old[entry.id], previous <= top else {
                found.append((entry.id, "entered", old[entry.id], rank))
                continue
            }
            if abs(previous - rank) >= moved { found.append((entry.id, "moved", previous, rank)) }
        }
        for entry in before where entry.rank <= top && listed.insert(entry.id).inserted {
            // Not listed above: not in the top now (out of the chart, or ranked below the top).
            found.append((entry.id, "left", old[entry.id] ?? entry.rank, new[entry.id]))
        }
        return found
    }

    private static func bestRanks(_ entries: [RankedEntry]) -> [Int64: Int] {
        var ranks: [Int64: Int] = [:]
        for entry in entries where entry.rank < ranks[entry.id] ?? Int.max { ranks[entry.id] = entry.rank }
        return ranks
    }
}
