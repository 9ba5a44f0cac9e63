import EPFSQLite

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
