import EPFImport
import EPFPostgres
import EPFPostgresStore
import EPFStore
import Foundation

/// `epf import`, `sync` and `status` with a postgresql:// URL: the PostgreSQL importer and status, and how their
/// errors map to exit statuses (a refused connection is 69, the schema's import lock 75).
enum PostgresCLI {
    static func target(url: String, schema: String) throws -> PostgresTarget {
        do {
            return try PostgresTarget(url: url, schema: schema)
        } catch let error as ImportError {
            throw UsageError(error.description)
        }
    }

    static func runImport(paths: [String], settings: ImportRunner.Settings) throws -> ExitCode {
        let target = try target(url: settings.database, schema: settings.schema)
        return try ImportRunner.runImporter(settings) { progress in
            let importer = try PostgresImporter(target: target, options: settings.options, progress: progress)
            return { try importer.run(paths: paths) }
        } storeFailure: { error in
            (error as? PostgresError).map { CommandFailure(.unavailable, "\($0)") }
        }
    }

    static func status(url: String, schema: String, lastImports: Int) throws -> StoreStatus {
        let target = try target(url: url, schema: schema)
        do {
            let connection = try target.connect()
            return try StoreStatus.read(connection, target: target, lastImports: lastImports)
        } catch let error as PostgresError {
            throw CommandFailure(.unavailable, "\(error)")
        }
    }
}
