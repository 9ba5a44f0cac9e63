import EPFFormat
import EPFImport
import EPFSchema

/// A chart table's rows as a full load writes them, gathered by storefront and genre for `RankDayRecorder`, so the
/// recording need not read the new table again (that scan and its grouping were about a third of the recording).
///
/// Values are read as `RowBinder` binds them (an empty or unparsable integer is NULL: rows with a NULL storefront,
/// genre, rank or id are left out, as the table's own reading does). What the load writes is what the table holds
/// only while no row replaces another: the load says so (`TableLoad` drops the gathered rows when duplicate keys
/// were removed or the load resumed), and the day is then read from the table.
struct RankRows {
    private let storefront: Int
    private let genre: Int
    private let rank: Int
    private let id: Int

    /// The entries so far by storefront and genre, in the order met (a group's entries not yet sorted).
    private(set) var groups: [RankChartKey: [RankedEntry]] = [:]
    private let chart: RankChart
    /// The storefront and genre of the rows being gathered into `current` (a file is mostly grouped already).
    private var currentKey: (storefront: Int64, genre: Int64)?
    private var current: [RankedEntry] = []

    /// Gathering for `chart` from records of `schema`'s columns (the first `fileColumns` of them in the file); nil
    /// when a column the chart needs is not an integer column of the file (then only the table says what it holds).
    init?(chart: RankChart, schema: TableSchema, fileColumns: Int) {
        func column(_ name: String) -> Int? {
            guard let index = schema.index(of: name), index < fileColumns,
                  schema.columns[index].type == .integer else { return nil }
            return index
        }
        guard !schema.hasIntegerRowidKey, let storefront = column("storefront_id"), let genre = column("genre_id"),
              let rank = column(chart.rankColumn), let id = column(chart.idColumn) else { return nil }
        self.chart = chart
        self.storefront = storefront
        self.genre = genre
        self.rank = rank
        self.id = id
    }

    /// A record the load wrote (its values bound as `RowBinder` binds them).
    @inline(__always)
    mutating func add(_ record: EPFRecord) {
        guard let storefrontID = Self.integer(record.field(storefront)),
              let genreID = Self.integer(record.field(genre)),
              let rankValue = Self.integer(record.field(rank)),
              let itemID = Self.integer(record.field(id)) else { return }
        if let key = currentKey, key.storefront != storefrontID || key.genre != genreID {
            flush()
        }
        if currentKey == nil { currentKey = (storefrontID, genreID) }
        current.append(RankedEntry(rank: Int(clamping: rankValue), id: itemID))
    }

    /// The entries of every storefront and genre gathered.
    mutating func finish() -> [RankChartKey: [RankedEntry]] {
        flush()
        defer { groups = [:] }
        return groups
    }

    private mutating func flush() {
        guard let key = currentKey else { return }
        groups[RankChartKey(chart: chart, storefrontID: key.storefront, genreID: key.genre), default: []]
            .append(contentsOf: current)
        current.removeAll(keepingCapacity: true)
        currentKey = nil
    }

    @inline(__always)
    private static func integer(_ field: UnsafeRawBufferPointer) -> Int64? {
        field.isEmpty ? nil : EPFValues.integer(field)
    }
}
