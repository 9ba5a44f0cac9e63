import EPFFormat
import Foundation

/// The local mirror `epf sync` reads, and how fetch writes it so sync never sees a partial file or feed.
///
/// A verified file is renamed from `<name>.part` into place, its `.md5` beside it. A feed directory that is not in
/// the mirror yet (`itunes20260112/`) is assembled aside as `.itunes20260112.partial/` (hidden, so sync and import
/// skip it) and renamed into place when all its files are there; files added later to an existing feed directory
/// (another `--only`) are renamed straight into it.
package struct Mirror: Sendable {
    /// The mirror's root directory.
    package let root: String

    /// A mirror at `root`.
    package init(root: String) {
        self.root = root
    }

    func path(_ relative: String) -> String { (root as NSString).appendingPathComponent(relative) }

    /// The hidden directory where a new feed directory is assembled.
    func stagingPath(feedDirectory: String) -> String {
        let parent = (feedDirectory as NSString).deletingLastPathComponent
        let name = "." + (feedDirectory as NSString).lastPathComponent + ".partial"
        return path(parent.isEmpty ? name : parent + "/" + name)
    }

    /// Where `file` is written now: inside its staging directory while its feed directory is not in the mirror.
    func target(for file: RemoteFile) -> String {
        if let directory = file.feedDirectory, !isDirectory(path(directory)) {
            return (stagingPath(feedDirectory: directory) as NSString)
                .appendingPathComponent((file.mirrorPath as NSString).lastPathComponent)
        }
        return path(file.mirrorPath)
    }

    /// True when `target` holds a verified copy: the file and a `.md5` beside it saying `digest` (fetch writes
    /// the `.md5` only with a file whose download matched it).
    func holds(_ target: String, digest: String) -> Bool {
        guard FileManager.default.fileExists(atPath: target),
              let text = FileManager.default.contents(atPath: target + ".md5") else { return false }
        return MD5Sidecar.digest(String(decoding: text, as: UTF8.self)) == digest
    }

    /// Moves a verified download into place: the `.md5` first, then the file (both by rename).
    func install(_ download: Download) throws {
        let name = (download.target as NSString).lastPathComponent
        let sidecar = "MD5 (\(name)) = \(download.expectedMD5)\n"
        try PartFile.writeAtomically(Data(sidecar.utf8), to: download.target + ".md5")
        if rename(download.partPath, download.target) != 0 {
            throw FetchError.io(path: download.target, call: "rename", errno: errno)
        }
        unlink(download.partPath + ".state")
    }

    /// Creates the directory that will hold `target`.
    func prepare(_ target: String) throws {
        let directory = (target as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw FetchError.io(path: directory, call: "mkdir", errno: EACCES)
        }
    }

    /// Renames each staged feed directory into place when every file planned for it is there and verified.
    /// Returns the feed directories published.
    func publish(_ files: [(file: RemoteFile, digest: String)]) throws -> [String] {
        var byDirectory: [String: [(RemoteFile, String)]] = [:]
        for entry in files {
            if let directory = entry.file.feedDirectory { byDirectory[directory, default: []].append(entry) }
        }
        var published: [String] = []
        for (directory, entries) in byDirectory.sorted(by: { $0.key < $1.key }) {
            let staging = stagingPath(feedDirectory: directory)
            let final = path(directory)
            guard isDirectory(staging), !isDirectory(final) else { continue }
            let complete = entries.allSatisfy { file, digest in
                holds((staging as NSString).appendingPathComponent((file.mirrorPath as NSString).lastPathComponent),
                      digest: digest)
            }
            guard complete else { continue }
            if rename(staging, final) != 0 { throw FetchError.io(path: final, call: "rename", errno: errno) }
            published.append(directory)
        }
        return published
    }

    func isDirectory(_ path: String) -> Bool {
        var flag: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &flag) && flag.boolValue
    }
}

// MARK: - Keeping the newest fulls

extension Mirror {
    /// Removes full exports older than the newest `keep` dates, never the date in `protected` (the full the
    /// database was built from), and incremental folders older than the oldest full kept. Returns what it removed,
    /// relative to the root.
    package func prune(keep: Int, protected: String?) throws -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        var fulls: [String: [String]] = [:]
        for name in names where !name.hasPrefix(".") && !name.hasSuffix(".md5") && !name.hasSuffix(".part")
            && !name.hasSuffix(".state") {
            if let parsed = FeedInput.feedAndDate(in: name) { fulls[parsed.date, default: []].append(name) }
        }
        let dates = fulls.keys.sorted(by: >)
        let kept = Set(dates.prefix(max(1, keep))).union(protected.map { [$0] } ?? [])
        var removed: [String] = []
        for date in dates where !kept.contains(date) {
            for name in fulls[date] ?? [] {
                try remove(name)
                if FileManager.default.fileExists(atPath: path(name + ".md5")) { try remove(name + ".md5") }
                removed.append(name)
            }
        }
        guard let oldestKept = kept.min() else { return removed }
        let incremental = path("incremental")
        for day in (try? FileManager.default.contentsOfDirectory(atPath: incremental)) ?? []
        where day.count == 8 && day.allSatisfy({ $0.isASCII && $0.isNumber }) && day <= oldestKept {
            try remove("incremental/" + day)
            removed.append("incremental/" + day)
        }
        return removed
    }

    private func remove(_ relative: String) throws {
        do {
            try FileManager.default.removeItem(atPath: path(relative))
        } catch {
            throw FetchError.io(path: path(relative), call: "remove", errno: EACCES)
        }
    }
}
