import EPFGenerator
@testable import EPFServer
import Foundation
import HTTPTransport
import Testing

/// `/lookup` and `/search` against Apple's documented examples, on a generated catalogue with a match feed.
@Suite("Apple's Lookup and Search paths")
struct AppleRoutesTests {
    @Test func lookupByIdEqualsV1Lookup() throws {
        let harness = try AppleCatalogue.routes()
        let catalogue = harness.catalogue
        let apps = try catalogue.ids("SELECT application_id FROM application ORDER BY application_id LIMIT 5")
        let others = try catalogue.ids("SELECT collection_id FROM collection LIMIT 1")
            + catalogue.ids("SELECT song_id FROM song LIMIT 1") + catalogue.ids("SELECT video_id FROM video LIMIT 1")
            + catalogue.ids("SELECT artist_id FROM artist LIMIT 1")
        let list = (apps + others).map(String.init).joined(separator: ",")
        for suffix in ["", "&country=gb", "&country=GB", "&country=jp"] {
            let apple = try harness.results("/lookup?id=\(list)\(suffix)")
            let ours = try harness.results("/v1/lookup?id=\(list)\(suffix)")
            #expect(ours.count == 9)
            // Apple's path leaves out what the storefront does not sell; /v1 keeps it and says so.
            let sold = ours.filter { $0["availableInStorefront"] as? Bool != false }.map { item in
                item.filter { $0.key != "availableInStorefront" }
            }
            #expect(suffix.isEmpty == !ours.contains { $0["availableInStorefront"] != nil }, "\(suffix)")
            #expect(NSArray(array: apple).isEqual(to: sold), "\(suffix)")
        }
        // Apple's example "lookup?id=909253" (an artist) and "lookup?id=284910350" (an app); unknown ids are left out.
        let single = try harness.results("/lookup?id=1,\(apps[0]),99999")
        #expect(single.map { $0["trackId"] as? Int } == [Int(apps[0])])
        #expect(try harness.results("/lookup?id=\(others[3])").first?["wrapperType"] as? String == "artist")
        #expect(try harness.results("/lookup?id=1").isEmpty)
    }

    @Test func appResultsCarryApplesFields() throws {
        let harness = try AppleCatalogue.routes()
        let id = try #require(try harness.catalogue.ids("""
            SELECT application_id FROM application_detail WHERE language_code = 'EN' AND screenshot_url_1 IS NOT NULL
              AND release_notes IS NOT NULL LIMIT 1
            """).first)
        let app = try #require(try harness.results("/lookup?id=\(id)").first)
        #expect(app["trackCensoredName"] as? String == app["trackName"] as? String)
        #expect((app["screenshotUrls"] as? [String])?.isEmpty == false)
        #expect(app["ipadScreenshotUrls"] is [String])
        #expect((app["releaseNotes"] as? String)?.isEmpty == false)
        #expect((app["artworkUrl60"] as? String)?.hasSuffix("/60x60bb.jpg") == true)
        #expect((app["artworkUrl100"] as? String)?.hasSuffix("/100x100bb.jpg") == true)
        #expect((app["artworkUrl512"] as? String)?.hasSuffix("/512x512bb.jpg") == true)
        #expect(app["fileSizeBytes"] is String && app["genreIds"] is [String] && app["trackId"] is Int)
        #expect(app["sellerUrl"] is String && app["languageCodesISO2A"] is [String])
        // Never invented: fields the feed cannot supply.
        for absent in ["averageUserRating", "userRatingCount", "bundleId", "minimumOsVersion", "languageCode"] {
            #expect(app[absent] == nil, "\(absent)")
        }
    }

    @Test func languageChoosesTheDetailRowAndFallsBackToEnglish() throws {
        let harness = try AppleCatalogue.routes()
        let catalogue = harness.catalogue
        let rows = try catalogue.ids("SELECT application_id FROM application_detail WHERE language_code = 'JA' LIMIT 1")
        let id = try #require(rows.first)
        let japanese = try #require(try harness.results("/lookup?id=\(id)&lang=ja_jp").first)
        let title = try catalogue.texts(
            "SELECT title FROM application_detail WHERE application_id = \(id) AND language_code = 'JA'")
        #expect(title.first != nil && japanese["trackName"] as? String == title.first)
        #expect(japanese["languageCode"] == nil)
        let english = try #require(try harness.results("/lookup?id=\(id)&lang=en_us").first)
        #expect(NSDictionary(dictionary: english).isEqual(to: try harness.results("/lookup?id=\(id)")[0]))
        let none = try #require(try catalogue.ids("""
            SELECT application_id FROM application WHERE application_id NOT IN
              (SELECT application_id FROM application_detail WHERE language_code = 'KO') LIMIT 1
            """).first)
        let fallback = try #require(try harness.results("/lookup?id=\(none)&lang=ko_kr").first)
        let englishTitle = try catalogue.texts(
            "SELECT title FROM application_detail WHERE application_id = \(none) AND language_code = 'EN'")
        let plain = try #require(try harness.results("/lookup?id=\(none)").first)
        #expect(fallback["trackName"] as? String == englishTitle.first ?? plain["trackName"] as? String)
    }

    @Test func artistEntitiesFollowTheArtist() throws {
        let harness = try AppleCatalogue.routes()
        let catalogue = harness.catalogue
        // "lookup?id=909253&entity=album": the artist, then all of its albums.
        let artist = try #require(try catalogue.ids("""
            SELECT artist_id FROM artist_collection GROUP BY artist_id HAVING count(*) >= 3 LIMIT 1
            """).first)
        let albums = try catalogue.ids("SELECT collection_id FROM artist_collection WHERE artist_id = \(artist)")
        let all = try harness.results("/lookup?id=\(artist)&entity=album")
        #expect(all.first?["wrapperType"] as? String == "artist")
        #expect(Set(all.dropFirst().compactMap { $0["collectionId"] as? Int }) == Set(albums.map(Int.init)))
        #expect(all.dropFirst().allSatisfy { $0["wrapperType"] as? String == "collection" })
        // A developer's apps: entity=software.
        let developer = try #require(try catalogue.ids("""
            SELECT artist_id FROM artist_application GROUP BY artist_id HAVING count(*) >= 2 LIMIT 1
            """).first)
        let apps = try catalogue.ids("SELECT application_id FROM artist_application WHERE artist_id = \(developer)")
        let software = try harness.results("/lookup?id=\(developer)&entity=software")
        #expect(software.first?["artistId"] as? Int == Int(developer))
        #expect(software.dropFirst().compactMap { $0["trackId"] as? Int } == apps.sorted().map(Int.init))
        // An app with entity=software is only the app: apps have no related apps.
        #expect(try harness.results("/lookup?id=\(apps[0])&entity=software").count == 1)
    }

    @Test func amgArtistIdsWithEntityLimitAndSort() throws {
        let harness = try AppleCatalogue.routes()
        let catalogue = harness.catalogue
        // Two music artists with several songs, by their AMG ids (MatchIDs.amgArtistID of the artist's index).
        let rows = try catalogue.ids("""
            SELECT m.amg_artist_id FROM artist_match m JOIN artist_song s ON s.artist_id = m.artist_id
            GROUP BY m.artist_id HAVING count(*) >= 8 ORDER BY m.artist_id LIMIT 2
            """)
        try #require(rows.count == 2)
        let amg = rows.map(String.init).joined(separator: ",")
        // "lookup?amgArtistId=468749,5723": both artists.
        let artists = try harness.results("/lookup?amgArtistId=\(amg)")
        #expect(artists.map { $0["wrapperType"] as? String } == ["artist", "artist"])
        // "...&entity=album&limit=5": each artist followed by at most 5 albums.
        let albums = try harness.results("/lookup?amgArtistId=\(amg)&entity=album&limit=5")
        let groups = Self.groups(albums)
        #expect(groups.count == 2 && groups.allSatisfy { (1...5).contains($0.count) })
        // "...&entity=song&limit=5&sort=recent": each artist's 5 newest songs, newest first.
        let songs = try harness.results("/lookup?amgArtistId=\(amg)&entity=song&limit=5&sort=recent")
        for group in Self.groups(songs) {
            #expect(group.count == 5)
            let dates = group.compactMap { $0["releaseDate"] as? String }
            #expect(dates == dates.sorted(by: >))
            #expect(group.allSatisfy { $0["kind"] as? String == "song" })
        }
    }

    /// The related items after each artist of a lookup.
    static func groups(_ results: [[String: Any]]) -> [[[String: Any]]] {
        var groups: [[[String: Any]]] = []
        for result in results {
            if result["wrapperType"] as? String == "artist" { groups.append([]) } else if !groups.isEmpty {
                groups[groups.count - 1].append(result)
            }
        }
        return groups
    }

    @Test func upcIsrcAndAmgKeysResolveThroughTheMatchFeed() throws {
        let harness = try AppleCatalogue.routes()
        let model = harness.catalogue.model
        // "lookup?upc=720642462928": the album; with entity=song its tracks in order.
        let album = try harness.results("/lookup?upc=\(MatchIDs.collectionUPC(0))")
        #expect(album.map { $0["collectionId"] as? Int } == [Int(model.collectionID(0))])
        let tracks = try harness.results("/lookup?upc=\(MatchIDs.collectionUPC(0))&entity=song")
        #expect(tracks.dropFirst().compactMap { $0["trackId"] as? Int } == (0..<8).map { Int(model.songID($0)) })
        // "lookup?amgAlbumId=15175,15176,...": several albums; collection 9 has no AMG id and is left out.
        let ids = [0, 1, 9, 2].compactMap(MatchIDs.amgAlbumID).map(String.init).joined(separator: ",")
        #expect(try harness.results("/lookup?amgAlbumId=\(ids)").map { $0["collectionId"] as? Int }
                == [0, 1, 2].map { Int(model.collectionID($0)) })
        // "lookup?amgVideoId=17120", and ISRCs of songs and videos.
        #expect(try harness.results("/lookup?amgVideoId=\(MatchIDs.amgVideoID(0))").first?["trackId"] as? Int
                == Int(model.videoID(0)))
        #expect(try harness.results("/lookup?isrc=\(MatchIDs.songISRC(3).lowercased())").first?["trackId"] as? Int
                == Int(model.songID(3)))
        #expect(try harness.results("/lookup?upc=\(MatchIDs.videoUPC(1))").first?["trackId"] as? Int
                == Int(model.videoID(1)))
        #expect(try harness.results("/lookup?upc=999999999999").isEmpty)
    }

    @Test func matchKeysWithoutTheMatchFeedAreAClear400() throws {
        let server = try RouteHarness()
        defer { server.remove() }
        for target in ["/lookup?upc=720642462928", "/lookup?isrc=USEPF2600001", "/lookup?amgArtistId=468749"] {
            let answer = try server.get(target)
            #expect(answer.status == 400)
            let message = try answer.json()["errorMessage"] as? String ?? ""
            #expect(message.contains("match feed is not loaded"), "\(message)")
        }
    }

    @Test func searchExamples() throws {
        let harness = try AppleCatalogue.routes()
        let catalogue = harness.catalogue
        let title = try #require(try catalogue.texts("SELECT title FROM application ORDER BY application_id LIMIT 1")
            .first)
        let word = String(title.split(separator: " ")[0])
        // "search?term=jack+johnson" and "&limit=25".
        let everything = try harness.results("/search?term=\(Self.encoded(word))")
        #expect(!everything.isEmpty && everything.count <= 50)
        let limited = try harness.results("/search?term=\(Self.encoded(word))&limit=2")
        #expect(limited.count == min(2, everything.count))
        // "search?term=yelp&country=us&entity=software".
        let software = try harness.results("/search?term=\(Self.encoded(word))&country=US&entity=software")
        #expect(!software.isEmpty && software.allSatisfy { $0["kind"] as? String == "software" })
        #expect(software.allSatisfy { $0["currency"] == nil || $0["currency"] as? String == "USD" })
        // offset pages through the same ranking.
        let page = try harness.results("/search?term=\(Self.encoded(word))&limit=3&offset=1")
        #expect(page.map { $0["trackId"] as? Int ?? $0["collectionId"] as? Int }
                == everything.dropFirst().prefix(3).map { $0["trackId"] as? Int ?? $0["collectionId"] as? Int })
        // "search?term=jack+johnson&entity=musicVideo": music videos only.
        let videos = try harness.results("/search?term=a&entity=musicVideo&limit=200")
        #expect(videos.allSatisfy { $0["kind"] as? String == "music-video" })
        // explicit=No leaves out explicit items.
        let clean = try harness.results("/search?term=a&media=music&explicit=No&limit=200")
        #expect(clean.allSatisfy { $0["trackExplicitness"] as? String != "explicit"
            && $0["collectionExplicitness"] as? String != "explicit" })
        let all = try harness.results("/search?term=a&media=music&limit=200")
        #expect(all.count > clean.count)
        // attribute: the developer's name, not titles.
        let seller = try #require(software.first?["artistName"] as? String)
        let byDeveloper = try harness.results(
            "/search?term=\(Self.encoded(seller))&entity=software&attribute=softwareDeveloper")
        #expect(!byDeveloper.isEmpty && byDeveloper.allSatisfy { $0["artistName"] as? String == seller })
        #expect(try harness.results("/search?term=%20").isEmpty)
        #expect(try harness.results("/search?term=a&media=podcast").isEmpty)
    }

    static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }

    @Test(arguments: [
        ("/lookup", "itunesId"), ("/lookup?id=", "itunesId"), ("/lookup?id=abc", "itunesId"),
        ("/lookup?id=1,-2", "itunesId"), ("/lookup?id=0", "itunesId"),
        ("/lookup?id=99999999999999999999", "itunesId"), ("/lookup?id=1&entity=spaceship", "resultEntity"),
        ("/lookup?id=1&media=vinyl", "mediaType"), ("/lookup?id=1&media=software&entity=album", "resultEntity"),
        ("/lookup?id=1&limit=0", "limit"), ("/lookup?id=1&limit=ten", "limit"), ("/lookup?id=1&sort=oldest", "sort"),
        ("/lookup?id=1&country=usa", "country"), ("/lookup?id=1&country=zz", "country"),
        ("/lookup?id=1&country=aq", "country"), ("/lookup?id=1&lang=!!", "language"),
        ("/lookup?id=1&lang=japanese_language", "language"), ("/lookup?upc=12ab", "upc"),
        ("/lookup?isrc=US1", "isrc"), ("/lookup?amgArtistId=x", "amgArtistId"), ("/lookup?amgAlbumId=", "amgAlbumId"),
        ("/lookup?amgVideoId=-1", "amgVideoId"), ("/lookup?isbn=9780316069359", "isbn"), ("/search", "term"),
        ("/search?term=a&limit=-1", "limit"), ("/search?term=a&entity=spaceship", "resultEntity"),
        ("/search?term=a&media=vinyl", "mediaType"), ("/search?term=a&media=movie&entity=software", "resultEntity"),
        ("/search?term=a&attribute=colourTerm", "attributeType"),
        ("/search?term=a&attribute=genreIndex", "attributeType"), ("/search?term=a&offset=-3", "offset"),
        ("/search?term=a&explicit=maybe", "explicit"), ("/search?term=a&country=xx", "country"),
        ("/search?term=a&lang=1", "language"), ("/lookup?id=1&callback=alert(1)", "callback"),
    ])
    func badValuesAreApples400(target: String, key: String) throws {
        let harness = try AppleCatalogue.routes()
        let answer = try harness.get(target)
        #expect(answer.status == 400, "\(target)")
        #expect(answer.response.contentType == "text/javascript; charset=utf-8")
        #expect(answer.response.cache == .noStore)
        let object = try answer.json()
        let message = try #require(object["errorMessage"] as? String)
        #expect(message.contains(key), "\(target): \(message)")
        let parameters = try #require(object["queryParameters"] as? [String: String])
        #expect(parameters["output"] == "json" && parameters["term"] != nil)
        #expect(object.count == 2)
    }

    @Test(arguments: ["alert(1)", "a;b", "x y", "1abc", "a..b", ".a", "a.", "<script>", "a-b", "a\u{2028}b",
                      String(repeating: "a", count: 129), "", "a[0]", "\u{00e9}t\u{00e9}"])
    func hostileCallbackNamesAreRefused(name: String) throws {
        let harness = try AppleCatalogue.routes()
        let encoded = name.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? name
        for path in ["/lookup?id=1&callback=", "/search?term=a&callback="] {
            let answer = try harness.get(path + encoded)
            #expect(answer.status == 400, "\(name)")
            #expect(!answer.text.contains("(") || answer.text.hasPrefix("{"))
            #expect(try answer.json()["errorMessage"] as? String == "Invalid value(s) for key(s): [callback]")
        }
    }

    @Test(arguments: ["cb", "jQuery1234_5678", "app.handlers.done", "$", "_x1"])
    func jsonpWrapsTheBody(name: String) throws {
        let harness = try AppleCatalogue.routes()
        let id = try #require(try harness.catalogue.ids("SELECT application_id FROM application LIMIT 1").first)
        let plain = try harness.get("/lookup?id=\(id)")
        let wrapped = try harness.get("/lookup?id=\(id)&callback=\(name)")
        #expect(wrapped.status == 200)
        #expect(wrapped.response.contentType == "text/javascript; charset=utf-8")
        #expect(wrapped.response.headers.contains { $0.name == "X-Content-Type-Options" && $0.value == "nosniff" })
        let json = plain.text.dropLast() // the newline
        #expect(wrapped.text == "/**/\(name)(\(json));\n")
        let search = try harness.get("/search?term=a&limit=1&callback=\(name)")
        #expect(search.status == 200 && search.text.hasPrefix("/**/\(name)({\"resultCount\":"))
    }
}
