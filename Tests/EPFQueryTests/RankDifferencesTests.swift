import EPFSchema
@testable import EPFQuery
import Testing

/// What `epf changes --kind rank` lists between two days of a chart, dirt included.
@Suite struct RankDifferencesTests {
    static func chart(_ ids: [Int64]) -> [RankedEntry] {
        ids.enumerated().map { RankedEntry(rank: $0.offset + 1, id: $0.element) }
    }

    static func listed(_ before: [RankedEntry], _ after: [RankedEntry], top: Int, moved: Int) -> [String] {
        ChartQueries.differences(from: before, to: after, top: top, moved: moved).map { difference in
            "\(difference.change) \(difference.id) \(difference.old.map(String.init) ?? "-") "
                + (difference.new.map(String.init) ?? "-")
        }
    }

    @Test func enteredLeftAndMovedWithinTheTop() {
        let before = Self.chart([1, 2, 3, 4, 5, 6])
        let after = Self.chart([3, 1, 7, 2, 6, 4])
        // Top 4: 3 moved 2 up, 7 is new, 2 moved 2 down, 4 fell to 6th (left the top, still ranked); 1 moved 1 (not
        // listed), 6 came up to 5th (still below the top), 5 left the chart but was not in the top.
        #expect(Self.listed(before, after, top: 4, moved: 2) == ["moved 3 3 1", "entered 7 - 3", "moved 2 2 4",
                                                                   "left 4 4 6"])
        // Every place, moves of 3 or more only.
        #expect(Self.listed(before, after, top: Int.max, moved: 3) == ["entered 7 - 3", "left 5 5 -"])
    }

    @Test func anAppRankedTwiceCountsAtItsBestAndTiesAreKept() {
        // Dirt: app 9 twice in one day, two apps sharing rank 2.
        let before = [RankedEntry(rank: 1, id: 8), RankedEntry(rank: 2, id: 9), RankedEntry(rank: 2, id: 10)]
        let after = [RankedEntry(rank: 1, id: 9), RankedEntry(rank: 2, id: 8), RankedEntry(rank: 3, id: 9),
                     RankedEntry(rank: 3, id: 10)]
        #expect(Self.listed(before, after, top: 10, moved: 1) == ["moved 9 2 1", "moved 8 1 2", "moved 10 2 3"])
        #expect(Self.listed(before, [], top: 10, moved: 1) == ["left 8 1 -", "left 9 2 -", "left 10 2 -"])
    }
}
