import EPFFormat
import Foundation

/// Where an import reads ahead and how much it keeps (see `ReadAheadFile`).
public struct ReadAheadSettings: Sendable {
    /// The directory of the spill file: the database's, whose disk the import is budgeted on. Nil: memory only.
    public var spillDirectory: String?
    /// How much is kept before the reader comes.
    public var limits: ReadAheadFile.Limits
    /// Told the path of every file read ahead (for tests).
    var started: (@Sendable (String) -> Void)?

    /// Settings for an import into the database at `databasePath`.
    public init(databasePath: String, limits: ReadAheadFile.Limits = ReadAheadFile.Limits()) {
        let directory = (databasePath as NSString).deletingLastPathComponent
        spillDirectory = directory.isEmpty ? "." : directory
        self.limits = limits
    }
}

/// Decides which input unit of an import pass is read ahead while the current table finishes, and holds that
/// read-ahead until the pass comes to the unit.
///
/// The unit read ahead is the next one the pass will really read: units the pass skips (`skipped`, e.g. already
/// applied sources) are never opened, nor are files whose name shows a table that --only/--skip leave out
/// (`selected`). Only single-file bzip2 units are read ahead: gzip and plain files read faster than they load.
final class ReadAheadSchedule {
    private let units: [[String]]
    private let settings: ReadAheadSettings
    private let options: ReadOptions
    private let skipped: ([String]) -> Bool
    private let selected: (String) -> Bool
    private var started: (index: Int, file: ReadAheadFile)?
    /// Every file read ahead so far, in order (for tests).
    private(set) var history: [String] = []

    /// A schedule over `units` in the pass's order.
    init(units: [[String]], settings: ReadAheadSettings, options: ReadOptions, skipped: @escaping ([String]) -> Bool,
         selected: @escaping (String) -> Bool) {
        self.units = units
        self.settings = settings
        self.options = options
        self.skipped = skipped
        self.selected = selected
    }

    /// Starts reading ahead the first unit after `index` that the pass will read, unless one is started already.
    func start(after index: Int) {
        if let started, started.index > index { return }
        var next = index + 1
        while next < units.count, skipped(units[next]) || !selectedByName(units[next]) { next += 1 }
        guard next < units.count, units[next].count == 1, let file = units[next].first, FeedInput.readsAhead(file)
        else { return }
        history.append(file)
        settings.started?(file)
        started = (next, ReadAheadFile(path: file, options: options, spillDirectory: settings.spillDirectory,
                                       limits: settings.limits))
    }

    /// The read-ahead of unit `index`, when one was started; read-aheads of units up to `index` are let go.
    func take(_ index: Int) -> ReadAheadFile? {
        guard let started, started.index <= index else { return nil }
        self.started = nil
        return started.index == index ? started.file : nil
    }

    /// Stops any read-ahead under way (the pass ended).
    func cancel() {
        started = nil
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
