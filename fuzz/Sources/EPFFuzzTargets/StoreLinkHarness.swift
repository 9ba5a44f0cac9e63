import EPFQuery

/// The store-link parser (`StoreLink.parse`): Apple IDs and store links in any of their forms.
///
/// An answer must be made of the text: a positive ID whose digits are in it, a country of two lowercase letters
/// found in it. A canonical link rebuilt from the answer must parse to the same answer.
enum StoreLinkHarness {
    static func run(_ data: UnsafeRawBufferPointer) throws(FuzzFailure) {
        let text = String(decoding: data, as: UTF8.self)
        guard let link = StoreLink.parse(text) else { return }
        try check(link.id > 0, "\(text.debugDescription) gave id \(link.id)")
        try check(text.contains(String(link.id)), "\(text.debugDescription) gave id \(link.id), not in the text")
        if let country = link.country {
            try check(country.utf8.count == 2 && country.utf8.allSatisfy { $0 >= 0x61 && $0 <= 0x7A },
                      "\(text.debugDescription) gave country \(country.debugDescription)")
            try check(text.lowercased().contains(country), "\(text.debugDescription) gave country \(country)")
        }
        let rebuilt = canonical(link)
        try check(StoreLink.parse(rebuilt) == link,
                  "\(text.debugDescription) gave \(link); its link \(rebuilt) gives "
                      + "\(String(describing: StoreLink.parse(rebuilt)))")
    }

    /// The link Apple would print for an answer.
    static func canonical(_ link: StoreLink) -> String {
        let country = link.country.map { "/\($0)" } ?? ""
        switch link.kind {
        case nil: return "https://apps.apple.com\(country)/x/id\(link.id)"
        case .software: return "https://apps.apple.com\(country)/app/name/id\(link.id)"
        case .ebook: return "https://books.apple.com\(country)/book/name/id\(link.id)"
        case .album: return "https://music.apple.com\(country)/album/name/id\(link.id)"
        case .song: return "https://music.apple.com\(country)/album/name/id1?i=\(link.id)"
        case .video: return "https://tv.apple.com\(country)/movie/name/id\(link.id)"
        case .artist: return "https://music.apple.com\(country)/artist/name/id\(link.id)"
        }
    }
}
