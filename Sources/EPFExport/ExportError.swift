import EPFParquet
import EPFSQLite
import Glibc

/// What stopped an export.
package enum ExportError: Error, CustomStringConvertible {
    /// No database at the path.
    case databaseMissing(path: String)
    /// The database holds no table an export can write (an empty file, or one never imported into).
    case databaseEmpty(path: String)
    /// `--tables` named a table the database does not have; `available` lists those it has.
    case unknownTable(name: String, available: [String])
    /// SQLite failed reading the database.
    case sqlite(SQLiteError)
    /// Writing a Parquet file failed.
    case parquet(ParquetError)
    /// A file system call on the output directory failed: the call, the path, `errno`.
    case system(call: String, path: String, errno: Int32)

    package var description: String {
        switch self {
        case .databaseMissing(let path):
            return "no database at \(path) (run epf import first, or pass --db)"
        case .databaseEmpty(let path):
            return "database '\(path)' holds no EPF tables (run epf import first, or pass --db)"
        case .unknownTable(let name, let available):
            return "the database has no table '\(name.prefix(60))'; it has: " + available.joined(separator: ", ")
        case .sqlite(let error):
            return "reading the database: \(error)"
        case .parquet(let error):
            return "writing Parquet: \(error)"
        case .system(let call, let path, let code):
            return "\(call) failed for \(path): \(String(cString: strerror(code))) (errno \(code))"
        }
    }
}
