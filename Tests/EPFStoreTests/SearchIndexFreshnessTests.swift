import EPFGenerator
import EPFSchema
import EPFSQLite
import EPFTestSupport
import Foundation
import Testing
@testable import EPFStore

/// The search index carries a stamp like derived data: an index left behind the tables (an import stopped or
/// killed between a table and the index) is rebuilt by the next import, even one that applies nothing it indexes.
@Suite struct SearchIndexFreshnessTests {
    func count(_ database: String, _ sql: String) throws -> Int64 {
        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        guard case .integer(let value) = try connection.scalar(sql) else { return -1 }
        return value
    }

    func stamps(_ database: String) throws -> (search: Int64, tables: Int64) {
        let connection = try SQLiteConnection(path: database, mode: .readOnly)
        return (try DerivedData.storedStamp(connection, name: SearchIndex.derivedName) ?? -1,
                try DerivedData.currentStamp(connection))
    }

    @Test func anIndexBehindTheTablesIsRebuiltByTheNextImport() throws {
        let scratch = try Scratch()
        let options = ImportTests.options()
        let model = FeedModel(options)
        let full = try generate(options, in: scratch.path, name: "full")
        let database = scratch.file("epf.sqlite")
        #expect(try importPaths(full, database: database).succeeded)
        let indexed = try count(database, "SELECT count(*) FROM epf_search")
        #expect(indexed > 0)
        var stamp = try stamps(database)
        #expect(stamp.search == stamp.tables)

        // Prices only: nothing the index holds changed, so only its stamp moves.
        let incremental = try generate(model.incrementalOptions(day: 1), in: scratch.path, name: "incr")
        let pricing = incremental.filter { $0.contains("pricing") }
        #expect(!pricing.isEmpty)
        #expect(try importPaths(pricing, database: database).succeeded)
        stamp = try stamps(database)
        #expect(stamp.search == stamp.tables)

        // An index left behind: emptied, and its stamp older than the tables (as a kill before the index leaves it).
        let writer = try SQLiteConnection(path: database, mode: .readWrite)
        try writer.execute("""
            DELETE FROM epf_search; UPDATE epf_derived SET stamp = stamp - 1 WHERE name = 'search_index'
            """)
        // An import that applies nothing at all still brings the index up to date.
        let again = try importPaths(pricing, database: database)
        #expect(again.succeeded && again.outcomes.allSatisfy { $0.status != .applied })
        #expect(try count(database, "SELECT count(*) FROM epf_search") == indexed)
        stamp = try stamps(database)
        #expect(stamp.search == stamp.tables)
    }

    @Test func anIndexFromBeforeStampsCountsAsCurrent() throws {
        let scratch = try Scratch()
        let options = ImportTests.options()
        let full = try generate(options, in: scratch.path, name: "full")
        let database = scratch.file("epf.sqlite")
        #expect(try importPaths(full, database: database).succeeded)
        let writer = try SQLiteConnection(path: database, mode: .readWrite)
        try writer.execute("DELETE FROM epf_derived WHERE name = 'search_index'")
        let model = FeedModel(options)
        let incremental = try generate(model.incrementalOptions(day: 1), in: scratch.path, name: "incr")
        let report = try importPaths(incremental.filter { $0.contains("pricing") }, database: database)
        #expect(report.succeeded)
        #expect(report.phases.searchIndex == 0, "not rebuilt: nothing it indexes changed")
        let stamp = try stamps(database)
        #expect(stamp.search == stamp.tables)
    }
}
