import EPFServer
import Foundation
import Testing

/// Apple's `/lookup` on a hand-made catalogue where the edge cases are certain: an artist whose first collections
/// are books, ids named twice, and the content type Apple's clients expect.
@Suite struct AppleLookupEdgeTests {
    /// An author-musician: three books, then two albums, by collection id.
    static let artistSQL = """
        CREATE TABLE artist_collection (export_date INTEGER, artist_id INTEGER, collection_id INTEGER,
            is_primary_artist INTEGER, role_id INTEGER);
        INSERT INTO artist VALUES (1, 900000077, 'Writer And Singer', 1,
            'https://itunes.apple.com/us/artist/writer/id900000077', 1);
        INSERT INTO collection (export_date, collection_id, name, artist_display_name, itunes_release_date,
            media_type_id) VALUES
            (1, 510000001, 'Book One', 'Writer And Singer', '2010-01-01', 11),
            (1, 510000002, 'Book Two', 'Writer And Singer', '2011-01-01', 11),
            (1, 510000003, 'Book Three', 'Writer And Singer', '2012-01-01', 11),
            (1, 510000004, 'Album One', 'Writer And Singer', '2013-01-01', 1),
            (1, 510000005, 'Album Two', 'Writer And Singer', '2014-01-01', 1);
        INSERT INTO artist_collection VALUES (1, 900000077, 510000001, 1, 1), (1, 900000077, 510000002, 1, 1),
            (1, 900000077, 510000003, 1, 1), (1, 900000077, 510000004, 1, 1), (1, 900000077, 510000005, 1, 1);
        """

    /// The ids of the collections after the artist: an album's `collectionId`, a book's `trackId` (as Apple has it).
    static func collectionIds(_ answer: RouteAnswer) throws -> [Int] {
        let results = try #require(try answer.json()["results"] as? [[String: Any]])
        return results.dropFirst().compactMap { result in
            result["wrapperType"] as? String == "ebook" ? result["trackId"] as? Int : result["collectionId"] as? Int
        }
    }

    /// Books ahead of the albums must not use up `limit` when albums are asked for, nor albums when books are.
    @Test func limitCountsOnlyTheItemsTheEntityAdmits() throws {
        let harness = try RouteHarness(extraSQL: Self.artistSQL)
        defer { harness.remove() }
        let albums = try harness.get("/lookup?id=900000077&entity=album&limit=2")
        #expect(albums.status == 200)
        #expect(try Self.collectionIds(albums) == [510000004, 510000005])
        let oneAlbum = try harness.get("/lookup?id=900000077&entity=album&limit=1")
        #expect(try Self.collectionIds(oneAlbum) == [510000004])
        let books = try harness.get("/lookup?id=900000077&entity=ebook&limit=2")
        #expect(try Self.collectionIds(books) == [510000001, 510000002])
        let newest = try harness.get("/lookup?id=900000077&entity=album&limit=1&sort=recent")
        #expect(try Self.collectionIds(newest) == [510000005])
    }

    /// An item named twice is listed once, in the place it was first named.
    @Test func repeatedIdsAreListedOnce() throws {
        let harness = try RouteHarness()
        defer { harness.remove() }
        let answer = try harness.get("/lookup?id=562148264,364709193,562148264,364709193")
        let object = try answer.json()
        #expect(object["resultCount"] as? Int == 2)
        let results = try #require(object["results"] as? [[String: Any]])
        #expect(results.compactMap { $0["trackId"] as? Int } == [562148264, 364709193])
    }

    /// Apple answers `text/javascript` with or without a callback, and for its 400s; `/v1` stays JSON.
    @Test func applesPathsAnswerTextJavascript() throws {
        let harness = try RouteHarness()
        defer { harness.remove() }
        for target in ["/lookup?id=562148264", "/search?term=a", "/lookup?id=1&limit=0", "/search?term=a&callback=cb"] {
            let answer = try harness.get(target)
            #expect(answer.response.contentType == "text/javascript; charset=utf-8", "\(target)")
            #expect(answer.response.headers.contains { $0.name == "X-Content-Type-Options" && $0.value == "nosniff" })
        }
        #expect(try harness.get("/v1/lookup?id=562148264").response.contentType == "application/json; charset=utf-8")
    }

    /// A parameter whose percent-encoding or UTF-8 is malformed gets Apple's 400 on Apple's paths, naming it as
    /// Apple does, and ours on `/v1`.
    @Test func malformedParametersGetThePathsOwn400() throws {
        let harness = try RouteHarness()
        defer { harness.remove() }
        let cases = [("/lookup?id=%G1", "itunesId"), ("/search?term=%C3%28", "term"),
                     ("/lookup?id=562148264&entity=%ZZ", "resultEntity")]
        for (target, key) in cases {
            let answer = try harness.get(target)
            #expect(answer.status == 400, "\(target)")
            #expect(answer.response.contentType == "text/javascript; charset=utf-8", "\(target)")
            #expect(try answer.json()["errorMessage"] as? String == "Invalid value(s) for key(s): [\(key)]")
        }
        let ours = try harness.get("/v1/lookup?id=%G1")
        #expect(ours.status == 400)
        #expect(ours.response.contentType == "application/json; charset=utf-8")
        #expect(ours.text.contains("query parameter 'id'"))
    }
}
