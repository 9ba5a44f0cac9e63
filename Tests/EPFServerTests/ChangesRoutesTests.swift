@testable import EPFServer
import EPFSchema
import EPFStore
import EPFTestSupport
import Foundation
import Testing

/// `GET /v1/changes` and `removedIds` in `/v1/lookup`, over the catalogue fixture with changes inserted in SQL.
@Suite("Changes routes, called without a socket")
struct ChangesRoutesTests {
    /// 2026-11-20 00:00 UTC.
    static let day: Int64 = 1_795_132_800_000
    static let kinds = ["app", "collection", "song", "video", "artist"]

    /// `count` changes spread over seven export dates out of recording order, so the date order is not the
    /// order of `seq`; ids 990000001 ... in five kinds.
    static func changesSQL(count: Int) -> String {
        ChangeLog.schema + """
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(count))
            INSERT INTO epf_changes (export_date, kind, id, change)
            SELECT \(day) + ((i * 3) % 7) * 86400000,
                   CASE i % 5 WHEN 0 THEN 'app' WHEN 1 THEN 'collection' WHEN 2 THEN 'song' WHEN 3 THEN 'video'
                              ELSE 'artist' END,
                   990000000 + i, CASE i % 3 WHEN 0 THEN 'removed' WHEN 1 THEN 'added' ELSE 'updated' END
            FROM n;
            """
    }

    /// Follows `nextCursor` from `path` (which has its query already) until the last page.
    static func pages(_ server: RouteHarness, _ path: String) throws -> (ids: [Int64], pages: Int) {
        var ids: [Int64] = []
        var cursor: String?
        var pages = 0
        repeat {
            let target = path + (cursor.map { "&cursor=\($0)" } ?? "")
            let answer = try server.get(target)
            #expect(answer.status == 200, "\(target): \(answer.text.prefix(200))")
            let object = try answer.json()
            let changes = try #require(object["changes"] as? [[String: Any]])
            #expect(object["resultCount"] as? Int == changes.count)
            ids += changes.compactMap { ($0["id"] as? Int).map(Int64.init) }
            cursor = object["nextCursor"] as? String
            pages += 1
        } while cursor != nil && pages < 10_000
        return (ids, pages)
    }

    @Test func pagesThroughAHundredThousandChangesWithoutRepeatsOrGaps() throws {
        let count = 100_000
        let server = try RouteHarness(extraSQL: Self.changesSQL(count: count))
        defer { server.remove() }
        let (ids, pages) = try Self.pages(server, "/v1/changes?since=2026-11-20&limit=1000")
        #expect(pages == 100)
        #expect(ids.count == count)
        #expect(Set(ids).count == count)
        // In export-date order, then recording order: i with (3i mod 7) == 0 first, ascending.
        let expected = (1...count).sorted { left, right in
            let (a, b) = ((left * 3) % 7, (right * 3) % 7)
            return a != b ? a < b : left < right
        }.map { 990_000_000 + Int64($0) }
        let firstDifference = ids.indices.first { $0 >= expected.count || ids[$0] != expected[$0] }
        #expect(firstDifference == nil)
    }

    @Test func kindAndSinceNarrowTheList() throws {
        let server = try RouteHarness(extraSQL: Self.changesSQL(count: 3_000))
        defer { server.remove() }
        let (apps, _) = try Self.pages(server, "/v1/changes?since=2026-11-20&kind=app&limit=77")
        #expect(apps.count == 600 && apps.allSatisfy { $0 % 5 == 0 })
        // Since the fifth day: the exports of days 4, 5 and 6 after 2026-11-20 (3i mod 7 >= 4).
        let (recent, _) = try Self.pages(server, "/v1/changes?since=2026-11-24&limit=10000")
        let recentExpected: [Int64] = (1...3_000).filter { ($0 * 3) % 7 >= 4 }.map { 990_000_000 + Int64($0) }
        #expect(recent.count == recentExpected.count && Set(recent) == Set(recentExpected))
        let first = try server.get("/v1/changes?since=2026-11-20&limit=1").json()
        let change = try #require((first["changes"] as? [[String: Any]])?.first)
        #expect(change["exportDate"] as? String == "2026-11-20T00:00:00Z")
        #expect(change["kind"] as? String == "song" && change["change"] as? String == "added")
        let none = try server.get("/v1/changes?since=2030-01-01").json()
        #expect(none["resultCount"] as? Int == 0 && none["nextCursor"] is NSNull)
    }

    @Test(arguments: [
        ("/v1/changes", "since"), ("/v1/changes?since=2026-13-01", "'since'"),
        ("/v1/changes?since=20261120", "'since'"),
        ("/v1/changes?since=2026-02-30", "'since'"), ("/v1/changes?since=2026-11-20&kind=apps", "'kind'"),
        ("/v1/changes?since=2026-11-20&kind=", "'kind'"), ("/v1/changes?since=2026-11-20&limit=0", "'limit'"),
        ("/v1/changes?since=2026-11-20&limit=10001", "'limit'"), ("/v1/changes?since=2026-11-20&limit=x", "'limit'"),
        ("/v1/changes?since=2026-11-20&cursor=nonsense", "'cursor'"),
        ("/v1/changes?since=2026-11-20&cursor=YzEuMS4y%3D", "'cursor'"),
        ("/v1/changes?since=2026-11-20&cursor=", "'cursor'"),
        ("/v1/changes?since=2026-11-20&cursor=YzEuLTEuMg", "'cursor'"),
    ])
    func badParametersAre400(path: String, name: String) throws {
        let server = try RouteHarness(extraSQL: Self.changesSQL(count: 10))
        defer { server.remove() }
        let answer = try server.get(path)
        #expect(answer.status == 400, "\(path)")
        let error = try #require(try answer.json()["error"] as? [String: Any])
        #expect((error["message"] as? String)?.contains(name) == true, "\(path): \(error)")
    }

    @Test func aDatabaseWithoutChangesHasAnEmptyList() throws {
        let server = try RouteHarness()
        defer { server.remove() }
        let answer = try server.get("/v1/changes?since=2026-01-01")
        #expect(answer.status == 200)
        #expect(try answer.json()["resultCount"] as? Int == 0)
    }

    @Test func lookupListsRemovedIds() throws {
        // 990000001 left in the export of 2026-11-21; 990000002 left and came back; 364709193 is in the table.
        let server = try RouteHarness(extraSQL: ChangeLog.schema + """
            INSERT INTO epf_changes (export_date, kind, id, change) VALUES
                (\(Self.day), 'app', 990000001, 'added'), (\(Self.day + 86_400_000), 'app', 990000001, 'removed'),
                (\(Self.day), 'app', 990000002, 'removed'), (\(Self.day + 86_400_000), 'app', 990000002, 'added'),
                (\(Self.day), 'app', 364709193, 'removed');
            """)
        defer { server.remove() }
        let object = try server.get("/v1/lookup?id=364709193,990000001,990000002,12").json()
        #expect(object["resultCount"] as? Int == 1)
        #expect(object["invalidIds"] as? [String] == ["990000001", "990000002", "12"])
        let removed = try #require(object["removedIds"] as? [[String: Any]])
        #expect(removed.count == 1)
        #expect(removed.first?["id"] as? Int == 990000001)
        #expect(removed.first?["kind"] as? String == "app")
        #expect(removed.first?["removedInExport"] as? String == "2026-11-21T00:00:00Z")
        // Nothing removed: no removedIds member.
        #expect(try server.get("/v1/lookup?id=364709193").json()["removedIds"] == nil)
    }
}
