import CSQLite

/// A row change SQLite is about to make, as its pre-update hook reports it: valid only during the callback.
package struct PreUpdateChange {
    /// What the statement does to the row.
    package enum Operation {
        case insert, update, delete
    }

    package let operation: Operation
    /// The schema (`main`, `temp`) and table of the row.
    package let database: UnsafePointer<CChar>
    package let table: UnsafePointer<CChar>
    fileprivate let handle: OpaquePointer

    /// A column of the row before the change (update, delete), nil when SQLite gives none.
    package func old(_ column: Int32) -> PreUpdateValue? {
        var value: OpaquePointer?
        guard operation != .insert, sqlite3_preupdate_old(handle, column, &value) == SQLITE_OK, let value else {
            return nil
        }
        return PreUpdateValue(value: value)
    }

    /// A column of the row after the change (insert, update), nil when SQLite gives none.
    package func new(_ column: Int32) -> PreUpdateValue? {
        var value: OpaquePointer?
        guard operation != .delete, sqlite3_preupdate_new(handle, column, &value) == SQLITE_OK, let value else {
            return nil
        }
        return PreUpdateValue(value: value)
    }
}

/// One value of a `PreUpdateChange`.
package struct PreUpdateValue {
    fileprivate let value: OpaquePointer

    package var isNull: Bool { sqlite3_value_type(value) == SQLITE_NULL }
    package var int64: Int64? { isNull ? nil : sqlite3_value_int64(value) }
    /// The value as a number (text that reads as one converted), nil when NULL.
    package var double: Double? { isNull ? nil : sqlite3_value_double(value) }
    /// The value when stored as a number (REAL or INTEGER), nil for NULL, text and blobs.
    package var realValue: Double? {
        let type = sqlite3_value_type(value)
        return type == SQLITE_FLOAT || type == SQLITE_INTEGER ? sqlite3_value_double(value) : nil
    }
    /// The value's UTF-8 text (numbers converted), nil when NULL: SQLite's bytes, valid only during the callback.
    ///
    /// A text is read as a blob: the values of a row the hook reports point into the row's record, without the
    /// terminating NUL that `sqlite3_value_text` would make SQLite allocate and copy for (four times a row, most
    /// of the hook's cost).
    package var textBytes: UnsafeRawBufferPointer? {
        switch sqlite3_value_type(value) {
        case SQLITE_NULL:
            return nil
        case SQLITE_TEXT:
            let count = Int(sqlite3_value_bytes(value))
            guard count > 0, let pointer = sqlite3_value_blob(value) else {
                return UnsafeRawBufferPointer(start: nil, count: 0)  // empty, not NULL
            }
            return UnsafeRawBufferPointer(start: pointer, count: count)
        default:
            guard let pointer = sqlite3_value_text(value) else { return nil }
            return UnsafeRawBufferPointer(start: pointer, count: Int(sqlite3_value_bytes(value)))
        }
    }

    /// The value's text (numbers converted), nil when NULL.
    package var text: String? { textBytes.map { String(decoding: $0, as: UTF8.self) } }
}

/// The callback a connection's pre-update hook calls, kept alive while installed.
final class PreUpdateCallback {
    let body: (PreUpdateChange) -> Void
    init(_ body: @escaping (PreUpdateChange) -> Void) { self.body = body }
}

extension SQLiteConnection {
    /// Calls `body` before every row this connection inserts, updates or deletes (SQLite's pre-update hook), with
    /// the row's values before and after; nil removes it. Unlike a trigger, the hook writes nothing, so a statement
    /// needs no statement journal for it. `body` must not use the connection. The corresponding C function is
    /// `sqlite3_preupdate_hook(3)`.
    package func setPreUpdateHook(_ body: ((PreUpdateChange) -> Void)?) {
        guard let body else {
            sqlite3_preupdate_hook(handle, nil, nil)
            preUpdateCallback = nil
            return
        }
        let callback = PreUpdateCallback(body)
        preUpdateCallback = callback
        sqlite3_preupdate_hook(handle, { context, db, operation, database, table, _, _ in
            guard let context, let db, let database, let table else { return }
            let kind: PreUpdateChange.Operation
            switch operation {
            case SQLITE_INSERT: kind = .insert
            case SQLITE_UPDATE: kind = .update
            case SQLITE_DELETE: kind = .delete
            default: return
            }
            Unmanaged<PreUpdateCallback>.fromOpaque(context).takeUnretainedValue()
                .body(PreUpdateChange(operation: kind, database: database, table: table, handle: db))
        }, Unmanaged.passUnretained(callback).toOpaque())
    }
}
