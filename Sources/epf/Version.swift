/// epf's version, written in this one place: `epf --version` prints it, the manual pages carry it, and
/// `scripts/package` reads it from `epf --version` (adding the commit) for the Debian package's version.
enum EPFVersion {
    static let number = "0.1.0"
}
