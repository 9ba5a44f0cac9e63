import EPFImport
import EPFSchema
import EPFSQLite
import Foundation

/// The merge behind a full's price history on SQLite (see `PriceHistory`): the old and the new price table, each
/// read once in rowid order, compared item by item.
///
/// Rows are taken an item at a time: all the rows of one item, which must be contiguous and come in ascending item
/// order, are sorted by storefront and merged with the other table's rows of the same item. Apple's files and the
/// generator's list a table item by item, though not always in storefront order within an item, so a table's
/// rowid order serves without an index lookup per row. When a table breaks that (an item seen again after another,
/// a lower item after a higher one), `PriceTableOutOfOrder` is thrown, and the caller starts again reading
/// both tables through their key indexes (`ordered`), which always satisfies it.
struct PriceTableMerge<Old: PriceItemSource, New: PriceItemSource> {
    typealias Change = PriceChange

    /// One difference, in key order: the rows it compares (nil for the side without one) and the item rows they
    /// belong to (where their texts are).
    struct Found {
        let item: Int64
        let storefront: Int64
        let change: Change
        let was: PriceItemRows.Row?
        let now: PriceItemRows.Row?
        let oldRows: PriceItemRows
        let newRows: PriceItemRows

        /// Appends the old price, the new price (as stored) and the currency (the new row's, else the old's).
        func appendTexts(to writer: some PriceTextSink) {
            oldRows.withPrice(was) { writer.appendText($0) }
            newRows.withPrice(now) { writer.appendText($0) }
            if let now {
                newRows.withText(now.currency) { writer.appendText($0) }
            } else {
                oldRows.withText(was?.currency) { writer.appendText($0) }
            }
        }
    }

    typealias Record = (Found) throws -> Void

    private var old: Old
    private var new: New
    private var oldRows = PriceItemRows()
    private var newRows = PriceItemRows()

    init(old: Old, new: New) {
        self.old = old
        self.new = new
    }

    /// Runs the merge, calling `record` for each difference.
    mutating func run(_ record: Record) throws {
        var hasOld = try old.next(into: &oldRows)
        var hasNew = try new.next(into: &newRows)
        while hasOld || hasNew {
            if hasOld, !hasNew || oldRows.item < newRows.item {
                for row in oldRows.rows { try record(found(oldRows.item, row.storefront, .disappeared, row, nil)) }
                hasOld = try old.next(into: &oldRows)
            } else if !hasOld || newRows.item < oldRows.item {
                for row in newRows.rows { try record(found(newRows.item, row.storefront, .appeared, nil, row)) }
                hasNew = try new.next(into: &newRows)
            } else {
                try mergeItem(record)
                hasOld = try old.next(into: &oldRows)
                hasNew = try new.next(into: &newRows)
            }
        }
    }

    private func found(_ item: Int64, _ storefront: Int64, _ change: Change, _ was: PriceItemRows.Row?,
                       _ now: PriceItemRows.Row?) -> Found {
        Found(item: item, storefront: storefront, change: change, was: was, now: now, oldRows: oldRows,
              newRows: newRows)
    }

    /// Both tables have the item: its storefronts merged in order.
    private func mergeItem(_ record: Record) throws {
        let item = newRows.item
        let before = oldRows.rows, after = newRows.rows
        var left = 0, right = 0
        while left < before.count || right < after.count {
            if left < before.count, right == after.count || before[left].storefront < after[right].storefront {
                try record(found(item, before[left].storefront, .disappeared, before[left], nil))
                left += 1
            } else if left == before.count || after[right].storefront < before[left].storefront {
                try record(found(item, after[right].storefront, .appeared, nil, after[right]))
                right += 1
            } else {
                let was = before[left], now = after[right]
                if !oldRows.samePrice(was, as: now, in: newRows)
                    || !oldRows.sameText(was.currency, as: now.currency, in: newRows) {
                    try record(found(item, now.storefront, .changed, was, now))
                }
                left += 1
                right += 1
            }
        }
    }
}

/// The rows of one item read from a price table, sorted by storefront; their texts (the price as stored, the
/// currency) are copied into one buffer reused from item to item.
struct PriceItemRows: Sendable {
    struct Row: Sendable {
        let storefront: Int64
        /// Where a price stored as text (a table from before prices were numbers) and the currency are in
        /// `texts`, nil when NULL (or, for the price, stored as a number).
        let priceText: Range<Int>?
        let currency: Range<Int>?
        /// The price as SQLite reads it as a number: the REAL stored, or for a text `DecimalText` cannot compare
        /// (not a plain decimal) its value; nil for a plain decimal text (reading every text price as a number
        /// cost a tenth of the merge's reading) and for NULL.
        let number: Double?

        /// The price is NULL.
        var priceIsNull: Bool { priceText == nil && number == nil }
    }

    private(set) var item: Int64 = 0
    private(set) var rows: [Row] = []
    private var texts = TextArena()

    mutating func start(item: Int64) {
        self.item = item
        rows.removeAll(keepingCapacity: true)
        texts.removeAll()
    }

    /// Appends the row `statement` stands on (columns: key, storefront, price, currency).
    mutating func append(from statement: SQLiteStatement) {
        if statement.columnIsNumber(2) {
            rows.append(Row(storefront: statement.columnInt64(1), priceText: nil,
                            currency: texts.append(statement.columnText(3)), number: statement.columnDouble(2)))
            return
        }
        let price = statement.columnText(2)
        let number = price.flatMap { DecimalText.isPlain($0) ? nil : statement.columnDouble(2) }
        rows.append(Row(storefront: statement.columnInt64(1), priceText: texts.append(price),
                        currency: texts.append(statement.columnText(3)), number: number))
    }

    /// Whether a row's price equals one of `other`'s as a number (`CAST(... AS REAL)`; both NULL count as equal):
    /// the same text, or plain decimals of the same value, without converting; else as doubles.
    func samePrice(_ row: Row, as otherRow: Row, in other: PriceItemRows) -> Bool {
        if row.priceIsNull || otherRow.priceIsNull { return row.priceIsNull && otherRow.priceIsNull }
        guard let range = row.priceText, let otherRange = otherRow.priceText else {
            // One at least is a number: compare as numbers, as SQLite would.
            let number = row.number ?? texts.withText(row.priceText ?? 0..<0) { DecimalText.double($0) }
            let otherNumber = otherRow.number
                ?? other.texts.withText(otherRow.priceText ?? 0..<0) { DecimalText.double($0) }
            return number == otherNumber
        }
        return texts.withText(range) { text in
            other.texts.withText(otherRange) { otherText in
                if text.elementsEqual(otherText) { return true }
                if let equal = DecimalText.equal(text, otherText) { return equal }
                return (row.number ?? DecimalText.double(text)) == (otherRow.number ?? DecimalText.double(otherText))
            }
        }
    }

    /// Sorts the rows by storefront; throws `PriceTableOutOfOrder` when a storefront appears twice (the item's rows
    /// were not contiguous).
    mutating func sortByStorefront() throws {
        var sorted = true
        for index in rows.indices.dropFirst() where rows[index - 1].storefront >= rows[index].storefront {
            sorted = false
            break
        }
        guard !sorted else { return }
        if try placeByStorefront() { return }
        rows.sort { $0.storefront < $1.storefront }
        for index in rows.indices.dropFirst() where rows[index - 1].storefront == rows[index].storefront {
            throw PriceTableOutOfOrder()
        }
    }

    /// The first of the storefronts `placeByStorefront` places, and how many (Apple's run from 143441 to 143624).
    private static let firstPlaced: Int64 = 143_441
    private static let placedCount = 256

    /// Sorts rows whose storefronts are all among Apple's by placing each at its storefront's offset (one pass, no
    /// comparisons: the comparison sort was a tenth of a full's merge); false, leaving the rows as they are, when
    /// one is not. Throws `PriceTableOutOfOrder` for a storefront seen twice.
    private mutating func placeByStorefront() throws -> Bool {
        guard rows.count <= Self.placedCount else { return false }
        return try withUnsafeTemporaryAllocation(of: Int32.self, capacity: Self.placedCount) { slots in
            slots.initialize(repeating: -1)
            for (index, row) in rows.enumerated() {
                let offset = row.storefront &- Self.firstPlaced
                guard offset >= 0, offset < Int64(Self.placedCount) else { return false }
                guard slots[Int(offset)] < 0 else { throw PriceTableOutOfOrder() }
                slots[Int(offset)] = Int32(index)
            }
            var placed: [Row] = []
            placed.reserveCapacity(rows.count)
            for slot in slots where slot >= 0 { placed.append(rows[Int(slot)]) }
            rows = placed
            return true
        }
    }

    /// Whether a text of these rows equals one of `other`'s (both NULL counts as equal).
    func sameText(_ range: Range<Int>?, as otherRange: Range<Int>?, in other: PriceItemRows) -> Bool {
        texts.same(range, as: otherRange, in: other.texts)
    }

    /// Calls `body` with a row's price as text: a text as stored, a number as its plain decimal
    /// (`DecimalNumber.text`), nil for NULL.
    func withPrice(_ row: Row?, _ body: (UnsafeRawBufferPointer?) -> Void) {
        if let row, row.priceText == nil, let number = row.number {
            DecimalNumber.withText(number) { body($0) }
        } else {
            texts.withOptionalText(row?.priceText, body)
        }
    }

    /// Calls `body` with the bytes of a text of these rows, nil for NULL.
    func withText(_ range: Range<Int>?, _ body: (UnsafeRawBufferPointer?) -> Void) {
        texts.withOptionalText(range, body)
    }
}

/// What a merge found for one storefront of one item.
enum PriceChange: UInt8 {
    case changed, appeared, disappeared

    /// The word `epf_price_history.change` holds.
    var word: StaticString {
        switch self {
        case .changed: "changed"
        case .appeared: "appeared"
        case .disappeared: "disappeared"
        }
    }
}

/// A price table's rows are not grouped by item in ascending order (in the order it was read).
struct PriceTableOutOfOrder: Error {}

/// Where a merge takes a table's rows from, an item at a time.
protocol PriceItemSource {
    /// Reads the next item's rows into `rows`; false after the last. Throws `PriceTableOutOfOrder` when the
    /// table's items are not grouped in ascending order.
    mutating func next(into rows: inout PriceItemRows) throws -> Bool
}

/// Reads a price table an item at a time (see `PriceTableMerge`), through a statement made by `query`.
struct PriceTableReader: PriceItemSource {
    /// The statement a reader takes: the key, storefront, price and currency of `table`'s rows that have a key and
    /// a storefront, in rowid order or (`ordered`) by key and storefront. Rows without one are left out here, in
    /// SQL: checking two columns' types per row through the API cost a tenth of the reading.
    static func query(table: String, key: String, ordered: Bool) -> String {
        let key = SQLiteConnection.quote(key)
        let columns = ([key] + PriceRecording.columns.map(SQLiteConnection.quote)).joined(separator: ", ")
        return "SELECT \(columns) FROM \(SQLiteConnection.quote(table)) "
            + "WHERE \(key) IS NOT NULL AND storefront_id IS NOT NULL" + (ordered ? " ORDER BY \(key), storefront_id" : "")
    }

    private let statement: SQLiteStatement
    private var started = false
    /// Whether the statement stands on a row with a key, and that row's item.
    private var onRow = false
    private var item: Int64 = 0

    init(_ statement: SQLiteStatement) { self.statement = statement }

    private mutating func step() throws {
        onRow = false
        while try statement.step() {
            item = statement.columnInt64(0)
            onRow = true
            return
        }
    }

    mutating func next(into rows: inout PriceItemRows) throws -> Bool {
        if !started {
            started = true
            try step()
        }
        guard onRow else { return false }
        rows.start(item: item)
        repeat {
            rows.append(from: statement)
            try step()
        } while onRow && item == rows.item
        if onRow && item < rows.item { throw PriceTableOutOfOrder() }
        try rows.sortByStorefront()
        return true
    }
}
