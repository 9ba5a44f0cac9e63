import EPFFormat
import Foundation

/// Errors of the import as a whole (per-table data problems are outcomes, not errors).
package enum ImportError: Error, CustomStringConvertible, Equatable {
    /// Another import holds the lock.
    case locked(database: String, lockFile: String)
    /// A file could not be opened or written.
    case io(path: String, message: String)
    /// This user may not write the database: its lock file (beside it) cannot be made or opened (`EACCES`,
    /// `EPERM`).
    case noPermission(database: String, lockFile: String)
    /// An input path does not exist.
    case missingInput(path: String)
    /// An input directory holds no table file.
    case noTables(path: String)
    /// A bad option value.
    case badOption(String)
    /// The filesystem holding the database lacks the space the import is estimated to need (`SpaceCheck`).
    case noSpace(directory: String, message: String)

    package var description: String {
        switch self {
        case .locked(let database, let lockFile):
            return "another import is running on \(database) (lock \(lockFile) is held); try again when it ends"
        case .io(let path, let message):
            return "\(path): \(message)"
        case .noPermission(let database, let lockFile):
            return "cannot import into \(database): permission denied: this user may not write its lock file "
                + "\(lockFile) (the database's directory, or the file); run the import as the database's owner"
        case .missingInput(let path):
            return "\(path): no such file or directory"
        case .noTables(let path):
            return "\(path): no EPF table files found (plain, .gz, .bz2 or .tbz)"
        case .badOption(let message), .noSpace(_, let message):
            return message
        }
    }
}

extension ImportError {
    /// Checks an import's inputs before anything is opened: every path exists (`missingInput`), and a directory
    /// holds at least one table file (`noTables`: a download that left it empty, a wrong path).
    package static func checkInputs(_ paths: [String]) throws {
        for path in paths {
            guard FileManager.default.fileExists(atPath: path) else { throw ImportError.missingInput(path: path) }
            if let files = try? FeedInput.files(at: path), files.isEmpty { throw ImportError.noTables(path: path) }
        }
    }
}
