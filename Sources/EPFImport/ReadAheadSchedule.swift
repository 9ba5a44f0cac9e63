import EPFFormat
import Foundation

/// Where an import reads ahead and how much it keeps (see `ReadAheadFile`).
package struct ReadAheadSettings: Sendable {
    /// The database, in whose directory the spill file goes: the disk the import is budgeted on.
    package var databasePath: String
    /// The directory of the spill file. Nil: memory only.
    package var spillDirectory: String?
    /// How much is kept before the reader comes; the spill file is further bounded by `spillBound(input:)`.
    package var limits: ReadAheadFile.Limits
    /// Told the path of every file read ahead (for tests).
    package var started: (@Sendable (String) -> Void)?

    /// Settings for an import into the database at `databasePath`.
    package init(databasePath: String, limits: ReadAheadFile.Limits = ReadAheadFile.Limits()) {
        let directory = (databasePath as NSString).deletingLastPathComponent
        self.databasePath = databasePath
        spillDirectory = directory.isEmpty ? "." : directory
        self.limits = limits
    }

    /// The most the spill file of `input` may hold: the input's own size or a quarter of the database so far,
    /// whichever is more, within `limits.spillBytes`. So the disk it takes stays within what the import is allowed
    /// (twice the final database plus the input; a full import's high-water is about 1.2 times the database).
    func spillBound(input: String) -> Int64 {
        func size(_ path: String) -> Int64 {
            var info = stat()
            return stat(path, &info) == 0 ? Int64(info.st_size) : 0
        }
        return min(limits.spillBytes, max(size(input), size(databasePath) / 4))
    }
}

/// Decides which input unit of an import is read ahead while the current table finishes, and holds that
/// read-ahead until the import comes to the unit.
///
/// The unit read ahead is the next one the import will really read, in this input or else in the next one: units
/// the import skips (`skipped`, e.g. already applied sources) are never opened, nor are files whose name shows a
/// table that --only/--skip leave out (`selected`). Only single-file bzip2 units are read ahead: gzip and plain
/// files read faster than they load.
final class ReadAheadSchedule {
    private let settings: ReadAheadSettings
    private let options: ReadOptions
    private let skipped: ([String]) -> Bool
    private let selected: (String) -> Bool
    private var started: (unit: [String], file: ReadAheadFile)?
    /// Every file read ahead so far, in order (for tests).
    private(set) var history: [String] = []

    /// A schedule for an import reading with `options`.
    init(settings: ReadAheadSettings, options: ReadOptions, skipped: @escaping ([String]) -> Bool,
         selected: @escaping (String) -> Bool) {
        self.settings = settings
        self.options = options
        self.skipped = skipped
        self.selected = selected
    }

    /// Starts reading ahead the first unit after `index` in `units` that the import will read, or when there is
    /// none, the first of `later` (the units of the next input); nothing when that one is read ahead already.
    func start(after index: Int, in units: [[String]], later: () -> [[String]]) {
        let target = firstRead(in: units.dropFirst(index + 1)) ?? firstRead(in: later()[...])
        guard let target, target.count == 1, let file = target.first, FeedInput.readsAhead(file) else { return }
        if started?.unit == target { return }
        history.append(file)
        settings.started?(file)
        var limits = settings.limits
        limits.spillBytes = settings.spillBound(input: file)
        started = (target, ReadAheadFile(path: file, options: options, spillDirectory: settings.spillDirectory,
                                         limits: limits))
    }

    /// The read-ahead of `unit`, when one was started for it.
    func take(_ unit: [String]) -> ReadAheadFile? {
        guard let started, started.unit == unit else { return nil }
        self.started = nil
        return started.file
    }

    /// Stops any read-ahead under way (the import ended).
    func cancel() {
        started = nil
    }

    private func firstRead(in units: ArraySlice<[String]>) -> [String]? {
        units.first { !skipped($0) && selectedByName($0) }
    }

    /// False when the unit's file name shows a table that is not selected; true when the name cannot tell (an
    /// archive of a whole feed, `itunes20260101.tbz`).
    private func selectedByName(_ unit: [String]) -> Bool {
        guard let file = unit.first else { return false }
        let name = (file as NSString).lastPathComponent
        if FeedInput.feedAndDate(in: name) != nil { return true }
        return selected(FeedInput.tableName(fromFileName: name).table)
    }
}
