import EPFFormat
import EPFSQLite
import EPFSchema
import Foundation
import JSONText

/// One recorded change of a catalogue id (see `EPFSchema.ChangeLog`).
package struct ChangeRecord: Sendable, Equatable {
    /// The Apple ID.
    package let id: Int64
    /// `app`, `collection`, `song`, `video` or `artist`.
    package let kind: String
    /// `removed`, `added` or `updated`.
    package let change: String
    /// The export's `export_date`, milliseconds since 1970 UTC.
    package let exportDate: Int64
    /// The position of the change in the changes table: later changes have larger numbers.
    package let sequence: Int64

    /// `{"id": 123, "kind": "app", "change": "removed", "exportDate": "2026-11-20"}`.
    package var json: JSONValue {
        .object([("id", .int(id)), ("kind", .string(kind)), ("change", .string(change)),
                 ("exportDate", .string(EPFValues.isoTimestamp(milliseconds: exportDate)))])
    }
}

/// One page of `ChangeQueries.page`.
package struct ChangePage: Sendable {
    /// The changes, in order of export date, then of recording.
    package let changes: [ChangeRecord]
    /// The cursor of the next page, nil on the last one.
    package let nextCursor: String?

    /// `{"resultCount": N, "changes": [...], "nextCursor": "..." or null}`.
    package var json: JSONValue {
        .object([("resultCount", .int(Int64(changes.count))), ("changes", .array(changes.map(\.json))),
                 ("nextCursor", nextCursor.map { .string($0) } ?? .null)])
    }
}

/// An id a lookup did not find because it left the store (see `LookupQueries.lookup`).
package struct RemovedItem: Sendable, Equatable {
    /// The Apple ID.
    package let id: Int64
    /// `app`, `collection`, `song`, `video` or `artist`.
    package let kind: String
    /// The `export_date` of the full export it was missing from, milliseconds since 1970 UTC.
    package let exportDate: Int64
    /// The lookup argument as given (an ID or a store link).
    package let argument: String

    /// `{"id": 123, "kind": "app", "removedInExport": "2026-11-20"}`.
    package var json: JSONValue {
        .object([("id", .int(id)), ("kind", .string(kind)),
                 ("removedInExport", .string(EPFValues.isoTimestamp(milliseconds: exportDate)))])
    }
}

/// The ids full exports removed or added, paged (`epf_changes`).
package final class ChangeQueries: SessionReading {
    let session: ReadSession

    init(session: ReadSession) { self.session = session }
}

/// The changes table: what changed since a date, and whether an id that is not found was removed.
extension ChangeQueries {
    /// Most changes one page may hold.
    package static let maximumChangesPage = 10_000

    /// The changes recorded for exports dated `since` (`YYYY-MM-DD`, UTC) or later, optionally of one `kind`
    /// (`app`, `collection`, `song`, `video`, `artist`), at most `limit`, after `cursor` (a page's
    /// `nextCursor`). The order is stable: by export date, then by the order the changes were recorded, so
    /// following the cursors lists every change once. A database without changes gives an empty page.
    /// Throws `QueryError.badArgument` naming `since`, `kind`, `limit` or `cursor` for a bad value.
    package func page(since: String, kind: String?, limit: Int, cursor: String?) throws -> ChangePage {
        let after = try Self.pagePosition(since: try Self.changesSince(since, kind: kind), limit: limit, cursor: cursor)
        return try reading {
            guard tables.contains(ChangeLog.table) else { return ChangePage(changes: [], nextCursor: nil) }
            var bindings: [SQLValue] = []
            if let kind { bindings.append(.text(kind)) }
            let (rows, next) = try pagedRows(table: ChangeLog.table, columns: "id, kind, change, export_date, seq",
                                             filters: kind == nil ? "" : "kind = ?4 AND ", bindings: bindings,
                                             after: after, limit: limit) { statement in
                ChangeRecord(id: statement.int64(at: 0) ?? 0, kind: statement.text(at: 1) ?? "",
                             change: statement.text(at: 2) ?? "", exportDate: statement.int64(at: 3) ?? 0,
                             sequence: statement.int64(at: 4) ?? 0)
            } position: { ($0.exportDate, $0.sequence) }
            return ChangePage(changes: rows, nextCursor: next)
        }
    }

    /// Where a page starts: after `cursor` (a page's `nextCursor`), or at midnight of `since` (milliseconds).
    /// Throws `QueryError.badArgument` naming `limit` or `cursor`.
    static func pagePosition(since: Int64, limit: Int, cursor: String?) throws -> (date: Int64, sequence: Int64) {
        guard (1...maximumChangesPage).contains(limit) else {
            throw QueryError.badArgument(name: "limit",
                                         message: "must be a whole number from 1 to \(maximumChangesPage)")
        }
        var after: (date: Int64, sequence: Int64) = (since, 0)
        if let cursor {
            guard let position = ChangeCursor.decode(cursor) else {
                throw QueryError.badArgument(name: "cursor", message: "'\(cursor.prefix(40))' is not a cursor "
                                             + "this server gave (pass a page's nextCursor unchanged)")
            }
            if (position.date, position.sequence) > after { after = position }
        }
        return after
    }

    /// One page of a changes table (`epf_changes`, `epf_price_history`: `export_date` and `seq` with an index on
    /// both): the rows after `after` in (export date, seq) order that pass `filters` (SQL ending in `AND `, with
    /// its parameters from `?4` in `bindings`), at most `limit`, and the cursor of the next page. With
    /// `packedPositions`, `table` is the view of SQLite's packed price history (`PriceHistoryRead`: `seq` is
    /// `packed_seq` x `packedPositions` + a position in the row), read in the order of the table's key. Call inside
    /// `reading`.
    func pagedRows<Row>(table: String, columns: String, filters: String, bindings: [SQLValue],
                        after: (date: Int64, sequence: Int64), limit: Int, packedPositions: Int64? = nil,
                        read: (SQLiteStatement) -> Row,
                        position: (Row) -> (Int64, Int64)) throws -> ([Row], String?) {
        // The rest of the cursor's export, then the later exports: two index ranges (one row-value range
        // `(export_date, seq) > (?1, ?2)` would use the index for export_date only and skip rows one by one).
        // The view's `seq` is not the table's key: it is ordered by `packed_seq` (a row's entries come in order).
        let select = "SELECT \(columns) FROM \(table) WHERE \(filters)"
        let rest = packedPositions.map { "packed_seq >= ?2 / \($0) AND seq > ?2 ORDER BY packed_seq" }
            ?? "seq > ?2 ORDER BY seq"
        let later = packedPositions == nil ? "export_date, seq" : "export_date, packed_seq"
        let sql = """
            SELECT * FROM (\(select)export_date = ?1 AND \(rest) LIMIT ?3)
            UNION ALL
            SELECT * FROM (\(select)export_date > ?1 ORDER BY \(later) LIMIT ?3)
            ORDER BY export_date, seq LIMIT ?3
            """
        var rows: [Row] = []
        try forEachRow(sql, [.integer(after.date), .integer(after.sequence), .integer(Int64(limit + 1))] + bindings) {
            rows.append(read($0.statement))
            return true
        }
        guard rows.count > limit else { return (rows, nil) }
        rows.removeLast()
        let (date, sequence) = position(rows[rows.count - 1])
        return (rows, ChangeCursor.encode(date: date, sequence: sequence))
    }

    /// Checks the filters of `changes` before any database is opened: returns midnight UTC of `since` in
    /// milliseconds. Throws `QueryError.badArgument` naming `since` (not `YYYY-MM-DD`) or `kind` (not one of
    /// `app`, `collection`, `song`, `video`, `artist`).
    package static func changesSince(_ since: String, kind: String?) throws -> Int64 {
        guard let milliseconds = EPFValues.milliseconds(isoDate: since) else {
            throw QueryError.badArgument(name: "since", message: "'\(since.prefix(40))' is not a date as YYYY-MM-DD")
        }
        if let kind, !ChangeLog.kindWords.contains(kind) {
            throw QueryError.badArgument(name: "kind", message: "unknown kind '\(kind.prefix(40))'; use "
                                         + ChangeLog.kindWords.joined(separator: ", "))
        }
        return milliseconds
    }

    /// Whether `id`, not found in `kind`'s table, left the store: what `GET /v1/apps/{id}` says instead of a bare
    /// "not found" (the same facts as `removedIds` of a lookup). Nil when it did not, or without a changes table.
    package func removal(of id: Int64, kind: EntityKind) throws -> RemovedItem? {
        try reading { try latestRemoval(of: StoreLink(id: id, kind: kind, country: nil), argument: String(id)) }
    }

    /// Whether an id not found (a lookup's argument, or `epf prices`'s) left the store, as `lookup` says it: the
    /// latest change recorded for it (in the link's kind, or any kind) is a removal. Nil when it did not, or
    /// without a changes table.
    package func removal(of link: StoreLink, argument: String) throws -> RemovedItem? {
        try reading { try latestRemoval(of: link, argument: argument) }
    }

    /// Whether an id a lookup did not find left the store: the latest change recorded for it (in the link's
    /// kind, or any kind) is a removal. Latest is the last recorded (`seq`), not the latest export date: after
    /// `epf import --force` of an older full export, the removal that full recorded is the newest fact though an
    /// export of a later date had added the id. Call inside `reading`; nil without a changes table.
    func latestRemoval(of link: StoreLink, argument: String) throws -> RemovedItem? {
        guard tables.contains(ChangeLog.table) else { return nil }
        let wanted = link.kind.flatMap { ChangeLog.kinds[$0.table] }
        var latest: [String: (change: String, date: Int64)] = [:]
        try forEachRow("SELECT kind, change, export_date FROM epf_changes WHERE id = ?1 "
                       + "ORDER BY seq DESC", [.integer(link.id)]) { row in
            let statement = row.statement
            guard let kind = statement.text(at: 0), wanted == nil || wanted == kind, latest[kind] == nil else {
                return true
            }
            latest[kind] = (statement.text(at: 1) ?? "", statement.int64(at: 2) ?? 0)
            return true
        }
        for kind in ChangeLog.kindWords {
            if let last = latest[kind], last.change == "removed" {
                return RemovedItem(id: link.id, kind: kind, exportDate: last.date, argument: argument)
            }
        }
        return nil
    }
}

/// The opaque cursor of a changes page: the position of its last change, base64url.
enum ChangeCursor {
    static func encode(date: Int64, sequence: Int64) -> String {
        Data("c1.\(date).\(sequence)".utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The position, nil when the text is not a cursor `encode` made.
    static func decode(_ text: String) -> (date: Int64, sequence: Int64)? {
        guard !text.isEmpty, text.utf8.count <= 64,
              text.utf8.allSatisfy({ $0 == 0x2D || $0 == 0x5F || isalnum(Int32($0)) != 0 }) else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.utf8.count % 4) % 4)
        guard let data = Data(base64Encoded: base64) else { return nil }
        let parts = String(decoding: data, as: UTF8.self).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "c1", let date = Int64(parts[1]), let sequence = Int64(parts[2]),
              date >= 0, sequence >= 0, encode(date: date, sequence: sequence) == text else { return nil }
        return (date, sequence)
    }
}
