import EPFFormat
import Foundation

/// The tables of each full export one import path holds (a feed directory, a mirror, a feed's archive), gathered
/// as the path is read and recorded, so that status can tell the tables a newer full of their feed no longer
/// contained (`RetiredTables`).
///
/// Only a path that is a whole export counts (a directory, or an archive named as a feed export): a single table
/// file says nothing about the others. A table file's table is known from its name even when it was not read
/// (applied before, damaged); a feed's archive not read through leaves its feed's listing unknown, and nothing is
/// recorded for that feed.
struct ExportListing {
    /// Whether the path is a whole export (see above).
    let wholeExport: Bool
    let path: String
    /// Tables by feed and date (`feed/YYYYMMDD`).
    private var tables: [String: Set<String>] = [:]
    /// The feeds (`feed/YYYYMMDD`) a FULL file was read from.
    private var fullFeeds: Set<String> = []
    /// The feeds whose listing is not known whole.
    private var unknown: Set<String> = []

    init(path: String) {
        self.path = path
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
        wholeExport = exists && (isDirectory.boolValue
            || FeedInput.feedAndDate(in: (path as NSString).lastPathComponent) != nil)
    }

    private static func key(_ feed: String, _ date: String) -> String { feed + "/" + date }

    /// A table file read (or about to be read) from the path.
    mutating func read(_ file: TableFile, mode: ExportMode?) {
        guard wholeExport, let feed = file.feed, let date = file.feedDate else { return }
        tables[Self.key(feed, date), default: []].insert(file.table)
        if mode != .incremental { fullFeeds.insert(Self.key(feed, date)) }
    }

    /// A reading unit not read through (applied before, or failed): its table from its file name, or, for a feed's
    /// archive, its feed's listing unknown.
    mutating func unread(_ unit: [String]) {
        guard wholeExport else { return }
        for file in unit {
            guard let (feed, date) = FeedInput.feedAndDate(in: file) else { continue }
            let name = (file as NSString).lastPathComponent
            if FeedInput.feedAndDate(in: name) != nil {
                unknown.insert(Self.key(feed, date))
            } else {
                let table = FeedInput.tableName(fromFileName: name).table
                if TableName.problem(table) == nil { tables[Self.key(feed, date), default: []].insert(table) }
            }
        }
    }

    /// Records the tables of each full export read whole in the store's settings (`RetiredTables`); best effort,
    /// as a refusal is recorded: a store gone away leaves it for the next import of the export.
    func record<Ledger: ImportLedger>(_ ledger: Ledger) {
        guard wholeExport else { return }
        for key in fullFeeds.subtracting(unknown).sorted() {
            let parts = key.split(separator: "/", maxSplits: 1).map(String.init)
            guard parts.count == 2, let listed = tables[key] else { continue }
            try? ledger.setSetting(RetiredTables.exportTablesSetting(feed: parts[0], date: parts[1]),
                                   to: listed.sorted().joined(separator: ","))
        }
    }
}
