import Foundation

/// A failed libpq call or SQL command: what epf was doing, the server's (or libpq's) message and, for server
/// errors, the SQLSTATE code. Never holds a password: messages name the redacted URL only.
package struct PostgresError: Error, CustomStringConvertible, Sendable {
    /// What epf was doing, e.g. "connecting to postgresql://epf@db/epf" or the first words of a command.
    package let context: String
    /// libpq's or the server's message, trimmed.
    package let message: String
    /// The five-character SQLSTATE of a server error (e.g. 23505 unique violation), nil for client errors.
    package let sqlState: String?

    package init(context: String, message: String, sqlState: String? = nil) {
        self.context = context
        self.message = message.trimmingCharacters(in: .whitespacesAndNewlines)
        self.sqlState = sqlState
    }

    /// True for a unique-constraint violation (SQLSTATE 23505).
    package var isUniqueViolation: Bool { sqlState == "23505" }

    /// True when the connection itself is gone (SQLSTATE class 08, or a client-side error with no state).
    package var isConnectionLost: Bool { sqlState == nil || sqlState?.hasPrefix("08") == true || sqlState == "57P01" }

    package var description: String {
        let state = sqlState.map { " (SQLSTATE \($0))" } ?? ""
        return "PostgreSQL: \(context): \(message)\(state)"
    }
}
