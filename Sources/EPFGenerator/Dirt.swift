import EPFFormat
import Foundation

/// The kinds of damage `--dirt` injects, one for each problem EPF-FORMAT.md section 3 lists.
package enum DirtKind: String, Sendable, Codable, CaseIterable {
    /// A 0x01 inside `application.description`: the record has one field more than the header.
    case strayFieldSeparator
    /// A record repeating an earlier record's primary key; the later record should win.
    case duplicatePrimaryKey
    /// `[123]`, `[int]`, `<UnknownKeyException>` or a control byte in an integer column: in
    /// `application.download_size` (an importer stores NULL and keeps the row) and in `genre_application.genre_id`
    /// (a key: the row is rejected).
    case junkInteger
    /// Bytes that are not UTF-8 (0xC3 0x28, 0xFF) in `application.title`.
    case invalidUTF8
    /// A NUL byte inside `application.description`.
    case nulByte
    /// A DATETIME that is not `YYYY MM DD`: bare year, `YYYY-MM-DD-HH:MM:SS-Etc/GMT`, or a 2 digit year (which
    /// an importer cannot read: NULL, row kept).
    case oddDatetime
    /// A price that overflows DECIMAL(9,3), like `1234567.990`.
    case decimalOverflow
    /// The `collection` header declares almost every column `VARCHAR(1000)` (metadata record, `record` 0).
    case wrongHeaderTypes
    /// The `genre` header's `#primaryKey:` names `device_type_id`, which is not a column (`record` 0).
    case missingPrimaryKeyColumn
    /// Declared types that drifted: ids `BIGINT` instead of `INTEGER`, `is_primary` `INTEGER` instead of
    /// `BOOLEAN` (`record` 0).
    case typeDrift
    /// `#recordsWritten` larger than the data records in the file (`record` 0, `offset` of the footer).
    case recordsWrittenTooLarge
    /// A file with zero data records and `#recordsWritten:0` (`record` 0, `offset` of the footer).
    case zeroRows
}

/// One injected problem: where it is in which table file, and what it is.
package struct DirtEntry: Sendable, Codable, Equatable {
    /// The feed directory holding the table.
    package var feed: FeedName
    /// The table (file) name.
    package var table: String
    /// What kind of damage.
    package var kind: DirtKind
    /// 1-based number of the data record; 0 for a metadata record (header or footer).
    package var record: Int
    /// Byte offset of the record's first byte in the uncompressed table file.
    package var offset: Int64
    /// The column concerned, if one.
    package var column: String?
    /// The injected value (lossy UTF-8 for invalid bytes), if one.
    package var value: String?
    /// What a reader should make of it.
    package var note: String
}

/// Collects dirt entries as tables are written.
final class DirtLog {
    private(set) var entries: [DirtEntry] = []

    func append(_ entry: DirtEntry) { entries.append(entry) }

    func add(_ schema: EPFTable, _ kind: DirtKind, record: Int, offset: Int64, column: String? = nil,
             value: [UInt8]? = nil, note: String) {
        entries.append(DirtEntry(feed: schema.feed, table: schema.name, kind: kind, record: record, offset: offset,
                                 column: column, value: value.map { String(decoding: $0, as: UTF8.self) },
                                 note: note))
    }
}

/// Where in a full export the row-level dirt goes: app indices spread over the table, so bugs at buffer
/// boundaries and in the middle of big files show up. All are at least 8, clear of `FixedApp`.
struct DirtPlan {
    let straySeparator: Int
    let duplicateApp: Int
    let junkBracket: Int
    let junkException: Int
    let junkControl: Int
    let junkTypeName: Int
    let junkGenre: Int
    let invalidUTF8: Int
    let nulByte: Int
    let bareYear: Int
    let longDatetime: Int
    let shortDatetime: Int
    let duplicatePrice: Int
    let overflowPrice: Int

    init(apps: Int) {
        func at(_ percent: Int) -> Int { max(8, apps * percent / 100) }
        straySeparator = at(13)
        duplicateApp = at(21)
        junkBracket = at(34)
        junkException = at(35)
        junkControl = at(36)
        junkTypeName = at(37)
        junkGenre = at(40)
        invalidUTF8 = at(42)
        nulByte = at(55)
        bareYear = at(61)
        longDatetime = at(62)
        shortDatetime = at(63)
        duplicatePrice = at(70)
        overflowPrice = at(71)
    }

    /// Every app index that gets application-table dirt, sorted: the writer checks one index per row.
    var applicationIndices: [Int] {
        [straySeparator, duplicateApp, junkBracket, junkException, junkControl, junkTypeName, invalidUTF8, nulByte,
         bareYear, longDatetime, shortDatetime].sorted()
    }
}

extension GeneratedFeed {
    /// The manifest as pretty-printed, key-sorted JSON (what `dirt.json` holds).
    package static func manifestJSON(_ entries: [DirtEntry]) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(entries)
    }
}
