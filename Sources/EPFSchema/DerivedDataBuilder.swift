/// Documents derived from the imported tables, one per id of a key table (such as the query module's lookup
/// documents, one per app): what they are and how a reader makes them. The importer stores them (EPFStore's
/// `DerivedDocuments.rebuild`: the table, its stamp, the threads that make them) after tables changed; the module
/// that makes them runs no DDL.
package protocol DerivedDataBuilder: Sendable {
    /// The name under which the stamp is kept in `epf_derived` (`DerivedData`).
    var name: String { get }
    /// The table holding the documents: `<keyColumn> INTEGER PRIMARY KEY, body BLOB` (UTF-8 JSON).
    var table: String { get }
    /// Tables of earlier formats of the documents, dropped by the next rebuild.
    var olderTables: [String] { get }
    /// The table whose ids have a document, and its key column (`application`, `application_id`). Without that
    /// table keyed by that column there is nothing to document.
    var keyTable: String { get }
    var keyColumn: String { get }
    /// Threads making documents at once (each with its own reader).
    var threads: Int { get }

    /// How much of the documents an import's `changes` require rebuilding, given the stamp the documents carry
    /// (`storedStamp`, nil when never built) and whether their table exists.
    func scope(_ changes: DerivedChanges, storedStamp: Int64?, documentsExist: Bool) -> DerivedScope

    /// A maker of documents over the database at `databasePath` (its own read-only connection), for one thread:
    /// it returns the documents of the ids it is given (ascending) that have one, in id order. Throws when the
    /// database cannot be read.
    func documentMaker(databasePath: String) throws -> ([Int64]) throws -> [(id: Int64, body: [UInt8])]
}

/// How much of a set of derived documents an import's changes require rebuilding.
package enum DerivedScope: Equatable, Sendable {
    /// Nothing they show changed: only the stamp is renewed.
    case none
    /// Changes that touch only these ids' documents.
    case apps([Int64])
    /// Everything (full exports, shared tables such as genre names, or documents that were not current).
    case all
}
