import EPFSQLite
import Foundation

/// An incremental load's price history: SQLite's pre-update hook notes each row the upserts insert or whose price
/// changes (`begin`), the notes are routed in batches as rows are written (`flush`), and `finish` settles them in
/// the load's transaction. The hook is installed on the load's connection and removed by `stop`, at the latest
/// when this object goes.
final class IncrementalPriceNotes {
    private typealias Layout = PriceHistoryLayout

    private let priced: PricedTable
    /// The load's connection, whose pre-update hook this installs (`begin`) and removes (`stop`, or `deinit`).
    private let connection: SQLiteConnection
    /// Whether the hook is installed.
    private var hooked = false
    /// Keys noted by the pre-update hook and not yet routed (every `flushEvery`), shared with the hook.
    private let pending = PendingNotes()
    private static let flushEvery = 4096
    private static let noted = "temp.epf_price_noted"
    private var noteBatch: SQLiteStatement?
    private var noteOne: SQLiteStatement?
    /// The keys noted so far: a key's first note may go straight to the history, its later ones may not.
    private var seenKeys: NotedKeys?
    /// Writes first notes straight to the history, with `directDate`, the export date when the first was written.
    private var direct: PackedHistoryWriter?
    private var directDate: Int64?
    /// The history's numbering when this load began: the rows after its `last` are this load's.
    private var start = PriceHistorySequence(last: 0, rows: 0)
    /// Whether notes went to the TEMP table.
    private var notedSlowly = false
    /// The indexes of the notes of one flush that go to the TEMP table.
    private var slow: [Int] = []

    /// Whether `flush` has rows to write (checked after every row the load writes).
    @inline(__always)
    var needsFlush: Bool { pending.notes.count >= Self.flushEvery }

    init(_ priced: PricedTable, connection: SQLiteConnection) {
        self.priced = priced
        self.connection = connection
    }

    /// The hook is this object's: it goes with it.
    deinit { stop() }

    private var table: String { priced.table }
    private var kind: String { priced.kind }

    /// Starts noting what an incremental changes: SQLite's pre-update hook reports each row the load inserts
    /// (`appeared`) and each update whose price or currency text differs, with the values before and after. Unlike
    /// triggers, the hook writes nothing, so the upserts need no statement journal (with triggers, each spilled to
    /// a temp file: 4.6 writes a row). `flush` routes the notes in batches:
    /// - a key's first note (`NotedKeys`) that is a change whatever happens next goes straight to the history: an
    ///   appearance, or plain decimal prices that differ (`DecimalText`) in the same currency. Nearly every note of
    ///   a real incremental is one; it costs one row of the history and no lookup.
    /// - any other note (a key noted before, a currency that changes, prices that are equal as numbers or not
    ///   plain) goes to a TEMP table that keeps, per key, the values before its first change and after its last;
    ///   `finish` settles it (a key written twice in one file, as Apple's files do, is one change).
    /// Call inside the load's transaction, so a refused load records nothing. Does nothing on the first load of
    /// the table.
    func begin(_ connection: SQLiteConnection) throws {
        guard priced.existed, try priced.hasColumns(connection, table) else { return }
        try Layout.prepare(connection)
        start = try PriceHistorySequence.load(connection)
        try connection.execute("""
            DROP TABLE IF EXISTS \(Self.noted);
            CREATE TEMP TABLE epf_price_noted (id INTEGER NOT NULL, storefront_id INTEGER NOT NULL,
                old_price TEXT, old_currency TEXT, new_price TEXT, new_currency TEXT, appeared INTEGER NOT NULL,
                PRIMARY KEY (id, storefront_id)) WITHOUT ROWID;
            """)
        var positions: [String: Int32] = [:]
        for row in try connection.query("SELECT cid, name FROM pragma_table_info(?1)", [.text(table)]) {
            if case .integer(let cid) = row[0], case .text(let name) = row[1] { positions[name] = Int32(cid) }
        }
        guard let keyColumn = positions[priced.key], let storefrontColumn = positions["storefront_id"],
              let priceColumn = positions["retail_price"], let currencyColumn = positions["currency_code"] else {
            return
        }
        noteBatch = try Self.noteStatement(connection, rows: NotedChanges.batch)
        noteOne = try Self.noteStatement(connection, rows: 1)
        seenKeys = NotedKeys()
        let tableName = Array(table.utf8CString)
        let pending = self.pending
        hooked = true
        connection.setPreUpdateHook { change in
            guard strcmp(change.table, tableName) == 0, strcmp(change.database, "main") == 0 else { return }
            switch change.operation {
            case .insert:
                guard let item = change.new(keyColumn)?.int64, let storefront = change.new(storefrontColumn)?.int64
                else { return }
                Self.withPrice(change.new(priceColumn)) { newPrice in
                    pending.notes.append(item: item, storefront: storefront, appeared: true, oldPrice: nil,
                                         oldCurrency: nil, newPrice: newPrice,
                                         newCurrency: change.new(currencyColumn)?.textBytes)
                }
            case .update:
                guard let oldPrice = change.old(priceColumn), let newPrice = change.new(priceColumn),
                      let oldCurrency = change.old(currencyColumn), let newCurrency = change.new(currencyColumn),
                      let item = change.old(keyColumn)?.int64, let storefront = change.old(storefrontColumn)?.int64
                else { return }
                let currencies = (oldCurrency.textBytes, newCurrency.textBytes)
                let sameCurrency = TextArena.same(currencies.0, currencies.1)
                // Prices are REAL: equal numbers are the same price, whatever text the files gave them.
                let numbers = (oldPrice.realValue, newPrice.realValue)
                if let before = numbers.0, let after = numbers.1, sameCurrency && before == after { return }
                oldPrice.withDecimalText { before in
                    newPrice.withDecimalText { after in
                        guard !sameCurrency || !TextArena.same(before, after) else { return }
                        let differ = if let old = numbers.0, let new = numbers.1 { old != new } else {
                            DecimalText.certainlyDiffer(before, after)
                        }
                        pending.notes.append(item: item, storefront: storefront, appeared: false,
                                             oldPrice: before, oldCurrency: currencies.0, newPrice: after,
                                             newCurrency: currencies.1, plainChange: sameCurrency && differ)
                    }
                }
            case .delete:
                return
            }
        }
    }

    /// Hands `body` a price the hook reports as text (`PreUpdateValue.withDecimalText`), nil when NULL or absent.
    private static func withPrice(_ value: PreUpdateValue?, _ body: (UnsafeRawBufferPointer?) -> Void) {
        guard let value else { return body(nil) }
        value.withDecimalText(body)
    }

    /// The upsert of `rows` notes: a key's first note keeps its values before, its last gives those after.
    private static func noteStatement(_ connection: SQLiteConnection, rows: Int) throws -> SQLiteStatement {
        let values = (0..<rows).map { row in
            "(" + (1...7).map { "?\(row * 7 + $0)" }.joined(separator: ", ") + ")"
        }
        return try connection.prepare("""
            INSERT INTO \(Self.noted) VALUES \(values.joined(separator: ", "))
            ON CONFLICT (id, storefront_id) DO UPDATE SET new_price = excluded.new_price,
                new_currency = excluded.new_currency
            """)
    }

    /// Routes the keys noted so far: first notes that are certainly changes to the history, the others to the TEMP
    /// table. `exportDate` (the load's so far) gives the date of the history's rows.
    func flush(_ connection: SQLiteConnection, exportDate: Int64?) throws {
        guard let noteBatch, let noteOne, let seenKeys else { return }
        slow.removeAll(keepingCapacity: true)
        let pending = self.pending
        for index in 0..<pending.notes.count {
            let note = pending.notes[index]
            let revisited = seenKeys.insert(item: note.item, storefront: note.storefront)
            guard !revisited, note.appeared || note.plainChange else {
                slow.append(index)
                continue
            }
            if direct == nil {
                let date = priced.date(exportDate: exportDate)
                direct = try PackedHistoryWriter(connection, date: date, kind: kind, sequence: start)
                directDate = date
            }
            if let direct {
                try direct.add(item: note.item, storefront: note.storefront,
                               change: note.appeared ? "appeared" : "changed")
                pending.notes.appendTexts(of: note, to: direct)
            }
        }
        var next = 0
        while slow.count - next >= NotedChanges.batch {
            for row in 0..<NotedChanges.batch {
                try pending.notes.bind(slow[next + row], to: noteBatch, first: Int32(row * 7 + 1))
            }
            try noteBatch.step()
            noteBatch.reset()
            next += NotedChanges.batch
        }
        while next < slow.count {
            try pending.notes.bind(slow[next], to: noteOne, first: 1)
            try noteOne.step()
            noteOne.reset()
            next += 1
        }
        if !slow.isEmpty { notedSlowly = true }
        pending.notes.removeAll()
    }

    /// Stops noting (a refused load, or the end of one): removes the hook.
    func stop() {
        if hooked {
            connection.setPreUpdateHook(nil)
            hooked = false
        }
        pending.notes.removeAll()
        noteBatch = nil
        noteOne = nil
        seenKeys = nil
        direct = nil
    }

    /// Completes the incremental's history, before the load commits: writes what is still pending, settles the
    /// keys of the TEMP table (with a row of this load in the history: the values after their last note; the
    /// others recorded if their price as a number or their currency differs after the load from before it, or if
    /// they appeared).
    func finish(_ connection: SQLiteConnection, exportDate: Int64?) throws {
        guard noteBatch != nil else { return }
        try flush(connection, exportDate: exportDate)
        try direct?.finish()
        var sequence = direct?.sequence ?? start
        stop()
        // The rows written so far carry the date known at the first flush: the load's own, since a record is
        // written only with a valid export_date, and the first valid one sets it (or the feed's date without one).
        let date = directDate ?? priced.date(exportDate: exportDate)
        if notedSlowly {
            try settleRevisited(connection, date: date, sequence: &sequence)
            try copyNoted(connection, date: date, sequence: &sequence)
        }
        try sequence.save(connection)
        try connection.execute("DROP TABLE IF EXISTS \(Self.noted)")
    }

    /// Records the TEMP table's keys whose price as a number or currency differs after the load from before it,
    /// and those that appeared, an item's in one row (or more, past `Layout.entriesPerRow`), but not a key
    /// the history already has for this export (an export applied again after an interruption).
    private func copyNoted(_ connection: SQLiteConnection, date: Int64, sequence: inout PriceHistorySequence) throws {
        let entry = Layout.entrySQL("storefront_id", "change", "old_price", "new_price", "new_currency")
        let copy = try connection.prepare("""
            INSERT INTO main.\(Layout.packedTable) (export_date, seq, kind, id, entries)
            SELECT ?1, ?3 + row_number() OVER (ORDER BY id, part), ?2, id, json_group_array(\(entry))
            FROM (SELECT n.id, n.storefront_id, CASE n.appeared WHEN 1 THEN 'appeared' ELSE 'changed' END AS change,
                    n.old_price, n.new_price, n.new_currency,
                    (row_number() OVER (PARTITION BY n.id ORDER BY n.storefront_id) - 1)
                        / \(Layout.entriesPerRow) AS part
                  FROM \(Self.noted) AS n
                  WHERE (n.appeared = 1 OR CAST(n.old_price AS REAL) IS NOT CAST(n.new_price AS REAL)
                        OR n.old_currency IS NOT n.new_currency)
                    AND NOT EXISTS (SELECT 1
                        FROM main.\(Layout.packedTable) AS p INDEXED BY \(Layout.packedItemIndex),
                            json_each(p.entries) AS j
                        WHERE p.id = n.id AND p.kind = ?2 AND p.export_date = ?1
                            AND \(Layout.isEntry("j.value", of: "p.entries", storefront: "n.storefront_id")))
                  ORDER BY n.id, n.storefront_id)
            GROUP BY id, part
            """)
        try copy.bind([.integer(date), .text(kind), .integer(sequence.last)])
        _ = try copy.step()
        let written = Int64(connection.changes)
        guard written > 0 else { return }
        if case .integer(let count) = try connection.scalar("""
            SELECT CAST(total(json_array_length(entries)) AS INTEGER) FROM main.\(Layout.packedTable)
            WHERE export_date = ?1 AND seq > ?2
            """, [.integer(date), .integer(sequence.last)]) {
            sequence.rows += count
        }
        sequence.last += written
    }

    /// The TEMP table's keys whose first note went to the history as an entry of this load: the entry takes the
    /// values after the key's last note, or goes when they equal those before its first (as a number, same
    /// currency); a row left without entries goes too. The TEMP table keeps the others.
    private func settleRevisited(_ connection: SQLiteConnection, date: Int64,
                                 sequence: inout PriceHistorySequence) throws {
        let packed = "main.\(Layout.packedTable)"
        func field(_ field: Layout.EntryField) -> String { Layout.field(field, of: "j.value") }
        try connection.execute("""
            DROP TABLE IF EXISTS temp.epf_price_revisited;
            CREATE TEMP TABLE epf_price_revisited (seq INTEGER NOT NULL, position INTEGER NOT NULL, id INTEGER,
                storefront_id INTEGER, new_price TEXT, new_currency TEXT, keep INTEGER,
                PRIMARY KEY (seq, position)) WITHOUT ROWID;
            """)
        let revisited = try connection.prepare("""
            INSERT INTO temp.epf_price_revisited
            SELECT p.seq, j.key, n.id, n.storefront_id, n.new_price, n.new_currency,
                \(field(.change)) = 'appeared'
                    OR CAST(\(field(.old_price)) AS REAL) IS NOT CAST(n.new_price AS REAL)
                    OR \(field(.currency)) IS NOT n.new_currency
            FROM \(Self.noted) AS n JOIN \(packed) AS p INDEXED BY \(Layout.packedItemIndex)
                ON p.id = n.id AND p.kind = ?1 AND p.export_date = ?2 AND p.seq > ?3
                JOIN json_each(p.entries) AS j
                    ON \(Layout.isEntry("j.value", of: "p.entries", storefront: "n.storefront_id"))
            """)
        try revisited.bind([.text(kind), .integer(date), .integer(start.last)])
        _ = try revisited.step()
        if case .integer(let removed) = try connection.scalar(
            "SELECT count(*) FROM temp.epf_price_revisited WHERE NOT keep") {
            sequence.rows -= removed
        }
        let entry = Layout.entrySQL(field(.storefront_id), field(.change), field(.old_price), "r.new_price",
                                          "r.new_currency")
        let update = try connection.prepare("""
            UPDATE \(packed) SET entries = (
                SELECT json_group_array(CASE WHEN r.seq IS NULL THEN json(j.value) ELSE \(entry) END)
                FROM json_each(\(Layout.packedTable).entries) AS j
                    LEFT JOIN temp.epf_price_revisited AS r
                        ON r.seq = \(Layout.packedTable).seq AND r.position = j.key
                WHERE r.seq IS NULL OR r.keep)
            WHERE export_date = ?1 AND seq IN (SELECT seq FROM temp.epf_price_revisited)
            """)
        try update.bind([.integer(date)])
        _ = try update.step()
        let remove = try connection.prepare("""
            DELETE FROM \(packed)
            WHERE export_date = ?1 AND seq IN (SELECT seq FROM temp.epf_price_revisited)
                AND json_array_length(entries) = 0
            """)
        try remove.bind([.integer(date)])
        _ = try remove.step()
        try connection.execute("""
            DELETE FROM \(Self.noted)
                WHERE (id, storefront_id) IN (SELECT id, storefront_id FROM temp.epf_price_revisited);
            DROP TABLE temp.epf_price_revisited;
            """)
    }
}

/// The notes the pre-update hook made and `IncrementalPriceNotes.flush` has not routed yet: held by the hook's
/// closure and by the notes, so the hook needs no reference back to its owner. Only the load's thread touches it
/// (the hook runs inside the load's statements), so its accesses go unchecked: dynamic exclusivity checks on it,
/// the writer and the noted keys cost 0.03 s of a 1/64 daily's 0.58 s price table.
final class PendingNotes {
    @exclusivity(unchecked) var notes = NotedChanges()
}
