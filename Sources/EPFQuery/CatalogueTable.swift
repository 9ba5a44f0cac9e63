/// The catalogue tables an Apple ID can be found in, in the order lookups try them, with the names that go
/// with each: its key column, its price table and its title column.
enum CatalogueTable: String, CaseIterable {
    case application, collection, song, video, artist

    /// The table's name in the database.
    var name: String { rawValue }

    /// The primary key column: `application_id`, `collection_id`, ...
    var idColumn: String { rawValue + "_id" }

    /// The pricing feed's table for this kind (`application_price`, ...); nil for artists, which have no price.
    var priceTable: String? { self == .artist ? nil : rawValue + "_price" }

    /// The column holding the item's title or name.
    var titleColumn: String { self == .application ? "title" : "name" }

    /// The kind of an item found here when nothing more specific is known (a collection may also be a book).
    var defaultKind: EntityKind {
        switch self {
        case .application: return .software
        case .collection: return .album
        case .song: return .song
        case .video: return .video
        case .artist: return .artist
        }
    }
}

extension EntityKind {
    /// The catalogue table holding this kind.
    var catalogueTable: CatalogueTable {
        switch self {
        case .software: return .application
        case .ebook, .album: return .collection
        case .song: return .song
        case .video: return .video
        case .artist: return .artist
        }
    }
}
