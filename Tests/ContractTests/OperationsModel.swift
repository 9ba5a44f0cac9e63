import EPFTestSupport
import Foundation

/// What a user does with epf, one step of an operations sequence (`OperationsPlanner`).
enum UserOperation: CustomStringConvertible {
    /// `epf import` of every feed of an export (`--force` when `force`).
    case importExport(Int, force: Bool)
    /// The same, killed with SIGKILL after `afterMilliseconds`, then run again to the end.
    case killAndResume(Int, afterMilliseconds: Int)
    /// The export's `table` replaced by bytes that are not EPF, imported, then put back.
    case importDamaged(Int, table: String)
    /// `epf sync` of a mirror holding the exports up to this number (some incrementals misplaced in its root).
    case sync(upTo: Int)
    /// The folder holding the exports renamed.
    case moveMirror

    var description: String {
        switch self {
        case .importExport(let number, let force): "import export \(number)\(force ? " --force" : "")"
        case .killAndResume(let number, let delay): "import export \(number), kill -9 after \(delay) ms, import again"
        case .importDamaged(let number, let table): "import export \(number) with \(table) not EPF"
        case .sync(let upTo): "sync a mirror of exports 1...\(upTo)"
        case .moveMirror: "move the mirror"
        }
    }
}

/// A seeded generator of user operation sequences over one export sequence: mostly the next export, but also
/// exports out of date order, the same export twice, `--force`, a kill and resume, a damaged file, a sync of a
/// growing mirror and a moved mirror.
struct OperationsPlanner {
    private var random: SeededGenerator

    init(seed: UInt64) { random = SeededGenerator(seed: seed ^ 0x5EED_0F_0BE7) }

    mutating func operations(exports: [PlannedExport]) -> [UserOperation] {
        let count = 4 + random.below(4)
        var next = 1
        var published = 0
        var operations: [UserOperation] = []
        for _ in 0..<count {
            let pick = random.below(100)
            let any = 1 + random.below(exports.count)
            switch pick {
            case 0..<35:
                operations.append(.importExport(min(next, exports.count), force: false))
                next += 1
            case 35..<55:
                operations.append(.importExport(any, force: false))
            case 55..<60:
                operations.append(.importExport(any, force: true))
            case 60..<70:
                operations.append(.killAndResume(min(next, exports.count), afterMilliseconds: random.below(400)))
                next += 1
            case 70..<78:
                let export = exports[any - 1]
                let files = export.feeds.filter { !$0.archived }.flatMap { $0.files }.filter { !$0.table.chart }
                if let file = files.isEmpty ? nil : files[random.below(files.count)] {
                    operations.append(.importDamaged(any, table: file.table.name))
                } else {
                    operations.append(.importExport(any, force: false))
                }
            case 78..<92:
                published = min(exports.count, max(published, next) + random.below(2))
                operations.append(.sync(upTo: max(1, published)))
                next = max(next, published + 1)
            default:
                operations.append(.moveMirror)
            }
        }
        return operations
    }

    /// Whether a synced incremental is placed in the mirror's root instead of `incremental/YYYYMMDD/`.
    mutating func misplaces() -> Bool { random.below(100) < 20 }
}

/// The database a sequence of user operations must leave, and what `epf status` must claim about it, from the
/// documented contract (docs/import.md, "Exports out of order" and "What status claims"), not from the importer's
/// code. The rows come from `ContractModel`, told which tables each operation applies.
struct OperationsModel {
    /// One open failure: a table file (or, `table` nil, an archive) not applied and not made up for.
    struct Failure: Hashable {
        var table: String?
        var feed: String
        var day: String
        /// FULL or INCREMENTAL when the import knew, nil for a file that was not EPF or an archive whose `.md5`
        /// did not match.
        var full: Bool?
    }

    struct TableState {
        /// Applied exports since the table's last full: (day, full).
        var history: [(day: String, full: Bool)] = []
        /// The table's export date (ms).
        var date: Int64?
        /// The last full: its day, the folder holding its export, and the order it was applied in.
        var lastFull: (day: String, root: String, order: Int)?
    }

    var rows = ContractModel()
    var tables: [String: TableState] = [:]
    /// `export/table` files the ledger shows applied (a full of the table makes its incrementals count as not
    /// applied again).
    var done: Set<String> = []
    var failures: [Failure] = []
    /// The tables of each full feed export (`feed/YYYYMMDD`) an import read (docs/import.md, "What status claims":
    /// retired tables): a file read, not refused before its header, makes its feed's listing known.
    var listings: [String: Set<String>] = [:]
    private var order = 0
    /// Whether each export seen so far is a full one (by number).
    private var exportsFull: [Int: Bool] = [:]

    enum Decision { case apply, superseded, refused }

    /// The documented rule for a table file given what the table holds.
    func decide(_ table: String, full: Bool, day: String) -> Decision {
        let history = tables[table]?.history ?? []
        guard !history.isEmpty else { return full ? .apply : .refused }
        let lastFull = history.last { $0.full }
        if !full {
            if let lastFull, day < lastFull.day { return .superseded }
            return .apply
        }
        let newest = history.map { ($0.day, $0.full ? 0 : 1) }.max { $0 < $1 } ?? ("", 0)
        if (day, 0) >= newest { return .apply }
        if let lastFull, day <= lastFull.day { return .superseded }
        return .refused
    }

    /// Applies one import of `export` (every feed of it) read from `root` (the folder holding the export's feeds);
    /// `damaged` names a table whose file is not EPF; `request` the options given (`--history ranks`). Returns the
    /// exit status the import must end with.
    ///
    /// A chart (FULL in every export, of its export's day here) is decided by `ContractModel`'s rules for charts
    /// (a day older than the table's is superseded, but with ranks recorded its ranks are recorded in place; any
    /// other day applies), once the ledger's own answer (applied before, a wrong `.md5`) is taken.
    mutating func importExport(_ export: PlannedExport, root: String, force: Bool, damaged: String? = nil,
                               request: SelectionRequest = SelectionRequest()) -> Int32 {
        exportsFull[export.number] = export.full
        for feed in export.feeds {
            // Read whole unless its archive's `.md5` is wrong; a file refused before its header (not EPF, a table's
            // archive with a wrong `.md5`) is still named by its file.
            let read = feed.files.filter { file in
                !(feed.archived && feed.wrongMD5) && !(file.archived && file.wrongMD5)
                    && !(damaged == file.table.name && !feed.archived)
            }
            if read.contains(where: { $0.full ?? export.full }) {
                listings["\(feed.feed)/\(feed.day ?? export.day)"] = Set(feed.files.map(\.table.name))
            }
        }
        var failed = false
        var skipping: Set<String> = []
        var applying: [(file: PlannedFile, feed: String, full: Bool)] = []
        var charts: [(file: PlannedFile, feed: String)] = []
        for feed in export.feeds {
            if feed.wrongMD5 {
                addFailure(Failure(table: nil, feed: feed.feed, day: export.day, full: nil))
                failed = true
                for file in feed.files { skipping.insert(file.table.name) }
                continue
            }
            for file in feed.files {
                let name = file.table.name
                let key = "\(export.number)/\(name)"
                if damaged == name && !feed.archived {
                    addFailure(Failure(table: name, feed: feed.feed, day: export.day, full: nil))
                    failed = true
                    skipping.insert(name)
                    continue
                }
                if !force && done.contains(key) {
                    skipping.insert(name)
                    continue
                }
                if file.table.chart {
                    if file.wrongMD5 {
                        // v5's archive of one table: the failure is named after its file, the table.
                        addFailure(Failure(table: name, feed: feed.feed, day: export.day, full: nil))
                        failed = true
                        skipping.insert(name)
                    } else {
                        charts.append((file, feed.feed))
                    }
                    continue
                }
                switch force ? .apply : decide(name, full: export.full, day: export.day) {
                case .superseded:
                    skipping.insert(name)
                case .refused:
                    addFailure(Failure(table: name, feed: feed.feed, day: export.day, full: export.full))
                    skipping.insert(name)
                    failed = true
                case .apply:
                    if file.mustFail {
                        addFailure(Failure(table: name, feed: feed.feed, day: export.day, full: export.full))
                        failed = true
                    } else {
                        applying.append((file, feed.feed, export.full))
                    }
                }
            }
        }
        let expected = rows.apply(export, request: request, skipping: skipping, force: force)
        for (file, feed) in charts {
            let key = ExpectedImport.key(table: file.table.name, day: export.day)
            if expected.refused.contains(key) {
                addFailure(Failure(table: file.table.name, feed: feed, day: export.day, full: true))
                failed = true
            } else if expected.applied[key] != nil {
                applying.append((file, feed, true))
            } else if expected.superseded.contains(key) && rows.recordsRanks {
                // An older day loaded for its ranks only: it makes up for a failure of that day only.
                failures.removeAll { $0.table == file.table.name && $0.day == export.day }
            }
        }
        for (file, feed, full) in applying {
            let name = file.table.name
            done.insert("\(export.number)/\(name)")
            var state = tables[name] ?? TableState()
            if full {
                // The table's incrementals no longer count as done: imported again, they are decided again (a
                // chart has none: its files are FULL in every export).
                done = done.filter { key in
                    let parts = key.split(separator: "/")
                    guard !file.table.chart, parts.count == 2, parts[1] == name, let number = Int(parts[0]) else {
                        return true
                    }
                    return exportsFull[number] ?? true
                }
                state.history = [(export.day, true)]
                state.date = export.exportDate
                order += 1
                state.lastFull = (export.day, root, order)
            } else {
                state.history.append((export.day, false))
                state.date = max(state.date ?? export.exportDate, export.exportDate)
            }
            tables[name] = state
            failures.removeAll { failure in
                // A newer full of the feed replaces the feed whole (docs/import.md, "What status claims").
                // (A chart's file is a full of its feed in any export.)
                if full && failure.feed == feed && export.day > failure.day { return true }
                let same = failure.table.map { $0 == name } ?? (failure.feed == feed)
                guard same else { return false }
                if full { return export.day >= failure.day }
                return export.day == failure.day && failure.full != true
            }
        }
        return failed ? 65 : 0
    }

    private mutating func addFailure(_ failure: Failure) {
        failures.removeAll { $0.table == failure.table && $0.feed == failure.feed && $0.day == failure.day }
        failures.append(failure)
    }

    // MARK: - What status must claim

    /// The newest export date of any table.
    var newest: Int64? { tables.values.compactMap(\.date).max() }

    /// The tables the newest full of their feed did not contain (docs/import.md, "What status claims"): that full
    /// is newer than the table's last full and its listing is known and lacks the table. Kept, not behind.
    var retired: Set<String> {
        func feed(_ name: String) -> String? { ContractTables.compared.first { $0.name == name }?.feed }
        var newest: [String: String] = [:]
        for (name, state) in tables {
            guard let feed = feed(name), let day = state.lastFull?.day else { continue }
            newest[feed] = max(newest[feed] ?? day, day)
        }
        return Set(tables.compactMap { name, state in
            guard let feed = feed(name), let day = state.lastFull?.day, let newestDay = newest[feed], newestDay > day,
                  let listed = listings["\(feed)/\(newestDay)"], !listed.contains(name) else { return nil }
            return name
        })
    }

    /// The tables loaded from another full than the newest (`MixedExports`): the newest is the catalogue's (a
    /// chart, FULL every day, is not a full export of the catalogue), and a chart of a later day than it is that
    /// day's chart, not behind. A retired table is not behind.
    var behind: Set<String> {
        let retired = self.retired
        let fulls = tables.compactMap { name, state in state.lastFull.map { (name, $0) } }
            .filter { !retired.contains($0.0) }
        func chart(_ name: String) -> Bool { name.hasSuffix("_popularity_per_genre") }
        guard let newest = fulls.filter({ !chart($0.0) })
            .max(by: { ($0.1.day, $0.1.order) < ($1.1.day, $1.1.order) }) else { return [] }
        return Set(fulls.filter { name, full in
            !(full.day == newest.1.day && full.root == newest.1.root) && !(chart(name) && full.day > newest.1.day)
        }.map(\.0))
    }

    /// What open failures name that the database holds nothing of: a table, or `<feed> feed` when no table of a
    /// failed archive's feed is held (docs/import.md, "What status claims"), sorted.
    var missing: [String] {
        var names: Set<String> = []
        for failure in failures {
            if let table = failure.table {
                if tables[table]?.date == nil { names.insert(table) }
            } else if !ContractTables.compared.contains(where: {
                $0.feed == failure.feed && tables[$0.name]?.date != nil
            }) {
                names.insert("\(failure.feed) feed")
            }
        }
        return names.sorted()
    }

    /// The tables applied from incrementals alone (with --force), sorted.
    var incrementalOnly: [String] {
        tables.filter { $0.value.lastFull == nil && !$0.value.history.isEmpty }.map(\.key).sorted()
    }

    /// The date the data is complete as of, and whether the tables mix exports (or miss a table a failure names, or
    /// hold incrementals alone).
    var claims: (asOf: Int64?, mixed: Bool) {
        var asOf = newest
        var held = !missing.isEmpty || !incrementalOnly.isEmpty
        for failure in failures {
            guard let limit = OperationsModel.midnight(failure.day) else { continue }
            let affected = failure.table.map { [$0] }
                ?? ContractTables.compared.filter { $0.feed == failure.feed }.map(\.name)
            for table in affected {
                guard let date = tables[table]?.date, date < limit else { continue }
                held = true
                asOf = min(asOf ?? date, date)
            }
        }
        let behind = self.behind
        for table in behind {
            if let date = tables[table]?.date { asOf = min(asOf ?? date, date) }
        }
        return (asOf, held || !behind.isEmpty)
    }

    /// The open failures as `table|feed|YYYY-MM-DD`, the way the check spells `epf status --json`'s.
    var failureLines: [String] {
        failures.map { "\($0.table ?? "-")|\($0.feed)|\(OperationsModel.iso($0.day))" }.sorted()
    }

    static func iso(_ day: String) -> String {
        let characters = Array(day)
        guard characters.count == 8 else { return day }
        return "\(String(characters[0..<4]))-\(String(characters[4..<6]))-\(String(characters[6..<8]))T00:00:00Z"
    }

    /// Midnight UTC of `YYYYMMDD` in milliseconds, through Foundation's calendar (not the importer's arithmetic).
    static func midnight(_ day: String) -> Int64? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd"
        return formatter.date(from: day).map { Int64($0.timeIntervalSince1970 * 1000) }
    }
}
