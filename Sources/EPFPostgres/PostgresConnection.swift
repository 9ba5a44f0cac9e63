import CLibPQ
import Foundation

/// One libpq connection (a `PGconn`), used by one thread at a time. Every call's result is checked: a failed
/// connection, command or COPY throws `PostgresError` with the server's message and SQLSTATE.
///
/// libpq is loaded at the first connection (see CLibPQ/shim.h), so commands that never touch PostgreSQL do not
/// pay for its shared libraries.
package final class PostgresConnection {
    private let raw: OpaquePointer
    /// The URL without its password, for messages.
    package let displayURL: String

    /// Connects (the corresponding C calls are `PQconnectdb` and `PQstatus`). The URL is passed to libpq as is,
    /// so the password may come from the URL, `PGPASSWORD` or `~/.pgpass`.
    package init(url: String) throws {
        displayURL = PostgresURL.redacted(url)
        guard let connection = epf_PQconnectdb(url) else {
            let message = epf_pq_available() == 0
                ? "libpq.so.5 could not be loaded (Debian package libpq5)" : "out of memory"
            throw PostgresError(context: "connecting to \(displayURL)", message: message)
        }
        guard epf_PQstatus(connection) == CONNECTION_OK else {
            let message = String(cString: epf_PQerrorMessage(connection))
            epf_PQfinish(connection)
            throw PostgresError(context: "connecting to \(displayURL)", message: message)
        }
        raw = connection
        // Notices (e.g. "table does not exist, skipping") would otherwise be printed by libpq on stderr.
        try execute("SET client_min_messages = warning")
    }

    deinit { epf_PQfinish(raw) }

    /// The server process serving this connection (`pg_backend_pid()`).
    package var backendPID: Int32 { epf_PQbackendPID(raw) }

    private static func summary(_ sql: String) -> String {
        let words = sql.split(whereSeparator: { $0 == " " || $0 == "\n" }).prefix(6).joined(separator: " ")
        return words.count > 80 ? String(words.prefix(80)) + "..." : words
    }

    /// Throws for a result that is not one of `accepted`, then clears it.
    private func check(_ result: OpaquePointer?, _ accepted: [ExecStatusType], context: String) throws {
        guard let result else {
            throw PostgresError(context: context, message: String(cString: epf_PQerrorMessage(raw)))
        }
        let status = epf_PQresultStatus(result)
        guard accepted.contains(status) else {
            let error = Self.error(result, context: context, connection: raw)
            epf_PQclear(result)
            throw error
        }
    }

    private static func error(_ result: OpaquePointer, context: String, connection: OpaquePointer)
        -> PostgresError {
        var message = String(cString: epf_PQresultErrorMessage(result))
        if message.isEmpty { message = String(cString: epf_PQerrorMessage(connection)) }
        let state = epf_PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
        return PostgresError(context: context, message: message, sqlState: state)
    }

    /// Runs `sql` with text parameters (`$1`, `$2`, ...; nil is NULL) and returns the rows as text (nil for NULL).
    @discardableResult
    package func query(_ sql: String, _ parameters: [String?] = []) throws -> [[String?]] {
        let context = Self.summary(sql)
        let result: OpaquePointer?
        if parameters.isEmpty {
            result = epf_PQexec(raw, sql)
        } else {
            var pointers: [UnsafeMutablePointer<CChar>?] = parameters.map { $0.flatMap { strdup($0) } }
            defer { pointers.forEach { free($0) } }
            result = pointers.withUnsafeMutableBufferPointer { buffer -> OpaquePointer? in
                guard let base = buffer.baseAddress else { return nil }
                return base.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: buffer.count) {
                    epf_PQexecParams(raw, sql, Int32(parameters.count), $0)
                }
            }
        }
        try check(result, [PGRES_COMMAND_OK, PGRES_TUPLES_OK], context: context)
        guard let result else { return [] }
        defer { epf_PQclear(result) }
        let rows = epf_PQntuples(result)
        let columns = epf_PQnfields(result)
        var output: [[String?]] = []
        output.reserveCapacity(Int(rows))
        for row in 0..<rows {
            var values: [String?] = []
            for column in 0..<columns {
                if epf_PQgetisnull(result, row, column) != 0 {
                    values.append(nil)
                } else {
                    values.append(String(cString: epf_PQgetvalue(result, row, column)))
                }
            }
            output.append(values)
        }
        return output
    }

    /// Runs a command (or several separated by `;` when there are no parameters).
    package func execute(_ sql: String, _ parameters: [String?] = []) throws {
        try query(sql, parameters)
    }

    /// The first column of the first row, nil when there is no row or it is NULL.
    package func scalar(_ sql: String, _ parameters: [String?] = []) throws -> String? {
        try query(sql, parameters).first?.first ?? nil
    }

    // MARK: - COPY FROM STDIN

    /// Starts `COPY ... FROM STDIN`; the server must answer that it waits for data (`PGRES_COPY_IN`).
    package func beginCopy(_ sql: String) throws {
        let result = epf_PQexec(raw, sql)
        try check(result, [PGRES_COPY_IN], context: Self.summary(sql))
        // The PGRES_COPY_IN result carries no data.
        if let result { epf_PQclear(result) }
    }

    /// Sends COPY data (the corresponding C call is `PQputCopyData`, which returns -1 on failure).
    package func putCopyData(_ bytes: UnsafeRawBufferPointer) throws {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        var offset = 0
        while offset < bytes.count {
            let chunk = min(bytes.count - offset, Int(Int32.max))
            let sent = epf_PQputCopyData(raw, (base + offset).assumingMemoryBound(to: CChar.self), Int32(chunk))
            guard sent == 1 else {
                throw PostgresError(context: "sending COPY data", message: String(cString: epf_PQerrorMessage(raw)))
            }
            offset += chunk
        }
    }

    /// Ends the COPY (`PQputCopyEnd`) and reads its outcome (`PQgetResult` until NULL): throws when the server
    /// refused the data. With `failure`, the server is told to abort the COPY instead.
    package func endCopy(failure: String? = nil) throws {
        let ended = failure.map { epf_PQputCopyEnd(raw, $0) } ?? epf_PQputCopyEnd(raw, nil)
        guard ended == 1 else {
            throw PostgresError(context: "ending COPY", message: String(cString: epf_PQerrorMessage(raw)))
        }
        var firstError: PostgresError?
        while let result = epf_PQgetResult(raw) {
            let status = epf_PQresultStatus(result)
            if status != PGRES_COMMAND_OK && firstError == nil {
                firstError = Self.error(result, context: "COPY", connection: raw)
            }
            epf_PQclear(result)
        }
        if let firstError, failure == nil { throw firstError }
    }
}
