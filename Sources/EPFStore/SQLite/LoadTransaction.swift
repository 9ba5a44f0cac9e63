import EPFSQLite

/// The one write transaction of a table load: begun when the target is prepared, committed and begun again at
/// each checkpoint, committed when the file has verified, rolled back on abort. Every `BEGIN`, `COMMIT` and
/// `ROLLBACK` of `TableLoad` goes through here, so whether one is open is always known.
struct LoadTransaction {
    /// Whether a transaction is open on the connection.
    private(set) var isOpen = false

    /// `BEGIN IMMEDIATE`: takes the write lock now, so a busy database fails here rather than mid-load.
    mutating func begin(_ connection: SQLiteConnection) throws {
        try connection.execute("BEGIN IMMEDIATE")
        isOpen = true
    }

    /// `COMMIT`; on failure the transaction stays open (and `rollBack` undoes it).
    mutating func commit(_ connection: SQLiteConnection) throws {
        try connection.execute("COMMIT")
        isOpen = false
    }

    /// Commits what is loaded so far and goes on in a new transaction: a resumable checkpoint.
    mutating func checkpoint(_ connection: SQLiteConnection) throws {
        try commit(connection)
        try begin(connection)
    }

    /// `ROLLBACK` when a transaction is open; errors are ignored (the connection may already have rolled back).
    mutating func rollBack(_ connection: SQLiteConnection) {
        if isOpen { try? connection.execute("ROLLBACK") }
        isOpen = false
    }
}
