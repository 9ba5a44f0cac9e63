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

    /// The name of a file within its export, from the `<feed>YYYYMMDD` component on
    /// (`/srv/mirror/incremental/20260106/itunes20260106/application.tbz` -> `itunes20260106/application.tbz`,
    /// `/m/itunes20260105.tbz:itunes20260105/application` -> `itunes20260105.tbz:itunes20260105/application`); nil when
    /// no component names a feed and date. Two files of the same name and size are the same file of the same
    /// export wherever the mirror was moved (the ledger's second key, besides the path).
    package static func exportName(of path: String) -> String? {
        let components = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard let start = components.lastIndex(where: { component in
            FeedInput.feedAndDate(in: String(component.split(separator: ":").first ?? "")) != nil
        }) else { return nil }
        return components[start...].joined(separator: "/")
    }

    /// This file's `exportName`, or its full path when it has none (so that only the same path matches).
    package var exportName: String { Self.exportName(of: path) ?? path }
}
