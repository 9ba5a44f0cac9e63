import EPFSQLite

/// The rank history's index by item (SQLite): which charts an item was in, so its history decodes only those
/// charts' lists. Written as days are recorded and never updated in place, so a day's writes land together at the
/// end of its chart table's rows instead of all over an index keyed by item.
///
/// `table` (`chart`, `export_date`, `first_id`, `list`), `WITHOUT ROWID`: the rows a recorded day of a chart table
/// wrote, each a list of items in id order with the charts (storefront, genre) each was in, cut into lists of at
/// most `listBytes(pageSize:)` bytes (an item with more charts makes a list of its own) keyed by their first item.
/// A day writes every item of its charts (a keyframe day, a day recorded out of order or again, a chart table's
/// first day) or only the items that entered a chart since the recorded day before it and were not in it on the
/// day's keyframe day (the newest day recorded after a day that wrote its rows here), and always at least one row
/// (an empty list when nothing entered).
///
/// What a reader may rely on: every item in a chart on a recorded day `d` is listed with that chart by some
/// recorded day of the same chart table in (`d` - `RankHistoryRead.keyframeSpan`, `d`], since a day that writes
/// entrants only follows a chain of such days back to its keyframe day, which wrote every item (a day recorded
/// later inside those two weeks is never a keyframe day: the keyframe day lies within two weeks before it). So a
/// day's rows name charts for the days [day, day + keyframe span), a superset of the presence: readers decode the
/// lists to find the ranks.
///
/// A list, every number an unsigned LEB128 varint: for each item, `zigzag(id - previous id)` (the first against
/// `first_id`), its number of charts `n`, then `n` times `zigzag(storefront - previous storefront)` (from 0 for
/// each item) and `zigzag(genre)`, the charts in (storefront, genre) order.
package enum RankItemIndex {
    package static let table = "epf_rank_items"

    package static let schema = """
        CREATE TABLE IF NOT EXISTS \(table) (
            chart INTEGER NOT NULL,
            export_date INTEGER NOT NULL,
            first_id INTEGER NOT NULL,
            list BLOB NOT NULL,
            PRIMARY KEY (chart, export_date, first_id)
        ) WITHOUT ROWID;
        """

    /// The size a list stays under in a database of `pageSize` bytes a page (unless one item is larger): small,
    /// as a reader decodes a list up to the item (a sixteenth of a 16 KB page: about 100 items), and always whole in
    /// its page (beyond about a quarter, SQLite moves a row's tail to an overflow page).
    package static func listBytes(pageSize: Int) -> Int { max(240, pageSize / 16) }

    /// One entry of the index: an item in a chart (storefront and genre) of a day.
    package struct Entry: Comparable, Sendable {
        package let id: Int64
        package let storefrontID: Int64
        package let genreID: Int64

        package init(id: Int64, storefrontID: Int64, genreID: Int64) {
            self.id = id
            self.storefrontID = storefrontID
            self.genreID = genreID
        }

        package static func < (lhs: Self, rhs: Self) -> Bool {
            (lhs.id, lhs.storefrontID, lhs.genreID) < (rhs.id, rhs.storefrontID, rhs.genreID)
        }
    }

    /// The lists of `entries` (sorted by `Entry`'s order, duplicates allowed: each is listed once), each with its
    /// first item, cut at `listBytes`.
    package static func lists(_ entries: [Entry], listBytes: Int) -> [(firstID: Int64, bytes: [UInt8])] {
        var lists: [(firstID: Int64, bytes: [UInt8])] = []
        var bytes: [UInt8] = []
        var firstID: Int64 = 0
        var previousID: Int64 = 0
        var start = entries.startIndex
        while start < entries.endIndex {
            let id = entries[start].id
            var end = start
            while end < entries.endIndex, entries[end].id == id { end += 1 }
            var item: [UInt8] = []
            var charts = 0
            var storefront: Int64 = 0
            for index in start..<end where index == start || entries[index] != entries[index - 1] {
                charts += 1
                RankListCodec.appendVarint(RankListCodec.zigzag(entries[index].storefrontID &- storefront),
                                           to: &item)
                RankListCodec.appendVarint(RankListCodec.zigzag(entries[index].genreID), to: &item)
                storefront = entries[index].storefrontID
            }
            if !bytes.isEmpty, bytes.count + item.count + 20 > listBytes {
                lists.append((firstID, bytes))
                bytes = []
            }
            if bytes.isEmpty {
                firstID = id
                previousID = id
            }
            RankListCodec.appendVarint(RankListCodec.zigzag(id &- previousID), to: &bytes)
            RankListCodec.appendVarint(UInt64(charts), to: &bytes)
            bytes += item
            previousID = id
            start = end
        }
        if !bytes.isEmpty { lists.append((firstID, bytes)) }
        return lists
    }

    /// Calls `body` with each item of a list whose first item is `firstID`, and its charts (storefront, genre),
    /// in order, until `body` returns false. Throws `RankListCodec.Malformed` for bytes that do not decode; never
    /// reads past them.
    package static func forEachItem(in bytes: UnsafeRawBufferPointer, firstID: Int64,
                                    _ body: (_ id: Int64, _ charts: [(storefrontID: Int64, genreID: Int64)]) -> Bool)
        throws(RankListCodec.Malformed) {
        var reader = RankListCodec.Reader(bytes: bytes)
        var id = firstID
        var charts: [(storefrontID: Int64, genreID: Int64)] = []
        while reader.offset < bytes.count {
            id &+= RankListCodec.unzigzag(try reader.varint())
            let count = try reader.count()
            charts.removeAll(keepingCapacity: true)
            var storefront: Int64 = 0
            for _ in 0..<count {
                storefront &+= RankListCodec.unzigzag(try reader.varint())
                charts.append((storefront, RankListCodec.unzigzag(try reader.varint())))
            }
            guard body(id, charts) else { return }
        }
    }

    /// The charts (storefront, genre) of item `id` in a list whose first item is `firstID`; [] when it is not
    /// listed. Throws as `forEachItem`.
    package static func charts(of id: Int64, in bytes: UnsafeRawBufferPointer,
                               firstID: Int64) throws(RankListCodec.Malformed) -> [(storefrontID: Int64,
                                                                                   genreID: Int64)] {
        var found: [(storefrontID: Int64, genreID: Int64)] = []
        try forEachItem(in: bytes, firstID: firstID) { item, charts in
            if item == id { found = charts }
            return item < id
        }
        return found
    }

    /// Every entry of a list whose first item is `firstID`, appended to `entries`. Throws as `forEachItem`.
    package static func appendEntries(of bytes: UnsafeRawBufferPointer, firstID: Int64,
                                      to entries: inout [Entry]) throws(RankListCodec.Malformed) {
        try forEachItem(in: bytes, firstID: firstID) { id, charts in
            for chart in charts {
                entries.append(Entry(id: id, storefrontID: chart.storefrontID, genreID: chart.genreID))
            }
            return true
        }
    }
}
