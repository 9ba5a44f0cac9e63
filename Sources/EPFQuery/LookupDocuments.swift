import EPFSchema
import Foundation

/// Every app's default Lookup object (no country, no language), serialized once at import time.
///
/// A default app lookup joins seven tables (app, price, developer, genres, devices, languages) and builds about
/// thirty fields; on a catalogue of a million apps the pages it needs are spread over gigabytes, so each lookup
/// costs tens of microseconds. The documents table turns it into one read by primary key, which is what lets
/// `epf serve` answer random app ids at network speed. The documents are made by `QueryEngine` itself from the
/// tables (so they are byte for byte what a lookup from the tables returns) and carry the stamp of the tables
/// they were made from (`DerivedData`); the engine uses them only while that stamp is current, so between a
/// table change and the end of the rebuild lookups simply read the tables.
///
/// Cost: about 2.7 KB per app on disk (2.9 GB for a million apps). After an import, only what its changes touch is
/// rebuilt: nothing when no table the documents show changed, the apps in the rows of incrementals of per-app
/// tables (prices, details, genres, devices, developer), and every document (on every core) after a full export or
/// a change to shared tables such as genre names (`epf import --no-documents` skips them; lookups then always read
/// the tables).
///
/// This module only makes the documents and says which changes they depend on; the importer stores them
/// (EPFStore's `DerivedDocuments`: the table, the stamp, the threads), so the query module runs no DDL.
package struct LookupDocuments: DerivedDataBuilder {
    /// The table: `application_id INTEGER PRIMARY KEY, body BLOB` (UTF-8 JSON). Its name carries the documents'
    /// format, so documents an older epf stored (`olderTables`) are never read as current: lookups read the tables
    /// until the next import that applies anything rebuilds every document.
    package static let table = "epf_lookup_documents_v2"
    /// Document tables of older formats (v1: without screenshots, release notes, censored names and Apple's artwork
    /// sizes), dropped by the next rebuild.
    static let olderTables = ["epf_lookup_documents"]
    /// The name of its stamp in `epf_derived`.
    package static let name = "lookup_documents"

    package var name: String { Self.name }
    package var table: String { Self.table }
    package var olderTables: [String] { Self.olderTables }
    package var keyTable: String { "application" }
    package var keyColumn: String { "application_id" }

    /// Threads building documents (each with its own read-only connection); the importer's thread writes them.
    package var threads: Int

    /// A builder using `threads` builder threads (default: one per core).
    package init(threads: Int = ProcessInfo.processInfo.activeProcessorCount) {
        self.threads = max(1, threads)
    }

    /// Tables whose rows an app's document shows; a change to any other table leaves the documents as they are.
    static let shownTables: Set<String> = [
        "application", "application_price", "application_detail", "application_device_type", "genre_application",
        "artist_application", "artist", "genre", "device_type", "storefront",
    ]
    /// Tables keyed by app: an incremental of these changes only the documents of the apps in its rows.
    static let perAppTables: Set<String> = [
        "application", "application_price", "application_detail", "application_device_type", "genre_application",
        "artist_application",
    ]

    /// How much of the documents an import's changes require rebuilding.
    typealias Scope = DerivedScope

    static func scope(_ changes: DerivedChanges, storedStamp: Int64?, documentsExist: Bool) -> Scope {
        guard documentsExist, storedStamp == changes.stampBefore else { return .all }
        let shown = changes.tables.filter { shownTables.contains($0.key) }
        if shown.isEmpty { return .none }
        if shown.allSatisfy({ perAppTables.contains($0.key) && !$0.value }) {
            return .apps(changes.applicationIds.sorted())
        }
        return .all
    }

    package func scope(_ changes: DerivedChanges, storedStamp: Int64?, documentsExist: Bool) -> DerivedScope {
        Self.scope(changes, storedStamp: storedStamp, documentsExist: documentsExist)
    }

    /// Documents made by a `QueryEngine` of their own that reads the tables (never the documents), so they are
    /// byte for byte what a lookup from the tables returns.
    package func documentMaker(databasePath: String) throws -> ([Int64]) throws -> [(id: Int64, body: [UInt8])] {
        // pread, not the map: a builder touches pages all over the file once, and mapped pages would count
        // in the import's resident memory (a daily's peak went from 157 MB to 539 MB with the map).
        let engine = try QueryEngine(databasePath: databasePath, useLookupDocuments: false, mappedReads: false)
        return { ids in try engine.lookups.documents(for: ids) }
    }
}
