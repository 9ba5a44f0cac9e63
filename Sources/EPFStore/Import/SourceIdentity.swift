import EPFFormat
import Foundation

/// Identity of an input file on disk, used by the ledger and by resume.
package struct SourceIdentity: Equatable {
    package var path: String
    package var size: Int64
    package var mtime: Int64

    package init(path: String) {
        self.init(paths: [path])
    }

    /// One identity for a reading unit: the first file's path, the total size and the newest modification time.
    package init(paths: [String]) {
        path = paths.first.map { URL(fileURLWithPath: $0).standardizedFileURL.resolvingSymlinksInPath().path } ?? ""
        size = 0
        mtime = 0
        for file in paths {
            var info = stat()
            guard stat(file, &info) == 0 else {
                size = -1
                mtime = -1
                return
            }
            size += Int64(info.st_size)
            mtime = max(mtime, Int64(info.st_mtim.tv_sec) * 1000 + Int64(info.st_mtim.tv_nsec / 1_000_000))
        }
    }
}
