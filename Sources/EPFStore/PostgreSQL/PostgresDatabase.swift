import EPFFormat
import EPFImport
import EPFPostgres
import EPFStore
import Foundation

/// A PostgreSQL target of `epf import`: a connection URL and the schema that holds the EPF tables and epf's
/// bookkeeping (`epf_ledger`, `epf_sources`, `epf_tables`, `epf_progress`, as in SQLite).
package struct PostgresTarget: Sendable {
    /// The URL as given (may hold a password: never printed; see `displayURL`).
    package let url: String
    /// The schema, `defaultSchema` unless given.
    package let schema: String
    /// The schema used when none is given.
    package static let defaultSchema = "epf"

    /// Throws `ImportError.badOption` for a schema name that is not letters, digits and `_` (at most 40).
    package init(url: String, schema: String = PostgresTarget.defaultSchema) throws {
        let allowed = schema.utf8.allSatisfy { byte in
            (0x61...0x7a).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x5f
        }
        guard !schema.isEmpty, schema.utf8.count <= 40, allowed, let first = schema.utf8.first,
              !(0x30...0x39).contains(first) else {
            throw ImportError.badOption("--schema '\(schema.prefix(60))' must be lower-case letters, digits and _ "
                                        + "(at most 40, not starting with a digit)")
        }
        self.url = url
        self.schema = schema
    }

    /// The URL without its password, and the schema, for messages and reports.
    package var display: String { "\(PostgresURL.redacted(url)) (schema \(schema))" }

    /// `"schema"."name"`.
    func qualified(_ name: String) -> String { "\(Self.quote(schema)).\(Self.quote(name))" }

    /// A double-quoted SQL identifier.
    static func quote(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

    /// Connects. Throws `PostgresError`.
    package func connect() throws -> PostgresConnection { try PostgresConnection(url: url) }

    /// Takes the import lock of this schema for the connection's session: a PostgreSQL advisory lock, released
    /// when the session ends (even when epf is killed or the connection drops). Throws `ImportError.locked` when
    /// another session still holds it after `lockPatienceSeconds`: the session of an epf that has just exited
    /// holds it until its server process notices the closed connection, a moment later, and a cron job run
    /// right after another must not fail for that.
    func lock(_ connection: PostgresConnection) throws {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(Self.lockPatienceSeconds * 1e9)
        while try connection.scalar("SELECT pg_try_advisory_lock(hashtextextended($1, 0))",
                                    ["epf import " + schema]) != "t" {
            guard DispatchTime.now().uptimeNanoseconds < deadline else {
                throw ImportError.locked(database: display, lockFile: "advisory lock 'epf import \(schema)'")
            }
            usleep(100_000)
        }
    }

    /// Gives the import lock back at the end of an import, so that a status read right after does not see it held
    /// until the server notices the closed session (best effort: closing the session releases it anyway).
    func unlock(_ connection: PostgresConnection) {
        _ = try? connection.scalar("SELECT pg_advisory_unlock(hashtextextended($1, 0))", ["epf import " + schema])
    }

    /// True when another session (an import) holds this schema's import lock now: probed by taking it and, when
    /// that works, giving it back at once.
    func importLockHeld(_ connection: PostgresConnection) throws -> Bool {
        let key = ["epf import " + schema]
        guard try connection.scalar("SELECT pg_try_advisory_lock(hashtextextended($1, 0))", key) == "t" else {
            return true
        }
        _ = try connection.scalar("SELECT pg_advisory_unlock(hashtextextended($1, 0))", key)
        return false
    }

    /// How long `lock` waits for a session that holds the lock to end.
    static let lockPatienceSeconds = 3.0

    /// Creates the schema and the bookkeeping tables when missing.
    func createBookkeeping(_ connection: PostgresConnection) throws {
        let s = Self.quote(schema)
        try connection.execute("""
            CREATE SCHEMA IF NOT EXISTS \(s);
            CREATE TABLE IF NOT EXISTS \(s).epf_ledger (
                id bigserial PRIMARY KEY, source text NOT NULL, source_size bigint, source_mtime bigint,
                location text NOT NULL, feed text, feed_date text, table_name text NOT NULL, part bigint,
                export_date bigint, mode text, md5 text, rows bigint, rejects bigint, duplicates bigint, bytes bigint,
                started text, finished text, outcome text NOT NULL, message text, repaired bigint);
            CREATE INDEX IF NOT EXISTS epf_ledger_source ON \(s).epf_ledger (source, outcome);
            CREATE TABLE IF NOT EXISTS \(s).epf_sources (
                source text PRIMARY KEY, size bigint, mtime bigint, md5 text, feed_date text, finished text,
                outcome text);
            CREATE TABLE IF NOT EXISTS \(s).epf_tables (
                table_name text PRIMARY KEY, rows bigint, export_date bigint, mode text, location text, updated text);
            CREATE TABLE IF NOT EXISTS \(s).epf_progress (
                staging text PRIMARY KEY, table_name text, source text, source_size bigint, source_mtime bigint,
                part bigint, location text, records_done bigint, rows bigint, rejects bigint, duplicates bigint,
                rejects_bytes bigint, export_date bigint, updated text, repaired bigint, left_out bigint);
            ALTER TABLE \(s).epf_progress ADD COLUMN IF NOT EXISTS left_out bigint;
            CREATE TABLE IF NOT EXISTS \(s).epf_settings (
                name text PRIMARY KEY, value text NOT NULL, updated text NOT NULL);
            """)
    }

    /// True when `schema.name` is a table.
    func tableExists(_ connection: PostgresConnection, _ name: String) throws -> Bool {
        try connection.scalar("SELECT to_regclass($1) IS NOT NULL", [qualified(name)]) == "t"
    }

    /// The column names of a table in order, with their types.
    func columns(_ connection: PostgresConnection, _ table: String) throws -> [(name: String, type: String)] {
        try connection.query("""
            SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a
            WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum
            """, [qualified(table)]).compactMap { row in
            guard let name = row.first ?? nil, row.count > 1, let type = row[1] else { return nil }
            return (name, type)
        }
    }

    /// The column type used for a column of the feed.
    static func kind(_ column: ColumnSpec) -> PostgresColumnKind {
        switch column.type {
        case .integer: return .bigint
        case .boolean: return .boolean
        case .decimal: return .numeric
        case .datetime: return .timestamptz
        case .text: return .text
        }
    }
}
