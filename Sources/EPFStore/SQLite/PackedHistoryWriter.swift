import EPFSchema
import EPFSQLite
import JSONText

/// Writes changes to SQLite's price history (`Layout.packedTable`): the changes of one item, added one
/// after another, go into one row (a JSON array of entries, built here as bytes), written when the next item
/// comes, when the row holds `Layout.entriesPerRow`, or at `finish`. Rows are numbered from `sequence`,
/// which it keeps up to date.
///
/// A change is recorded once per (item, storefront, export date): before writing a row, it drops the entries
/// already recorded for that item and export (an export applied again after an interruption), as the unique
/// index of one row per change did. That costs one lookup in the index of items per row, not per change (named:
/// without statistics SQLite would rather scan the export's rows by the table's key).
final class PackedHistoryWriter: PriceTextSink {
    private typealias Layout = PriceHistoryLayout

    private let connection: SQLiteConnection
    private let insert: SQLiteStatement
    private let recorded: SQLiteStatement
    private(set) var sequence: PriceHistorySequence
    /// The item of the row being built, its entries as a JSON array without its closing bracket, where each
    /// starts, their storefronts, and how many texts the last one has. One thread writes at a time, so their
    /// accesses go unchecked (see `PendingNotes`).
    @exclusivity(unchecked) private var item: Int64 = 0
    @exclusivity(unchecked) private var entries: [UInt8] = []
    @exclusivity(unchecked) private var entryStarts: [Int] = []
    @exclusivity(unchecked) private var storefronts: [Int64] = []
    @exclusivity(unchecked) private var texts = 0
    /// Where a text is escaped (by the project's one JSON writer) before it joins `entries`.
    @exclusivity(unchecked) private var escaped = JSONWriter(capacity: 256)

    init(_ connection: SQLiteConnection, date: Int64, kind: String, sequence: PriceHistorySequence) throws {
        self.connection = connection
        self.sequence = sequence
        insert = try connection.prepare("""
            INSERT INTO \(Layout.packedTable) (export_date, kind, seq, id, entries) VALUES (?1, ?2, ?3, ?4, ?5)
            """)
        recorded = try connection.prepare("""
            SELECT \(Layout.field(.storefront_id, of: "j.value"))
            FROM \(Layout.packedTable) AS p INDEXED BY \(Layout.packedItemIndex),
                json_each(p.entries) AS j
            WHERE p.id = ?3 AND p.kind = ?2 AND p.export_date = ?1
            """)
        for statement in [insert, recorded] {
            try statement.bind(date, at: 1)
            try statement.bind(kind, at: 2)
        }
    }

    /// Starts the entry of a change: `appendText` must then be called three times, for the old price, the new
    /// price and the currency (nil for NULL), in that order.
    func add(item: Int64, storefront: Int64, change: StaticString) throws {
        if !storefronts.isEmpty, item != self.item || storefronts.count >= Layout.entriesPerRow {
            try write()
        }
        self.item = item
        entries.append(storefronts.isEmpty ? UInt8(ascii: "[") : UInt8(ascii: ","))
        entryStarts.append(entries.count)
        storefronts.append(storefront)
        entries.append(UInt8(ascii: "["))
        appendInteger(storefront)
        entries.append(contentsOf: [UInt8(ascii: ","), UInt8(ascii: "\"")])
        entries.append(contentsOf: UnsafeBufferPointer(start: change.utf8Start, count: change.utf8CodeUnitCount))
        entries.append(UInt8(ascii: "\""))
        texts = 0
    }

    /// Appends a text of the current entry as a JSON string (null for nil), closing the entry after the third.
    func appendText(_ text: UnsafeRawBufferPointer?) {
        entries.append(UInt8(ascii: ","))
        if let text {
            escaped.removeAll()
            escaped.appendString(utf8: text.assumingMemoryBound(to: UInt8.self))
            escaped.withBytes { entries.append(contentsOf: $0) }
        } else {
            entries.append(contentsOf: [UInt8(ascii: "n"), UInt8(ascii: "u"), UInt8(ascii: "l"), UInt8(ascii: "l")])
        }
        texts += 1
        if texts == 3 { entries.append(UInt8(ascii: "]")) }
    }

    private func appendInteger(_ value: Int64) {
        if value < 0 { entries.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[19 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            entries.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[(20 - count)...]))
        }
    }

    /// Writes the row being built, without the entries of storefronts already recorded for its item and export.
    private func write() throws {
        guard !storefronts.isEmpty else { return }
        defer {
            entries.removeAll(keepingCapacity: true)
            entryStarts.removeAll(keepingCapacity: true)
            storefronts.removeAll(keepingCapacity: true)
        }
        try recorded.bind(item, at: 3)
        var already = Set<Int64>()
        while try recorded.step() {
            if let storefront = recorded.int64(at: 0) { already.insert(storefront) }
        }
        recorded.reset()
        var count = storefronts.count
        if !already.isEmpty {
            var kept: [UInt8] = []
            count = 0
            for (index, storefront) in storefronts.enumerated() where !already.contains(storefront) {
                let end = index + 1 < entryStarts.count ? entryStarts[index + 1] - 1 : entries.count
                kept.append(count == 0 ? UInt8(ascii: "[") : UInt8(ascii: ","))
                kept.append(contentsOf: entries[entryStarts[index]..<end])
                count += 1
            }
            guard count > 0 else { return }
            entries = kept
        }
        entries.append(UInt8(ascii: "]"))
        sequence.last += 1
        try insert.bind(sequence.last, at: 3)
        try insert.bind(item, at: 4)
        try entries.withUnsafeBytes { try insert.bind(text: $0, at: 5) }
        _ = try insert.step()
        insert.reset()
        sequence.rows += Int64(count)
    }

    /// Writes the last row.
    func finish() throws { try write() }
}

/// Where the texts of a change go (the old price, the new price, the currency, in that order; nil for NULL).
protocol PriceTextSink: AnyObject {
    func appendText(_ text: UnsafeRawBufferPointer?)
}
