import EPFFormat
import Foundation

/// What `epf sync` will apply from a local mirror of Apple's EPF tree.
///
/// The mirror holds dated full exports, either as directories named `YYYYMMDD/` (holding `itunesYYYYMMDD.tbz`,
/// `pricingYYYYMMDD/`, ...) or as feed entries named `<feed>YYYYMMDD` directly in the root; incrementals sit
/// below in `incremental/YYYYMMDD/`, either inside the full's directory or in the root. Only the newest full
/// and the incrementals dated after it matter: incrementals are cumulative since their full.
public struct SyncPlan: Sendable {
    /// The date of the newest full export, `YYYYMMDD`.
    public var fullDate: String
    /// The paths of the newest full export (one directory, or several feed entries).
    public var fullPaths: [String]
    /// Incremental exports after the full, oldest first.
    public var incrementals: [(date: String, paths: [String])]

    /// Every path in the order to apply them.
    public var orderedPaths: [String] { fullPaths + incrementals.flatMap(\.paths) }

    /// Reads the mirror at `root`. Throws `ImportError.missingInput` when the root is missing and
    /// `ImportError.badOption` when it holds no dated full export.
    public static func read(root: String) throws -> SyncPlan {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ImportError.missingInput(path: root)
        }
        var groups = datedEntries(in: root)
        // What an export is, its files say (`#exportMode`), not the folder it was put in: an incremental placed in
        // the root is an incremental.
        var incrementals: [String: [String]] = [:]
        for (date, paths) in groups {
            let incremental = paths.filter { ImportOrder.exportMode(of: $0) == .incremental }
            guard !incremental.isEmpty else { continue }
            incrementals[date, default: []] += incremental
            let rest = paths.filter { !incremental.contains($0) }
            groups[date] = rest.isEmpty ? nil : rest
        }
        // Incrementals sit in incremental/ of the root or of a dated full's directory. A full export found there is
        // a full all the same (its files say FULL): it competes for the newest full like those of the root.
        var incrementalRoots = [(root as NSString).appendingPathComponent("incremental")]
        for paths in groups.values {
            for path in paths where isDirectoryPath(path) {
                incrementalRoots.append((path as NSString).appendingPathComponent("incremental"))
            }
        }
        for incrementalRoot in incrementalRoots where isDirectoryPath(incrementalRoot) {
            for (date, paths) in datedEntries(in: incrementalRoot) {
                // The day's charts are FULL files in every incremental (Apple ships popularity daily): a day that
                // brings only charts is that day's incremental, not a full export of the catalogue.
                let fulls = paths.filter { ImportOrder.exportMode(of: $0) == .full && !holdsOnlyCharts($0) }
                if !fulls.isEmpty { groups[date, default: []] += fulls }
                let rest = paths.filter { !fulls.contains($0) }
                if !rest.isEmpty { incrementals[date, default: []] += rest }
            }
        }
        guard let newest = groups.keys.max(), let fullPaths = groups[newest] else {
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
    public static func isMirror(_ path: String) -> Bool {
        guard isDirectoryPath(path), FeedInput.feedAndDate(in: (path as NSString).lastPathComponent) == nil else {
            return false
        }
        if isDirectoryPath((path as NSString).appendingPathComponent("incremental")) { return true }
        let groups = datedEntries(in: path)
        return groups.count > 1 || groups.values.contains { $0.contains { isDirectoryPath($0)
            && (($0 as NSString).lastPathComponent.allSatisfy { $0.isASCII && $0.isNumber }) } }
    }

    /// Whether every table file of an input belongs to the popularity feed (the daily charts).
    static func holdsOnlyCharts(_ path: String) -> Bool {
        let files = (try? FeedInput.files(at: path)) ?? []
        return !files.isEmpty && files.allSatisfy { FeedInput.feedAndDate(in: $0)?.feed == "popularity" }
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
