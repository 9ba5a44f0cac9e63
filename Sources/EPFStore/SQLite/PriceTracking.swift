import EPFSQLite
import Foundation

/// Price history of one SQLite table load (see `PriceHistory`); nil for tables that are not price tables, or when
/// the import does not record history.
final class PriceTracking {
    let table: String
    let kind: String
    let key: String
    /// Whether the table existed when the load began (the first load is the baseline).
    let existed: Bool
    private static let noted = "temp.epf_price_noted"

    init?(_ connection: SQLiteConnection, table: String, enabled: Bool) throws {
        guard enabled, let tracked = PriceHistory.tracked[table] else { return nil }
        self.table = table
        kind = tracked.kind
        key = tracked.key
        existed = try connection.tableExists(table)
    }

    private static func quote(_ name: String) -> String { SQLiteConnection.quote(name) }

    /// Whether a table has the key and the price columns.
    private func hasColumns(_ connection: SQLiteConnection, _ table: String) throws -> Bool {
        for column in [key] + PriceHistory.columns {
            guard try StoreDatabase.hasColumn(connection, table: table, column: column) else { return false }
        }
        return true
    }

    private static func createTable(_ connection: SQLiteConnection) throws {
        try PriceHistoryLayout.prepare(connection)
    }

    // MARK: Full exports

    /// Records what replacing the table with `staging` changes, in the caller's swap transaction: a merge of both
    /// tables read in key order (`PriceTableMerge`). Each is first read in rowid order, an item at a time
    /// (sequential, no index; in WAL mode on connections and threads of their own, `PriceTablePrefetch`); when a
    /// table is not grouped by item, the rows recorded so far are rolled back and both tables are read through
    /// their key indexes instead. Nothing is recorded on the first load or when either table lacks a price column.
    ///
    /// `background`, when given, is the same merge already run while the indexes were built
    /// (`startFullInBackground`): its changes are written as they are, or, when it found a table out of order, the
    /// merge goes straight to the key indexes.
    func recordFull(_ connection: SQLiteConnection, staging: String, exportDate: Int64?, feedDate: String?,
                    background: BackgroundPriceMerge? = nil) throws {
        guard existed, try connection.tableExists(table), try hasColumns(connection, table),
              try hasColumns(connection, staging) else { return }
        try Self.createTable(connection)
        let sequence = try PriceHistorySequence.load(connection)
        let date = ChangeLog.exportDate(exportDate, feedDate: feedDate)
        switch try background?.result() {
        case .found(let changes):
            try write(connection, date: date, sequence: sequence) { writer in
                try changes.replay { change in
                    try writer.add(item: change.item, storefront: change.storefront, change: change.change.word)
                    writer.appendText(change.oldPrice)
                    writer.appendText(change.newPrice)
                    writer.appendText(change.currency)
                }
            }
            return
        case .outOfOrder:
            try recordOrdered(connection, staging: staging, date: date, sequence: sequence)
            return
        case nil:
            break
        }
        let oldTable = PriceTableReader.query(table: table, key: key, ordered: false)
        let newTable = PriceTableReader.query(table: staging, key: key, ordered: false)
        try connection.execute("SAVEPOINT epf_price_merge")
        do {
            // In WAL mode both tables, committed and not touched by this transaction, are read on connections and
            // threads of their own while this one compares and writes. (Not in rollback-journal mode, during a
            // database's first build: there a reader's lock could hold up this writer's spills.)
            if let path = try Self.walDatabasePath(connection) {
                let old = PriceTablePrefetch(path: path, sql: oldTable)
                defer { old.stop() }
                let new = PriceTablePrefetch(path: path, sql: newTable)
                defer { new.stop() }
                try record(PriceTableMerge(old: old, new: new), connection, date: date, sequence: sequence)
            } else {
                try record(PriceTableMerge(old: PriceTableReader(try connection.prepare(oldTable)),
                                           new: PriceTableReader(try connection.prepare(newTable))),
                           connection, date: date, sequence: sequence)
            }
        } catch is PriceTableOutOfOrder {
            try connection.execute("ROLLBACK TO epf_price_merge")
            try recordOrdered(connection, staging: staging, date: date, sequence: sequence)
        }
        try connection.execute("RELEASE epf_price_merge")
    }

    /// The merge through both tables' key indexes, for tables not grouped by item.
    private func recordOrdered(_ connection: SQLiteConnection, staging: String, date: Int64,
                               sequence: PriceHistorySequence) throws {
        let oldOrdered = PriceTableReader.query(table: table, key: key, ordered: true)
        let newOrdered = PriceTableReader.query(table: staging, key: key, ordered: true)
        try record(PriceTableMerge(old: PriceTableReader(try connection.prepare(oldOrdered)),
                                   new: PriceTableReader(try connection.prepare(newOrdered))),
                   connection, date: date, sequence: sequence)
    }

    /// Whether a full load of this table records history, so its staging table must be committed at the end of
    /// each part for `startFullInBackground` to read it.
    var mergesFull: Bool { existed }

    /// Starts the full's merge on threads of their own (`BackgroundPriceMerge`), when it can run before the swap:
    /// in WAL mode, with both tables committed and holding the price columns. Nil otherwise (`recordFull` then
    /// merges in the swap).
    func startFullInBackground(_ connection: SQLiteConnection, staging: String) throws -> BackgroundPriceMerge? {
        guard existed, try connection.tableExists(table), try connection.tableExists(staging),
              try hasColumns(connection, table), try hasColumns(connection, staging),
              let path = try Self.walDatabasePath(connection) else { return nil }
        return BackgroundPriceMerge(path: path,
                                    oldSQL: PriceTableReader.query(table: table, key: key, ordered: false),
                                    newSQL: PriceTableReader.query(table: staging, key: key, ordered: false),
                                    directory: (path as NSString).deletingLastPathComponent)
    }

    /// The database's file when it is in WAL mode (its committed tables can then be read from connections of
    /// their own while this one writes), else nil.
    private static func walDatabasePath(_ connection: SQLiteConnection) throws -> String? {
        guard case .text(let mode) = try connection.scalar("PRAGMA journal_mode"), mode.lowercased() == "wal"
        else { return nil }
        return connection.mainFilename
    }

    /// Runs a merge, writing what it finds, numbered from `sequence`.
    private func record<Old, New>(_ merge: PriceTableMerge<Old, New>, _ connection: SQLiteConnection,
                                  date: Int64, sequence: PriceHistorySequence) throws {
        var merge = merge
        try write(connection, date: date, sequence: sequence) { writer in
            try merge.run { found in
                try writer.add(item: found.item, storefront: found.storefront, change: found.change.word)
                found.appendTexts(to: writer)
            }
        }
    }

    /// Writes the changes `add` gives a writer, numbered from `sequence`, and keeps the numbering.
    private func write(_ connection: SQLiteConnection, date: Int64, sequence: PriceHistorySequence,
                       _ add: (PackedHistoryWriter) throws -> Void) throws {
        let writer = try PackedHistoryWriter(connection, date: date, kind: kind, sequence: sequence)
        try add(writer)
        try writer.finish()
        try writer.sequence.save(connection)
    }

    // MARK: Incrementals

    /// Keys noted by the pre-update hook and not yet routed (every `flushEvery`). Only the load's thread touches
    /// it (the hook runs inside the load's statements), so its accesses go unchecked: dynamic exclusivity checks on
    /// it, the writer and the noted keys cost 0.03 s of a 1/64 daily's 0.58 s price table.
    @exclusivity(unchecked) private var pending = NotedChanges()
    private static let flushEvery = 4096
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
    var needsFlush: Bool { pending.count >= Self.flushEvery }

    /// Starts noting what an incremental changes: SQLite's pre-update hook reports each row the load inserts
    /// (`appeared`) and each update whose price or currency text differs, with the values before and after. Unlike
    /// triggers, the hook writes nothing, so the upserts need no statement journal (with triggers, each spilled to
    /// a temp file: 4.6 writes a row). `flush` routes the notes in batches:
    /// - a key's first note (`NotedKeys`) that is a change whatever happens next goes straight to the history: an
    ///   appearance, or plain decimal prices that differ (`DecimalText`) in the same currency. Nearly every note of
    ///   a real incremental is one; it costs one row of the history and no lookup.
    /// - any other note (a key noted before, a currency that changes, prices that are equal as numbers or not
    ///   plain) goes to a TEMP table that keeps, per key, the values before its first change and after its last;
    ///   `finishIncremental` settles it (a key written twice in one file, as Apple's files do, is one change).
    /// Call inside the load's transaction, so a refused load records nothing. Does nothing on the first load of
    /// the table.
    func beginIncremental(_ connection: SQLiteConnection) throws {
        guard existed, try hasColumns(connection, table) else { return }
        try Self.createTable(connection)
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
        guard let keyColumn = positions[key], let storefrontColumn = positions["storefront_id"],
              let priceColumn = positions["retail_price"], let currencyColumn = positions["currency_code"] else {
            return
        }
        noteBatch = try Self.noteStatement(connection, rows: NotedChanges.batch)
        noteOne = try Self.noteStatement(connection, rows: 1)
        seenKeys = NotedKeys()
        let tableName = Array(table.utf8CString)
        connection.setPreUpdateHook { [unowned self] change in
            guard strcmp(change.table, tableName) == 0, strcmp(change.database, "main") == 0 else { return }
            switch change.operation {
            case .insert:
                guard let item = change.new(keyColumn)?.int64, let storefront = change.new(storefrontColumn)?.int64
                else { return }
                Self.withPrice(change.new(priceColumn)) { newPrice in
                    pending.append(item: item, storefront: storefront, appeared: true, oldPrice: nil,
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
                        pending.append(item: item, storefront: storefront, appeared: false, oldPrice: before,
                                       oldCurrency: currencies.0, newPrice: after, newCurrency: currencies.1,
                                       plainChange: sameCurrency && differ)
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
    /// table. `exportDate` (the load's so far) and `feedDate` give the date of the history's rows.
    func flush(_ connection: SQLiteConnection, exportDate: Int64?, feedDate: String?) throws {
        guard let noteBatch, let noteOne, let seenKeys else { return }
        slow.removeAll(keepingCapacity: true)
        for index in 0..<pending.count {
            let note = pending[index]
            let revisited = seenKeys.insert(item: note.item, storefront: note.storefront)
            guard !revisited, note.appeared || note.plainChange else {
                slow.append(index)
                continue
            }
            if direct == nil {
                let date = ChangeLog.exportDate(exportDate, feedDate: feedDate)
                direct = try PackedHistoryWriter(connection, date: date, kind: kind, sequence: start)
                directDate = date
            }
            if let direct {
                try direct.add(item: note.item, storefront: note.storefront,
                               change: note.appeared ? "appeared" : "changed")
                pending.appendTexts(of: note, to: direct)
            }
        }
        var next = 0
        while slow.count - next >= NotedChanges.batch {
            for row in 0..<NotedChanges.batch {
                try pending.bind(slow[next + row], to: noteBatch, first: Int32(row * 7 + 1))
            }
            try noteBatch.step()
            noteBatch.reset()
            next += NotedChanges.batch
        }
        while next < slow.count {
            try pending.bind(slow[next], to: noteOne, first: 1)
            try noteOne.step()
            noteOne.reset()
            next += 1
        }
        if !slow.isEmpty { notedSlowly = true }
        pending.removeAll()
    }

    /// Stops noting (a refused load, or the end of one).
    func stop(_ connection: SQLiteConnection) {
        connection.setPreUpdateHook(nil)
        pending.removeAll()
        noteBatch = nil
        noteOne = nil
        seenKeys = nil
        direct = nil
    }

    /// Completes the incremental's history, before the load commits: writes what is still pending, settles the
    /// keys of the TEMP table (with a row of this load in the history: the values after their last note; the
    /// others recorded if their price as a number or their currency differs after the load from before it, or if
    /// they appeared).
    func finishIncremental(_ connection: SQLiteConnection, exportDate: Int64?, feedDate: String?) throws {
        guard noteBatch != nil else { return }
        try flush(connection, exportDate: exportDate, feedDate: feedDate)
        try direct?.finish()
        var sequence = direct?.sequence ?? start
        stop(connection)
        // The rows written so far carry the date known at the first flush: the load's own, since a record is
        // written only with a valid export_date, and the first valid one sets it (or the feed's date without one).
        let date = directDate ?? ChangeLog.exportDate(exportDate, feedDate: feedDate)
        if notedSlowly {
            try settleRevisited(connection, date: date, sequence: &sequence)
            try copyNoted(connection, date: date, sequence: &sequence)
        }
        try sequence.save(connection)
        try connection.execute("DROP TABLE IF EXISTS \(Self.noted)")
    }

    /// Records the TEMP table's keys whose price as a number or currency differs after the load from before it,
    /// and those that appeared, an item's in one row (or more, past `PriceHistory.entriesPerRow`), but not a key
    /// the history already has for this export (an export applied again after an interruption).
    private func copyNoted(_ connection: SQLiteConnection, date: Int64, sequence: inout PriceHistorySequence) throws {
        let entry = PriceHistory.entrySQL("storefront_id", "change", "old_price", "new_price", "new_currency")
        let copy = try connection.prepare("""
            INSERT INTO main.\(PriceHistory.packedTable) (export_date, seq, kind, id, entries)
            SELECT ?1, ?3 + row_number() OVER (ORDER BY id, part), ?2, id, json_group_array(\(entry))
            FROM (SELECT n.id, n.storefront_id, CASE n.appeared WHEN 1 THEN 'appeared' ELSE 'changed' END AS change,
                    n.old_price, n.new_price, n.new_currency,
                    (row_number() OVER (PARTITION BY n.id ORDER BY n.storefront_id) - 1)
                        / \(PriceHistory.entriesPerRow) AS part
                  FROM \(Self.noted) AS n
                  WHERE (n.appeared = 1 OR CAST(n.old_price AS REAL) IS NOT CAST(n.new_price AS REAL)
                        OR n.old_currency IS NOT n.new_currency)
                    AND NOT EXISTS (SELECT 1
                        FROM main.\(PriceHistory.packedTable) AS p INDEXED BY \(PriceHistory.packedItemIndex),
                            json_each(p.entries) AS j
                        WHERE p.id = n.id AND p.kind = ?2 AND p.export_date = ?1
                            AND \(PriceHistory.isEntry("j.value", of: "p.entries", storefront: "n.storefront_id")))
                  ORDER BY n.id, n.storefront_id)
            GROUP BY id, part
            """)
        try copy.bind([.integer(date), .text(kind), .integer(sequence.last)])
        _ = try copy.step()
        let written = Int64(connection.changes)
        guard written > 0 else { return }
        if case .integer(let count) = try connection.scalar("""
            SELECT CAST(total(json_array_length(entries)) AS INTEGER) FROM main.\(PriceHistory.packedTable)
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
        let packed = "main.\(PriceHistory.packedTable)"
        func field(_ field: PriceHistory.EntryField) -> String { PriceHistory.field(field, of: "j.value") }
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
            FROM \(Self.noted) AS n JOIN \(packed) AS p INDEXED BY \(PriceHistory.packedItemIndex)
                ON p.id = n.id AND p.kind = ?1 AND p.export_date = ?2 AND p.seq > ?3
                JOIN json_each(p.entries) AS j
                    ON \(PriceHistory.isEntry("j.value", of: "p.entries", storefront: "n.storefront_id"))
            """)
        try revisited.bind([.text(kind), .integer(date), .integer(start.last)])
        _ = try revisited.step()
        if case .integer(let removed) = try connection.scalar(
            "SELECT count(*) FROM temp.epf_price_revisited WHERE NOT keep") {
            sequence.rows -= removed
        }
        let entry = PriceHistory.entrySQL(field(.storefront_id), field(.change), field(.old_price), "r.new_price",
                                          "r.new_currency")
        let update = try connection.prepare("""
            UPDATE \(packed) SET entries = (
                SELECT json_group_array(CASE WHEN r.seq IS NULL THEN json(j.value) ELSE \(entry) END)
                FROM json_each(\(PriceHistory.packedTable).entries) AS j
                    LEFT JOIN temp.epf_price_revisited AS r
                        ON r.seq = \(PriceHistory.packedTable).seq AND r.position = j.key
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

/// What the pre-update hook noted of an incremental's price rows, until routed: keys and flags in an array, the
/// texts (prices as stored, currencies) in a `TextArena`, so noting a row makes no String.
struct NotedChanges {
    /// Rows per batched statement.
    static let batch = 64

    struct Note {
        let item: Int64
        let storefront: Int64
        /// The key was inserted.
        let appeared: Bool
        /// The prices are plain decimals that differ as numbers, in the same currency: a change whatever else.
        let plainChange: Bool
        fileprivate let oldPrice: Range<Int>?
        fileprivate let oldCurrency: Range<Int>?
        fileprivate let newPrice: Range<Int>?
        fileprivate let newCurrency: Range<Int>?
    }

    private var notes: [Note] = []
    private var texts = TextArena()

    var count: Int { notes.count }

    subscript(index: Int) -> Note { notes[index] }

    mutating func append(item: Int64, storefront: Int64, appeared: Bool, oldPrice: UnsafeRawBufferPointer?,
                         oldCurrency: UnsafeRawBufferPointer?, newPrice: UnsafeRawBufferPointer?,
                         newCurrency: UnsafeRawBufferPointer?, plainChange: Bool = false) {
        notes.append(Note(item: item, storefront: storefront, appeared: appeared, plainChange: plainChange,
                          oldPrice: texts.append(oldPrice), oldCurrency: texts.append(oldCurrency),
                          newPrice: texts.append(newPrice), newCurrency: texts.append(newCurrency)))
    }

    mutating func removeAll() {
        notes.removeAll(keepingCapacity: true)
        texts.removeAll()
    }

    /// Binds note `index` to parameters `first` ... `first + 6` (the TEMP table's columns, in order).
    func bind(_ index: Int, to statement: SQLiteStatement, first: Int32) throws {
        let note = notes[index]
        try statement.bind(note.item, at: first)
        try statement.bind(note.storefront, at: first + 1)
        try texts.bind(note.oldPrice, to: statement, at: first + 2)
        try texts.bind(note.oldCurrency, to: statement, at: first + 3)
        try texts.bind(note.newPrice, to: statement, at: first + 4)
        try texts.bind(note.newCurrency, to: statement, at: first + 5)
        try statement.bind(note.appeared ? 1 : 0, at: first + 6)
    }

    /// Appends a note's texts as a history entry has them: the old and new price, and the currency after.
    func appendTexts(of note: Note, to writer: PackedHistoryWriter) {
        texts.withOptionalText(note.oldPrice) { writer.appendText($0) }
        texts.withOptionalText(note.newPrice) { writer.appendText($0) }
        texts.withOptionalText(note.newCurrency) { writer.appendText($0) }
    }
}
