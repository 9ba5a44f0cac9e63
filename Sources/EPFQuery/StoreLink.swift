/// The kinds of catalogue entries a query can answer about.
package enum EntityKind: String, CaseIterable, Sendable {
    /// An app (`application` table).
    case software
    /// A book (a `collection` whose media type is a book).
    case ebook
    /// An album or other collection (`collection` table).
    case album
    /// A song (`song` table).
    case song
    /// A movie, TV episode or music video (`video` table).
    case video
    /// An artist, developer or author (`artist` table).
    case artist

    /// The EPF table holding this kind, e.g. `application` for `.software`.
    package var table: String {
        switch self {
        case .software: return "application"
        case .ebook, .album: return "collection"
        case .song: return "song"
        case .video: return "video"
        case .artist: return "artist"
        }
    }

    /// The word after the country in a store link for this kind, mapped back: `app`, `book`, `album`, ...
    static func fromLinkSegment(_ segment: String) -> EntityKind? {
        switch segment.lowercased() {
        case "app", "mac-app", "app-bundle": return .software
        case "book", "audiobook", "book-series": return .ebook
        case "album", "playlist": return .album
        case "song": return .song
        case "movie", "tv-season", "tv-show", "music-video", "episode", "tv-episode", "show": return .video
        case "artist", "developer", "author", "curator", "music-artist": return .artist
        default: return nil
        }
    }
}

extension EntityKind {
    /// epf's own word for the kind, the one its CLI and its JSON use (docs/cli.md, "Kinds"): app, book, album,
    /// song, video, artist. Apple's answers (lookup and search results) keep Apple's words.
    package var word: String {
        switch self {
        case .software: return "app"
        case .ebook: return "book"
        case .album, .song, .video, .artist: return rawValue
        }
    }

    /// epf's words in order, for help texts and completions.
    package static var words: [String] { allCases.map(\.word) }

    /// The kind a word names: epf's word, or an older word that scripts may still pass (software and
    /// application for app, ebook for book), in any case.
    package init?(word: String) {
        switch word.lowercased() {
        case "app", "software", "application": self = .software
        case "book", "ebook": self = .ebook
        case let other:
            guard let kind = EntityKind(rawValue: other) else { return nil }
            self = kind
        }
    }
}

/// An Apple ID read from a number or a store link, with the kind and country the link names.
package struct StoreLink: Equatable, Sendable {
    /// The Apple ID (for album links with `?i=`, the song's ID).
    package let id: Int64
    /// The kind the link names (`/app/` -> software), nil for a bare number or an unknown path.
    package let kind: EntityKind?
    /// The storefront country from the link, ISO 3166 alpha-2 lowercase (`us`), nil when absent.
    package let country: String?

    /// Creates a link value directly.
    package init(id: Int64, kind: EntityKind?, country: String?) {
        self.id = id
        self.kind = kind
        self.country = country
    }

    /// What `parse` accepts, for the message that refuses an argument it does not: an Apple ID or a store link,
    /// each with an example.
    package static let acceptedForms = "an Apple ID (a positive number such as 293406864) or a store link such as "
        + "https://apps.apple.com/us/app/x/id293406864 (apps.apple.com, itunes.apple.com, books.apple.com, "
        + "music.apple.com)"

    /// The one wording of the error for arguments `parse` reads no Apple ID from (every command and the HTTP API):
    /// "not an Apple ID or store link: 'abc'; give an Apple ID (...) or a store link such as ...", naming at most
    /// five of them, each cut to 200 characters.
    package static func notAnIDMessage(_ unreadable: [String]) -> String {
        "not an Apple ID or store link: " + unreadable.prefix(5).map { "'\($0.prefix(200))'" }.joined(separator: ", ")
            + "; give " + acceptedForms
    }

    /// The arguments `parse` reads no Apple ID from, in their order; empty when every one is an ID or a link.
    package static func unreadable(_ arguments: [String]) -> [String] {
        arguments.filter { parse($0) == nil }
    }

    /// Reads an Apple ID ("364709193", "id364709193") or a store link in any of its forms.
    ///
    /// Accepts `https://apps.apple.com/us/app/ibooks/id364709193`, `https://itunes.apple.com/us/app/x/id1?mt=8`,
    /// `http://itunes.apple.com/app/x/id562148264?uo=5` (no country), books, album (`?i=` means the song),
    /// artist, movie, tv-season and music-video links, `itms-apps://` links, and `...?id=123` query forms.
    /// Returns nil when no positive ID can be found.
    package static func parse(_ text: String) -> StoreLink? {
        let trimmed = String(text.trimmingASCIIWhitespace())
        guard !trimmed.isEmpty else { return nil }
        if let id = positiveID(trimmed) { return StoreLink(id: id, kind: nil, country: nil) }
        if trimmed.hasPrefix("id"), let id = positiveID(String(trimmed.dropFirst(2))) {
            return StoreLink(id: id, kind: nil, country: nil)
        }
        var rest = Substring(trimmed)
        if let schemeEnd = rest.range(of: "://") {
            rest = rest[schemeEnd.upperBound...]
        } else if !rest.contains("/") {
            return nil
        }
        // Split off the fragment and the query.
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        var query: [(String, String)] = []
        if let question = rest.firstIndex(of: "?") {
            for pair in rest[rest.index(after: question)...].split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                query.append((String(parts[0]).lowercased(), parts.count > 1 ? String(parts[1]) : ""))
            }
            rest = rest[..<question]
        }
        var segments = rest.split(separator: "/").map(String.init)
        guard !segments.isEmpty else { return nil }
        segments.removeFirst()  // host
        var country: String?
        var kind: EntityKind?
        var id: Int64?
        for (index, segment) in segments.enumerated() {
            if index == 0, CountryCodes.isAlpha2(segment) {
                country = segment.lowercased()
                continue
            }
            if kind == nil, let named = EntityKind.fromLinkSegment(segment) { kind = named }
            if segment.hasPrefix("id"), let number = positiveID(String(segment.dropFirst(2))) { id = number }
        }
        func queryValue(_ name: String) -> String? { query.last { $0.0 == name }?.1 }
        if id == nil, let value = queryValue("id"), let number = positiveID(value) { id = number }
        if kind == nil, let media = queryValue("mt") {
            switch media {
            case "8", "12": kind = .software
            case "11": kind = .ebook
            case "1": kind = .album
            case "6": kind = .video
            default: break
            }
        }
        if country == nil, let value = queryValue("country"), CountryCodes.isAlpha2(value) {
            country = value.lowercased()
        }
        if let song = queryValue("i"), let songID = positiveID(song), kind == .album || kind == nil {
            return StoreLink(id: songID, kind: .song, country: country)
        }
        guard let id else { return nil }
        return StoreLink(id: id, kind: kind, country: country)
    }

    /// A positive Int64 made only of ASCII digits, or nil.
    static func positiveID(_ text: String) -> Int64? {
        guard !text.isEmpty, text.utf8.count <= 19, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              let number = Int64(text), number > 0 else { return nil }
        return number
    }
}
