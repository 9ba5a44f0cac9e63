import EPFFormat
import Foundation

/// One file on the feed server and the place it takes in the mirror.
package struct RemoteFile: Sendable, Codable, Equatable {
    /// The file's URL.
    package var url: String
    /// The URL of its `.md5` sidecar.
    package var md5URL: String
    /// Where it goes, relative to the mirror: `itunes20260105/application.tbz`,
    /// `incremental/20260106/itunes20260106/application.tbz`, or `itunes20130205.tbz` (v3).
    package var mirrorPath: String
    /// The feed (`itunes`, `pricing`, ...).
    package var feed: String
    /// The export date, `YYYYMMDD`.
    package var date: String
    /// The table, for v4/v5 (one archive per table); nil for a v3 archive holding the whole feed.
    package var table: String?
    /// True for an incremental export.
    package var incremental: Bool
    /// The feed directory the file belongs to, relative to the mirror (v4/v5), e.g. `itunes20260105`; the mirror
    /// assembles a new one aside and shows it whole.
    package var feedDirectory: String?
}

/// Finds what the server publishes: the newest full export of each feed and the incrementals after it.
///
/// v4/v5: `BASE/<feed><date>/<table>.tbz` (+ `.md5`) and `BASE/incremental/current/<feed><date>/<table>.tbz`;
/// when `incremental/current/` is missing, the dated `BASE/incremental/<date>/` (or `<date>/current/`) folders.
/// v3: `BASE/<feed><date>.tbz` and `BASE/incremental/current/<feed><date>.tbz`.
struct RemoteTree {
    let base: String
    let feeds: Set<String>
    let tables: Set<String>?
    let session: HTTPSession
    let log: (String) -> Void

    init(base: String, feeds: Set<String>, tables: Set<String>?, session: HTTPSession,
         log: @escaping (String) -> Void) {
        self.base = base.hasSuffix("/") ? base : base + "/"
        self.feeds = feeds
        self.tables = tables
        self.session = session
        self.log = log
    }

    /// Every file to mirror. Throws `FetchError.noFeed` when the base has no full export of the feeds.
    func files() throws -> [RemoteFile] {
        guard let html = try session.text(base, log: log) else {
            throw FetchError.noFeed(url: base, message: "HTTP 404: no feed listing here; check --url")
        }
        let fulls = newestPerFeed(Listing.entries(html))
        guard !fulls.isEmpty else {
            throw FetchError.noFeed(url: base, message: "no full export of \(feeds.sorted().joined(separator: ", ")) "
                                    + "(expected entries like itunes20260105/ or itunes20260105.tbz)")
        }
        var result: [RemoteFile] = []
        for (feed, entry) in fulls.sorted(by: { $0.key < $1.key }) {
            result += try filesOf(entry: entry, at: base, mirrorPrefix: "", feed: feed, incremental: false)
                ?? { throw FetchError.noFeed(url: base + entry.name + "/", message: "listed, but HTTP 404") }()
        }
        let fullDates = fulls.mapValues { FeedInput.feedAndDate(in: $0.name)?.date ?? "" }
        for (folder, entry) in try incrementalEntries() {
            guard let parsed = FeedInput.feedAndDate(in: entry.name), let fullDate = fullDates[parsed.feed],
                  parsed.date > fullDate else { continue }
            let prefix = "incremental/\(parsed.date)/"
            guard let files = try filesOf(entry: entry, at: folder, mirrorPrefix: prefix, feed: parsed.feed,
                                          incremental: true) else {
                log("note: \(folder)\(entry.name) is listed but not published yet (HTTP 404); skipped")
                continue
            }
            result += files
        }
        return result
    }

    /// The newest `<feed><date>` entry of each requested feed.
    private func newestPerFeed(_ entries: [ListingEntry]) -> [String: ListingEntry] {
        var newest: [String: (date: String, entry: ListingEntry)] = [:]
        for entry in entries where entry.isDirectory || entry.name.hasSuffix(".tbz") {
            guard let parsed = FeedInput.feedAndDate(in: entry.name), feeds.contains(parsed.feed) else { continue }
            if let current = newest[parsed.feed], current.date >= parsed.date { continue }
            newest[parsed.feed] = (parsed.date, entry)
        }
        return newest.mapValues(\.entry)
    }

    /// The incremental feed entries with the folder URL that lists them.
    private func incrementalEntries() throws -> [(folder: String, entry: ListingEntry)] {
        let current = base + "incremental/current/"
        if let html = try session.text(current, log: log) {
            return feedEntries(Listing.entries(html)).map { (current, $0) }
        }
        guard let html = try session.text(base + "incremental/", log: log) else { return [] }
        var result: [(String, ListingEntry)] = []
        let dated = Listing.entries(html).filter {
            $0.isDirectory && $0.name.count == 8 && $0.name.allSatisfy { $0.isASCII && $0.isNumber }
        }
        for day in dated.sorted(by: { $0.name < $1.name }) {
            var folder = base + "incremental/\(day.name)/"
            guard var entries = try session.text(folder, log: log).map(Listing.entries) else { continue }
            if entries.contains(where: { $0.isDirectory && $0.name == "current" }) {
                folder += "current/"
                entries = try session.text(folder, log: log).map(Listing.entries) ?? []
            }
            result += feedEntries(entries).map { (folder, $0) }
        }
        return result
    }

    private func feedEntries(_ entries: [ListingEntry]) -> [ListingEntry] {
        entries.filter { entry in
            guard entry.isDirectory || entry.name.hasSuffix(".tbz"),
                  let parsed = FeedInput.feedAndDate(in: entry.name) else { return false }
            return feeds.contains(parsed.feed)
        }
    }

    /// The files of one feed entry: the table archives of a v4/v5 directory, or a v3 archive itself. Nil when the
    /// directory's listing is 404.
    private func filesOf(entry: ListingEntry, at folder: String, mirrorPrefix: String, feed: String,
                         incremental: Bool) throws -> [RemoteFile]? {
        let date = FeedInput.feedAndDate(in: entry.name)?.date ?? ""
        guard entry.isDirectory else {
            return [RemoteFile(url: folder + escape(entry.name), md5URL: folder + escape(entry.name) + ".md5",
                               mirrorPath: mirrorPrefix + entry.name, feed: feed, date: date, table: nil,
                               incremental: incremental, feedDirectory: nil)]
        }
        let directoryURL = folder + escape(entry.name) + "/"
        guard let html = try session.text(directoryURL, log: log) else { return nil }
        let entries = Listing.entries(html)
        let names = Set(entries.map(\.name))
        var result: [RemoteFile] = []
        for file in entries where !file.isDirectory && !file.name.lowercased().hasSuffix(".md5")
            && !file.name.hasPrefix(".") {
            let table = FeedInput.tableName(fromFileName: file.name).table
            if let tables, !tables.contains(table) { continue }
            guard names.contains(file.name + ".md5") else {
                if file.name.hasSuffix(".tbz") {
                    log("warning: \(directoryURL)\(file.name) has no .md5 beside it; skipped (it cannot be verified)")
                }
                continue
            }
            result.append(RemoteFile(url: directoryURL + escape(file.name),
                                     md5URL: directoryURL + escape(file.name) + ".md5",
                                     mirrorPath: mirrorPrefix + entry.name + "/" + file.name, feed: feed, date: date,
                                     table: table, incremental: incremental,
                                     feedDirectory: mirrorPrefix + entry.name))
        }
        return result
    }

    private func escape(_ name: String) -> String {
        name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? name
    }
}
