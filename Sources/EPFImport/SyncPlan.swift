import EPFFormat
import Foundation

/// What `epf sync` will apply from a local mirror of Apple's EPF tree.
///
/// The mirror holds dated full exports, either as directories named `YYYYMMDD/` (holding `itunesYYYYMMDD.tbz`,
/// `pricingYYYYMMDD/`, ...) or as feed entries named `<feed>YYYYMMDD` directly in the root; incrementals sit
/// below in `incremental/YYYYMMDD/`, either inside the full's directory or in the root. Only the newest full
/// and the incrementals dated after it matter: incrementals are cumulative since their full.
package struct SyncPlan: Sendable {
    /// The date of the newest full export, `YYYYMMDD`.
    package var fullDate: String
    /// The paths of the newest full export (one directory, or several feed entries).
    package var fullPaths: [String]
    /// Incremental exports after the full, oldest first.
    package var incrementals: [(date: String, paths: [String])]

    /// Every path in the order to apply them.
    package var orderedPaths: [String] { fullPaths + incrementals.flatMap(\.paths) }

    /// Reads the mirror at `root`. Throws `ImportError.missingInput` when the root is missing and
    /// `ImportError.badOption` when it holds no dated full export.
    package static func read(root: String) throws -> SyncPlan {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ImportError.missingInput(path: root)
        }
        let rootEntries = datedEntries(in: root)
        // Incrementals sit in incremental/ of the root or of a dated full's directory.
        var incrementalRoots = [(root as NSString).appendingPathComponent("incremental")]
        for paths in rootEntries.values {
            for path in paths where isDirectoryPath(path) {
                incrementalRoots.append((path as NSString).appendingPathComponent("incremental"))
            }
        }
        // What an export is, its files say (`#exportMode`), not the folder it was put in: an incremental in the root
        // is an incremental, a full under incremental/ a full.
        var fulls: [String: [String]] = [:]
        var incrementals: [String: [String]] = [:]
        var charts: [String: [String]] = [:]
        func sort(_ entries: [String: [String]], unreadable: EntryKind) {
            for (date, paths) in entries {
                for path in paths {
                    switch kind(of: path) ?? unreadable {
                    case .full: fulls[date, default: []].append(path)
                    case .incremental: incrementals[date, default: []].append(path)
                    case .charts: charts[date, default: []].append(path)
                    }
                }
            }
        }
        // An entry that cannot be read says why when it is imported: in the root as a full, below as an incremental.
        sort(rootEntries, unreadable: .full)
        for incrementalRoot in incrementalRoots where isDirectoryPath(incrementalRoot) {
            sort(datedEntries(in: incrementalRoot), unreadable: .incremental)
        }
        // A day's charts belong to that day's full when there is one, else to the day's incremental.
        for (date, paths) in charts {
            if fulls[date] != nil {
                fulls[date, default: []] += paths
            } else {
                incrementals[date, default: []] += paths
            }
        }
        guard let newest = fulls.keys.max(), let fullPaths = fulls[newest] else {
            throw ImportError.badOption("\(root): no dated full export (YYYYMMDD/ or itunesYYYYMMDD with "
                                        + "#exportMode:FULL) found")
        }
        incrementals = incrementals.filter { $0.key > newest }
        return SyncPlan(fullDate: newest, fullPaths: fullPaths.sorted(by: Self.fullOrder),
                        incrementals: incrementals.keys.sorted().compactMap { date in
                            let paths = (incrementals[date] ?? []).sorted()
                            return paths.isEmpty ? nil : (date, paths)
                        })
    }

    /// The order of a full's feed entries: pricing first, then by name. Its `application_price` (350 million rows
    /// at Apple's scale) has by far the longest index build, which the import overlaps with the decompression of
    /// the next feed's first archive (read-ahead); last, it would overlap nothing.
    static func fullOrder(_ left: String, _ right: String) -> Bool {
        func rank(_ path: String) -> Int {
            FeedInput.feedAndDate(in: (path as NSString).lastPathComponent)?.feed == "pricing" ? 0 : 1
        }
        return (rank(left), left) < (rank(right), right)
    }

    /// Whether a directory is a mirror of Apple's tree rather than one export: it holds an `incremental/` folder,
    /// `YYYYMMDD/` folders, or entries of more than one date. `epf import` of a mirror applies what `epf sync`
    /// would (`read(root:)`), instead of every full in it and none of its incrementals.
    package static func isMirror(_ path: String) -> Bool {
        guard isDirectoryPath(path), FeedInput.feedAndDate(in: (path as NSString).lastPathComponent) == nil else {
            return false
        }
        if isDirectoryPath((path as NSString).appendingPathComponent("incremental")) { return true }
        let groups = datedEntries(in: path)
        return groups.count > 1 || groups.values.contains { $0.contains { isDirectoryPath($0)
            && (($0 as NSString).lastPathComponent.allSatisfy { $0.isASCII && $0.isNumber }) } }
    }

    /// What a dated entry of a mirror holds.
    enum EntryKind {
        /// A full export of the catalogue (with or without that day's charts).
        case full
        /// An incremental export (with or without that day's charts).
        case incremental
        /// Only charts: the popularity feed, whose tables are FULL files every day (Apple ships them daily, in the
        /// incrementals too), so their mode says nothing of the export's.
        case charts
    }

    /// The kind of an entry, from the `#exportMode` of its first table file outside the popularity feed; nil when
    /// it holds no table file or that file's header cannot be read (the import then says why).
    static func kind(of path: String) -> EntryKind? {
        guard let files = try? FeedInput.files(at: path), !files.isEmpty else { return nil }
        let charts = FeedName.popularity.rawValue
        guard let catalogue = files.first(where: { FeedInput.feedAndDate(in: $0)?.feed != charts }) else {
            return .charts
        }
        switch ImportOrder.exportMode(of: catalogue) {
        case .full: return .full
        case .incremental: return .incremental
        case nil: return nil
        }
    }

    static func isDirectoryPath(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    /// Entries of a directory grouped by their date: `YYYYMMDD` directories, and `<feed>YYYYMMDD[.tbz]` entries.
    static func datedEntries(in directory: String) -> [String: [String]] {
        var result: [String: [String]] = [:]
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        for name in names where !name.hasPrefix(".") && !name.hasSuffix(".md5") && !name.hasSuffix(".partial")
            && !name.hasSuffix(".part") && !name.hasSuffix(".state") && !name.hasSuffix(".tmp") {
            let path = (directory as NSString).appendingPathComponent(name)
            if name.count == 8, name.allSatisfy({ $0.isASCII && $0.isNumber }), isDirectoryPath(path) {
                result[name, default: []].append(path)
            } else if let feed = FeedInput.feedAndDate(in: name) {
                result[feed.date, default: []].append(path)
            }
        }
        return result
    }
}
