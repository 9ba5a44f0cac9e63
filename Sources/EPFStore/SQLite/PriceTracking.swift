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
        try connection.execute(PriceHistory.sqliteSchema)
    }

    /// Writes recorded changes to `epf_price_history`, `batch` rows per statement (one statement per row cost
    /// twice as much per change: binding, stepping and resetting are per statement), numbering them from
    /// `sequence`, which it keeps up to date. Parameters 1 and 2, the export date and the kind, are shared by every
    /// row.
    private struct HistoryWriter {
        static let batch = 64
        private static let perRow = 7
        private let connection: SQLiteConnection
        private let batched: SQLiteStatement
        private var pending = 0
        private(set) var sequence: PriceHistorySequence

        init(_ connection: SQLiteConnection, date: Int64, kind: String, sequence: PriceHistorySequence) throws {
            self.connection = connection
            self.sequence = sequence
            batched = try Self.statement(connection, rows: Self.batch)
            try batched.bind(date, at: 1)
            try batched.bind(kind, at: 2)
        }

        private static func statement(_ connection: SQLiteConnection, rows: Int) throws -> SQLiteStatement {
            let values = (0..<rows).map { row in
                "(?1, ?2, " + (0..<perRow).map { "?\(3 + row * perRow + $0)" }.joined(separator: ", ") + ")"
            }
            return try connection.prepare("""
                INSERT OR IGNORE INTO \(PriceHistory.table)
                    (export_date, kind, seq, id, storefront_id, change, old_price, new_price, currency)
                VALUES \(values.joined(separator: ", "))
                """)
        }

        /// Adds a change: `bindTexts` binds the old price, new price and currency to the parameters it is given.
        mutating func add(item: Int64, storefront: Int64, change: StaticString,
                          bindTexts: (SQLiteStatement, Int32, Int32, Int32) throws -> Void) throws {
            let first = Int32(3 + pending * Self.perRow)
            sequence.last += 1
            try batched.bind(sequence.last, at: first)
            try batched.bind(item, at: first + 1)
            try batched.bind(storefront, at: first + 2)
            try batched.bindTextNoCopy(change.utf8Start, count: change.utf8CodeUnitCount, at: first + 3)
            try bindTexts(batched, first + 4, first + 5, first + 6)
            pending += 1
            if pending == Self.batch { try write() }
        }

        /// Writes the rows of an incomplete batch: the batch's unused rows get a NULL id, which `INSERT OR IGNORE`
        /// skips (IGNORE applies to NOT NULL too).
        mutating func finish() throws {
            guard pending > 0 else { return }
            for row in pending..<Self.batch { try batched.bindNull(at: Int32(3 + row * Self.perRow + 1)) }
            try write()
        }

        private mutating func write() throws {
            try batched.step()
            sequence.rows += connection.changes
            batched.reset()
            pending = 0
        }
    }

    // MARK: Full exports

    /// Records what replacing the table with `staging` changes, in the caller's swap transaction: a merge of both
    /// tables read in key order (`PriceTableMerge`). Each is first read in rowid order, an item at a time
    /// (sequential, no index; in WAL mode on connections and threads of their own, `PriceTablePrefetch`); when a
    /// table is not grouped by item, the rows recorded so far are rolled back and both tables are read through
    /// their key indexes instead. Nothing is recorded on the first load or when either table lacks a price column.
    func recordFull(_ connection: SQLiteConnection, staging: String, exportDate: Int64?, feedDate: String?) throws {
        guard existed, try connection.tableExists(table), try hasColumns(connection, table),
              try hasColumns(connection, staging) else { return }
        try Self.createTable(connection)
        let sequence = try PriceHistorySequence.load(connection)
        let date = ChangeLog.exportDate(exportDate, feedDate: feedDate)
        let columns = ([key] + PriceHistory.columns).map(Self.quote).joined(separator: ", ")
        let oldTable = "SELECT \(columns) FROM \(Self.quote(table))"
        let newTable = "SELECT \(columns) FROM \(Self.quote(staging))"
        try connection.execute("SAVEPOINT epf_price_merge")
        do {
            // In WAL mode both tables, committed and not touched by this transaction, are read on connections and
            // threads of their own while this one compares and writes. (Not in rollback-journal mode, during a
            // database's first build: there a reader's lock could hold up this writer's spills.)
            if case .text(let mode) = try connection.scalar("PRAGMA journal_mode"), mode.lowercased() == "wal",
               let path = connection.mainFilename {
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
            let order = " WHERE \(Self.quote(key)) IS NOT NULL ORDER BY \(Self.quote(key)), storefront_id"
            try record(PriceTableMerge(old: PriceTableReader(try connection.prepare(oldTable + order)),
                                       new: PriceTableReader(try connection.prepare(newTable + order))),
                       connection, date: date, sequence: sequence)
        }
        try connection.execute("RELEASE epf_price_merge")
    }

    /// Runs a merge, writing what it finds, numbered from `sequence`.
    private func record<Old, New>(_ merge: PriceTableMerge<Old, New>, _ connection: SQLiteConnection,
                                  date: Int64, sequence: PriceHistorySequence) throws {
        var merge = merge
        var writer = try HistoryWriter(connection, date: date, kind: kind, sequence: sequence)
        try merge.run { found in
            try writer.add(item: found.item, storefront: found.storefront, change: found.change.word) {
                try found.bindTexts(to: $0, oldPrice: $1, newPrice: $2, currency: $3)
            }
        }
        try writer.finish()
        try writer.sequence.save(connection)
    }

    // MARK: Incrementals

    /// Keys noted by the pre-update hook and not yet routed (every `flushEvery`).
    private var pending = NotedChanges()
    private static let flushEvery = 4096
    private var noteBatch: SQLiteStatement?
    private var noteOne: SQLiteStatement?
    /// The keys noted so far: a key's first note may go straight to the history, its later ones may not.
    private var seenKeys: SeenKeys?
    /// Writes first notes straight to the history, with `directDate`, the export date when the first was written.
    private var direct: HistoryWriter?
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
    /// - a key's first note (`SeenKeys`) that is a change whatever happens next goes straight to the history: an
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
        seenKeys = SeenKeys()
        let tableName = Array(table.utf8CString)
        connection.setPreUpdateHook { [unowned self] change in
            guard strcmp(change.table, tableName) == 0, strcmp(change.database, "main") == 0 else { return }
            switch change.operation {
            case .insert:
                guard let item = change.new(keyColumn)?.int64, let storefront = change.new(storefrontColumn)?.int64
                else { return }
                pending.append(item: item, storefront: storefront, appeared: true, oldPrice: nil, oldCurrency: nil,
                               newPrice: change.new(priceColumn)?.textBytes,
                               newCurrency: change.new(currencyColumn)?.textBytes)
            case .update:
                guard let oldPrice = change.old(priceColumn), let newPrice = change.new(priceColumn),
                      let oldCurrency = change.old(currencyColumn), let newCurrency = change.new(currencyColumn),
                      let item = change.old(keyColumn)?.int64, let storefront = change.old(storefrontColumn)?.int64
                else { return }
                let before = (oldPrice.textBytes, oldCurrency.textBytes)
                let after = (newPrice.textBytes, newCurrency.textBytes)
                let sameCurrency = TextArena.same(before.1, after.1)
                guard !sameCurrency || !TextArena.same(before.0, after.0) else { return }
                pending.append(item: item, storefront: storefront, appeared: false, oldPrice: before.0,
                               oldCurrency: before.1, newPrice: after.0, newCurrency: after.1,
                               plainChange: sameCurrency && DecimalText.certainlyDiffer(before.0, after.0))
            case .delete:
                return
            }
        }
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
                direct = try HistoryWriter(connection, date: date, kind: kind, sequence: start)
                directDate = date
            }
            try direct?.add(item: note.item, storefront: note.storefront,
                            change: note.appeared ? "appeared" : "changed") { statement, old, new, currency in
                try pending.bind(note, to: statement, oldPrice: old, newPrice: new, currency: currency)
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
            let copy = try connection.prepare("""
                INSERT OR IGNORE INTO \(PriceHistory.table)
                    (export_date, kind, seq, id, storefront_id, change, old_price, new_price, currency)
                SELECT ?1, ?2, ?3 + row_number() OVER (ORDER BY id, storefront_id), id, storefront_id,
                    CASE appeared WHEN 1 THEN 'appeared' ELSE 'changed' END, old_price, new_price, new_currency
                FROM \(Self.noted)
                WHERE appeared = 1 OR CAST(old_price AS REAL) IS NOT CAST(new_price AS REAL)
                    OR old_currency IS NOT new_currency
                ORDER BY id, storefront_id
                """)
            try copy.bind([.integer(date), .text(kind), .integer(sequence.last)])
            _ = try copy.step()
            sequence.rows += connection.changes
            if case .integer(let last) = try connection.scalar(
                "SELECT max(seq) FROM \(PriceHistory.table) WHERE export_date = ?1", [.integer(date)]) {
                sequence.last = max(sequence.last, last)
            }
        }
        try sequence.save(connection)
        try connection.execute("DROP TABLE IF EXISTS \(Self.noted)")
    }

    /// The TEMP table's keys whose first note went to the history as a row of this load: the row takes the values
    /// after the key's last note, or goes when they equal those before its first (as a number, same currency).
    /// The TEMP table keeps the others.
    private func settleRevisited(_ connection: SQLiteConnection, date: Int64,
                                 sequence: inout PriceHistorySequence) throws {
        let history = "main.\(PriceHistory.table)"
        try connection.execute("""
            DROP TABLE IF EXISTS temp.epf_price_revisited;
            CREATE TEMP TABLE epf_price_revisited (seq INTEGER PRIMARY KEY, id INTEGER, storefront_id INTEGER,
                new_price TEXT, new_currency TEXT, keep INTEGER);
            """)
        let revisited = try connection.prepare("""
            INSERT INTO temp.epf_price_revisited
            SELECT h.seq, n.id, n.storefront_id, n.new_price, n.new_currency,
                h.change = 'appeared' OR CAST(h.old_price AS REAL) IS NOT CAST(n.new_price AS REAL)
                    OR h.currency IS NOT n.new_currency
            FROM \(Self.noted) AS n JOIN \(history) AS h
                ON h.id = n.id AND h.kind = ?1 AND h.storefront_id = n.storefront_id AND h.export_date = ?2
                    AND h.seq > ?3
            """)
        try revisited.bind([.text(kind), .integer(date), .integer(start.last)])
        _ = try revisited.step()
        let update = try connection.prepare("""
            UPDATE \(history) SET new_price = r.new_price, currency = r.new_currency
            FROM temp.epf_price_revisited AS r
            WHERE \(PriceHistory.table).export_date = ?1 AND \(PriceHistory.table).seq = r.seq AND r.keep
            """)
        try update.bind([.integer(date)])
        _ = try update.step()
        let remove = try connection.prepare("""
            DELETE FROM \(history)
            WHERE export_date = ?1 AND seq IN (SELECT seq FROM temp.epf_price_revisited WHERE NOT keep)
            """)
        try remove.bind([.integer(date)])
        _ = try remove.step()
        sequence.rows -= connection.changes
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

    /// Binds a note's texts as a history row has them: the old and new price, and the currency after.
    func bind(_ note: Note, to statement: SQLiteStatement, oldPrice: Int32, newPrice: Int32, currency: Int32) throws {
        try texts.bind(note.oldPrice, to: statement, at: oldPrice)
        try texts.bind(note.newPrice, to: statement, at: newPrice)
        try texts.bind(note.newCurrency, to: statement, at: currency)
    }
}
