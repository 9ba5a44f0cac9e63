import EPFQuery
import JSONText

/// The values Apple's Search and Lookup API accepts for `media`, `entity` and `attribute`, and what each means
/// for a catalogue made of EPF tables.
package enum AppleVocabulary {
    /// The `media` values and the `entity` values allowed with each (Apple's table), first the default entity.
    package static let entitiesByMedia: [String: [String]] = [
        "movie": ["movie", "movieArtist"],
        "podcast": ["podcast", "podcastAuthor"],
        "music": ["musicTrack", "musicArtist", "album", "musicVideo", "mix", "song"],
        "musicVideo": ["musicVideo", "musicArtist"],
        "audiobook": ["audiobook", "audiobookAuthor"],
        "shortFilm": ["shortFilm", "shortFilmArtist"],
        "tvShow": ["tvEpisode", "tvSeason"],
        "software": ["software", "iPadSoftware", "macSoftware"],
        "ebook": ["ebook"],
        "all": ["movie", "album", "allArtist", "podcast", "musicVideo", "mix", "audiobook", "tvSeason", "allTrack"],
    ]

    /// The catalogue kinds each `media` value searches (nil: every kind). Podcasts and audiobooks are not in the
    /// EPF tables epf reads, so they find nothing.
    package static func kinds(media: String) -> Set<EntityKind>? {
        switch media {
        case "all": return nil
        case "software": return [.software]
        case "ebook": return [.ebook]
        case "music": return [.album, .song, .artist, .video]
        case "musicVideo": return [.video, .artist]
        case "movie", "tvShow", "shortFilm": return [.video, .artist]
        default: return []
        }
    }

    /// The entity of an `entity` value, nil when Apple has no such entity.
    package static func entity(_ name: String) -> AppleEntity? {
        switch name {
        case "software", "iPadSoftware", "macSoftware": return AppleEntity(name: name, kinds: [.software])
        case "ebook": return AppleEntity(name: name, kinds: [.ebook])
        case "album", "mix": return AppleEntity(name: name, kinds: [.album])
        case "song", "musicTrack": return AppleEntity(name: name, kinds: [.song])
        case "allTrack": return AppleEntity(name: name, kinds: [.song, .video])
        case "musicVideo": return AppleEntity(name: name, kinds: [.video], videoKind: "music-video")
        case "movie", "shortFilm": return AppleEntity(name: name, kinds: [.video], videoKind: "feature-movie")
        case "tvEpisode", "tvSeason": return AppleEntity(name: name, kinds: [.video], videoKind: "tv-episode")
        case "musicArtist", "movieArtist", "allArtist", "podcastAuthor", "audiobookAuthor", "shortFilmArtist":
            return AppleEntity(name: name, kinds: [.artist])
        case "podcast", "audiobook": return AppleEntity(name: name, kinds: [])
        default: return nil
        }
    }

    /// Apple's `attribute` values epf can search by: titles (the `title` column of the search index) or
    /// artist, developer and seller names (`names`).
    package static func searchColumn(attribute: String) -> String? {
        switch attribute {
        case "titleTerm", "songTerm", "albumTerm", "movieTerm", "shortFilmTerm", "featureFilmTerm", "tvEpisodeTerm",
             "tvSeasonTerm", "showTerm", "mixTerm", "allTrackTerm":
            return "title"
        case "artistTerm", "allArtistTerm", "softwareDeveloper", "authorTerm", "movieArtistTerm", "producerTerm":
            return "names"
        default:
            return nil
        }
    }

    /// Apple's other `attribute` values: valid for Apple, but they search fields the EPF index does not hold.
    package static let unsupportedAttributes: Set<String> = [
        "actorTerm", "genreIndex", "ratingTerm", "directorTerm", "releaseYearTerm", "ratingIndex", "descriptionTerm",
        "languageTerm", "keywordsTerm", "composerTerm",
    ]
}
