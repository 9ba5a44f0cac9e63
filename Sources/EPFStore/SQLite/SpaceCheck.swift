import EPFFormat
import EPFImport
import EPFSchema
import EPFSQLite
import Foundation

/// The space an import will need, estimated before anything is written, against the space free where the
/// database lives: `epf import` and `epf sync` refuse (exit 73) rather than fail halfway through a full export.
///
/// needed = uncompressed input x `highWaterRatio`. The input is what this run would still apply: inputs the ledger
/// shows applied, and tables `--only`/`--skip` leave out (where the file name tells the table), are not counted.
/// Free = the filesystem's free bytes (`statvfs`) plus the free pages inside the database, which SQLite reuses.
package struct SpaceCheck: Sendable {
    /// Bytes on disk at the high-water mark of an import per uncompressed input byte: the new tables with their
    /// indexes, the old tables (kept until each swap), the WAL before it is checkpointed, the search index, the
    /// lookup documents and the read-ahead spill file, all at once.
    ///
    /// Measured with `df` polled every 20 ms on a tmpfs holding only the database and `TMPDIR`, importing a
    /// generated full of 20,000 apps (175,828,062 bytes of tables; `docs/import.md` has the runs): 2.05 into an
    /// empty database (rollback journal, no WAL), 2.43 over the sample feed and 2.82 for the next week's full over
    /// the previous one (both in WAL mode; the WAL peaked at about half of the peak). Rounded up to 3.
    static let highWaterRatio = 3.0

    /// The directory the database is in.
    package var directory: String
    /// Uncompressed bytes still to apply.
    var inputBytes: Int64
    /// Input files whose uncompressed size is an estimate (bzip2 without a tar header, see `InputSize`).
    var estimatedFiles: Int
    /// Bytes the import is expected to need at its high-water mark.
    var neededBytes: Int64
    /// Bytes free on the database's filesystem.
    package var freeBytes: Int64
    /// Free pages inside the database, reused before the file grows.
    var reusableBytes: Int64

    /// True when the space free (and reusable) covers the estimate.
    package var fits: Bool { neededBytes <= freeBytes + reusableBytes }

    /// Estimates the space an import of `paths` into `databasePath` needs. `selected` is the `--only`/`--skip`
    /// test. Throws `ImportError.io` when the directory's free space cannot be read; an input that cannot be
    /// measured is left to the import itself, which reports it.
    /// With rank history (`ranks` true, or nil and the database records ranks), the popularity inputs count
    /// `rankHistoryRatio` more: the day's lists and item index beside the table.
    package static func estimate(paths: [String], databasePath: String, ranks: Bool? = nil,
                                 selected: (String) -> Bool) throws -> SpaceCheck {
        let directory = DiskSpace.directory(of: databasePath)
        let applied = AppliedSources(databasePath: databasePath)
        let recordsRanks = ranks ?? applied.recordsRanks
        var inputBytes: Int64 = 0
        var rankBytes = 0.0
        var estimatedFiles = 0
        for path in paths {
            guard let units = try? FeedInput.units(at: path) else { continue }
            for unit in units where !applied.contains(SourceIdentity(paths: unit), unit: unit) {
                for file in unit {
                    let name = (file as NSString).lastPathComponent
                    // A feed archive (itunes20260105.tbz) holds many tables: its name selects nothing.
                    if FeedInput.feedAndDate(in: name) == nil,
                       !selected(FeedInput.tableName(fromFileName: name).table) {
                        continue
                    }
                    guard let size = try? FeedInput.uncompressedSize(of: file) else { continue }
                    inputBytes += size.bytes
                    if recordsRanks, Self.isPopularity(name) { rankBytes += Double(size.bytes) * rankHistoryRatio }
                    if size.source == .estimated { estimatedFiles += 1 }
                }
            }
        }
        return SpaceCheck(directory: directory, inputBytes: inputBytes, estimatedFiles: estimatedFiles,
                          neededBytes: Int64((Double(inputBytes) * highWaterRatio + rankBytes).rounded(.up)),
                          freeBytes: try DiskSpace.available(at: directory), reusableBytes: applied.freePageBytes)
    }

    /// Bytes of rank history per uncompressed byte of a popularity table (about 40 bytes a row): a keyframe day's
    /// lists cost about 5 bytes an entry and its item index about 3, a delta day's 1.2 and about 3 for each entry
    /// new to a chart. 0.9 covers a first day with room; later days take far less.
    static let rankHistoryRatio = 0.9

    /// Whether a file name is a popularity table's, or a v3 popularity feed archive.
    static func isPopularity(_ name: String) -> Bool {
        if let feed = FeedInput.feedAndDate(in: name) { return feed.feed == "popularity" }
        return RankChart(table: FeedInput.tableName(fromFileName: name).table) != nil
    }

    /// The refusal, naming the directory, the bytes needed and free, and the flag that skips the check.
    package var refusal: ImportError {
        var free = "\(Self.bytes(freeBytes)) free"
        if reusableBytes > 0 { free += " (+ \(Self.bytes(reusableBytes)) of free pages inside the database)" }
        var input = "\(Self.bytes(inputBytes)) of uncompressed input"
        if estimatedFiles > 0 { input += " (\(estimatedFiles) bzip2 files estimated at \(FeedInput.bzip2Ratio)x)" }
        return .noSpace(directory: directory, message: "not enough space in \(directory) for this import: it needs "
                        + "about \(Self.bytes(neededBytes)) (\(input) x \(Self.highWaterRatio), the measured "
                        + "high-water ratio of tables, indexes and WAL) and there are \(free). Nothing was changed. "
                        + "Free space or use a larger filesystem; --no-space-check skips this estimate.")
    }

    /// `123456789 bytes (123.5 MB)`.
    static func bytes(_ count: Int64) -> String {
        "\(count) bytes (\(String(format: "%.1f", Double(count) / 1_000_000)) MB)"
    }
}

/// What the ledger of an existing database says is applied, read before the import opens it for writing.
private struct AppliedSources {
    /// Input files applied whole (`epf_sources`).
    private var sources = Set<String>()
    /// Input files some table of which was applied (`epf_ledger`).
    private var tablesFrom = Set<String>()
    /// Free pages inside the database (`freelist_count * page_size`).
    private(set) var freePageBytes: Int64 = 0
    /// Whether the database records ranks (`--history ranks`).
    private(set) var recordsRanks = false

    /// Reads the ledger read-only; a missing or unreadable database has applied nothing.
    init(databasePath: String) {
        guard FileManager.default.fileExists(atPath: databasePath),
              let connection = try? SQLiteConnection(path: databasePath, mode: .readOnly) else { return }
        if case .integer(let pages) = try? connection.scalar("PRAGMA freelist_count"),
           case .integer(let size) = try? connection.scalar("PRAGMA page_size") {
            freePageBytes = pages * size
        }
        if case .text(let history) = try? connection.scalar("SELECT value FROM epf_settings WHERE name = ?1",
                                                            [.text(PriceRecording.setting)]) {
            recordsRanks = HistoryRequest(setting: history).ranks
        }
        guard (try? connection.tableExists("epf_ledger")) == true,
              let rows = try? connection.query(
                "SELECT DISTINCT source, source_size, source_mtime FROM epf_ledger WHERE outcome = 'applied'")
        else { return }
        for row in rows where row.count == 3 {
            if case .text(let path) = row[0], case .integer(let size) = row[1], case .integer(let mtime) = row[2] {
                tablesFrom.insert(Self.key(path, size, mtime))
            }
        }
        guard let whole = try? connection.query(
            "SELECT source, size, mtime FROM epf_sources WHERE outcome = 'applied'") else { return }
        for row in whole where row.count == 3 {
            if case .text(let path) = row[0], case .integer(let size) = row[1], case .integer(let mtime) = row[2] {
                sources.insert(Self.key(path, size, mtime))
            }
        }
    }

    private static func key(_ path: String, _ size: Int64, _ mtime: Int64) -> String {
        "\(path)\u{1}\(size)\u{1}\(mtime)"
    }

    /// Whether the import will skip this unit: the whole file was applied, or a table was applied from a file
    /// that holds one table (a v4/v5 archive, a plain table file). A feed archive (v3) applied in part counts
    /// whole, since which of its tables are left is not known without reading it.
    func contains(_ source: SourceIdentity, unit: [String]) -> Bool {
        let key = Self.key(source.path, source.size, source.mtime)
        if sources.contains(key) { return true }
        guard let first = unit.first, FeedInput.feedAndDate(in: (first as NSString).lastPathComponent) == nil
        else { return false }
        return tablesFrom.contains(key)
    }
}
