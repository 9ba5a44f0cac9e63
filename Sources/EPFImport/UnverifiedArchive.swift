import EPFFormat
import Foundation

/// An archive read without an `.md5` beside it. Apple publishes a sidecar for every `.tbz` of every feed version
/// (v3, v4, v5), and import checks the archive against it before reading: an archive without one is loaded all
/// the same (a mirror may have been filled by hand), but the import says that it was not verified.
enum UnverifiedArchive {
    /// The warning for `file` when it came from a `.tbz` archive that has no sidecar to check it against; nil when
    /// it was verified, is not from such an archive, or the import does not verify sidecars.
    static func warning(for file: TableFile, options: ReadOptions) -> String? {
        guard options.verifySidecars, file.verifiedMD5 == nil, let archive = file.archive else { return nil }
        let name = archive.lowercased()
        guard [".tbz", ".tbz2", ".tar.bz2"].contains(where: { name.hasSuffix($0) }),
              FeedInput.sidecar(for: archive) == nil else { return nil }
        let base = (archive as NSString).lastPathComponent
        return "no \(base).md5 beside \(archive): the archive was not verified (a mirror without its .md5 files "
            + "is not checked against what Apple published)"
    }
}
