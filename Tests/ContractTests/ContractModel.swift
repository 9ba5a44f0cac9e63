import Foundation

/// One change the change log must hold (kind `app`: the only tracked table the matrix writes).
struct ModelChange: Hashable, Comparable {
    let exportDate: Int64
    let id: Int64
    let change: String

    static func < (left: ModelChange, right: ModelChange) -> Bool {
        (left.exportDate, left.id, left.change) < (right.exportDate, right.id, right.change)
    }
}

/// What the import of one export must report.
struct ExpectedImport {
    /// The exit status of `epf import`.
    var status: Int32 = 0
    /// Tables that must be applied, with their rejected and repaired counts.
    var applied: [String: (rejects: Int, repaired: Int)] = [:]
    /// Tables that must be refused.
    var refused: Set<String> = []
    /// Per applied table, the records left out because the database does not keep their storefront or language.
    var leftOut: [String: Int] = [:]
    /// The import asks for another selection than the database's, which holds tables: refused whole (exit 64).
    var selectionRefused = false
    /// Tables the import must leave as they are (`unchanged`, or not reported when their input is skipped whole):
    /// the same file again.
    var unchanged: Set<String> = []
    /// Tables the import must skip as `superseded`: a chart of a day older than the table's (its ranks recorded
    /// in its place with rank history).
    var superseded: Set<String> = []

    /// The key of a table file in `applied`, `refused`, `unchanged`, `superseded` and `leftOut`: its name, and for
    /// a chart (an import may hold two days of one) its feed's day, `application_popularity_per_genre 20260107`.
    static func key(table: String, day: String?) -> String {
        table.hasSuffix("_popularity_per_genre") ? "\(table) \(day ?? "?")" : table
    }
}

/// The database an export sequence must leave, computed from the documented contract (docs/import.md), not from the
/// importer's code:
/// - a full replaces the table with its accepted rows, a later row of a key winning over an earlier one;
/// - an incremental upserts each accepted row by key, unless the stored row is dated later (a row without a date
///   replaces nothing dated, and is replaced by anything); a table without a key gets every row appended;
/// - a refused file (count mismatch, cut, wrong `.md5`) changes nothing, and neither does an incremental for a table
///   no full was applied to (it is refused);
/// - the change log: a full replacing a table that existed records the ids it drops (`removed`) and adds
///   (`added`); an incremental into an existing table records each id it inserted (`added`) or updated (`updated`),
///   the first change of an id in the file winning; a first load records nothing; nothing is recorded twice;
/// - the selection (`--storefronts`, `--languages`): a record whose storefront id or language the database does not
///   keep is left out (not stored, not rejected, not repaired), unless it is malformed (a stray field, invalid
///   UTF-8, a NUL) or its value does not read as an id or a code; an import that asks for another selection than
///   that of a database holding tables is refused whole (exit 64); without the options, the database's stays.
struct ContractModel {
    struct Table {
        var exists = false
        /// Keyed tables: the row of each key.
        var rows: [[String?]: [String?]] = [:]
        /// Tables without a key: every row.
        var list: [[String?]] = []

        var allRows: [[String?]] { rows.isEmpty ? list : Array(rows.values) }
    }

    var tables: [String: Table] = [:]
    /// The change log, in the order it was recorded.
    var changes: [ModelChange] = []
    /// The storefronts and (lower-case) languages the database keeps; nil keeps all.
    var keptStorefronts: Set<Int64>?
    var keptLanguages: Set<String>?
    /// Whether imports record price history (`--history prices`, remembered), and what they recorded.
    var recordsHistory = false
    var priceHistory: [String] = []
    /// The (export date, id, storefront) of each recorded price change: a change is recorded once per key and
    /// export date (docs/import.md, "Price history": applying an export again records nothing new).
    private var pricesRecorded: Set<String> = []
    /// Whether imports record rank history (`--history ranks`, remembered), and the days they recorded, by chart
    /// table: each day's charts (storefront, genre) as the table held them after the load, entries ordered by rank,
    /// then id.
    var recordsRanks = false
    var rankDays: [String: [Int64: [RankKey: [RankEntry]]]] = [:]
    /// Each chart table's last applied full (its day), and the files applied from a directory, by `exportName`
    /// and size: the ledger's identity of a file, which is not applied again.
    var chartDays: [String: Int64] = [:]
    var appliedCharts: Set<String> = []
    /// The same, of chart files loaded only for their ranks (an older day): the ledger marks them superseded, and
    /// the same file again is skipped unloaded unless `--force`.
    var recordedCharts: Set<String> = []

    /// Applies one export imported with `request`'s options and says what its import must report.
    /// Tables in `skipping` are neither applied nor refused (the operations matrix decides those itself); `force`
    /// (`--force`) applies an incremental to a table no full was applied to, and a chart file whatever its day and
    /// whether it was applied before.
    mutating func apply(_ export: PlannedExport, request: SelectionRequest = SelectionRequest(),
                        skipping: Set<String> = [], force: Bool = false) -> ExpectedImport {
        var expected = ExpectedImport()
        let storefronts = request.storefronts.map(\.kept) ?? keptStorefronts
        let languages = request.languages.map(\.kept) ?? keptLanguages
        if storefronts != keptStorefronts || languages != keptLanguages {
            guard !tables.values.contains(where: \.exists) else {
                expected.status = 64
                expected.selectionRefused = true
                return expected
            }
            keptStorefronts = storefronts
            keptLanguages = languages
        }
        // `--history` adds what it names to what the database records; `none` stops both (docs/import.md).
        if request.history != nil || request.ranks != nil {
            let prices = request.history ?? false
            let ranks = request.ranks ?? false
            recordsHistory = prices || ranks ? recordsHistory || prices : false
            recordsRanks = prices || ranks ? recordsRanks || ranks : false
        }
        for feed in export.feeds {
            for file in feed.files where !skipping.contains(file.table.name) {
                if file.table.chart {
                    applyChart(file, feed: feed, day: feed.day ?? export.day,
                               exportDate: feed.exportDate ?? export.exportDate, force: force, expected: &expected)
                    continue
                }
                if feed.wrongMD5 || file.mustFail {
                    expected.refused.insert(file.table.name)
                    continue
                }
                // An incremental alone is not the table: refused until a full of it is applied (docs/import.md).
                if !force && !export.full && !(tables[file.table.name]?.exists ?? false) {
                    expected.refused.insert(file.table.name)
                    continue
                }
                let kept = file.rows.filter { !leftOut($0, file.table) }
                let accepted = kept.compactMap(\.stored)
                expected.leftOut[file.table.name] = file.rows.count - kept.count
                expected.applied[file.table.name] = (kept.filter(\.rejected).count,
                                                     kept.filter { !$0.rejected }.map(\.repaired).reduce(0, +))
                if export.full {
                    applyFull(file.table, accepted, exportDate: export.exportDate)
                } else {
                    applyIncremental(file.table, accepted, exportDate: export.exportDate)
                }
            }
        }
        expected.status = expected.refused.isEmpty ? 0 : 65
        return expected
    }

    private func key(_ table: TableSpec, _ row: [String?]) -> [String?] { table.key.map { row[$0] } }

    // MARK: - Charts and rank history

    /// A chart file (FULL in any export), per docs/import.md "Rank history" and "Exports out of order": the same
    /// file again (name and size) is left as it is; a day older than the table's last full is superseded, but with
    /// ranks recorded it is loaded aside and its day recorded in its place (a file the loader refuses records
    /// nothing); any other day replaces the table, the same day again included, and is recorded with ranks on.
    /// `--force` applies the file whatever its day and whether it was applied: the table then holds its day, except
    /// a day older than the table's last full while ranks are recorded, which is recorded again in its place (the
    /// table keeps its newer day).
    private mutating func applyChart(_ file: PlannedFile, feed: PlannedFeed, day: String, exportDate: Int64,
                                     force: Bool, expected: inout ExpectedImport) {
        let name = file.table.name
        let key = ExpectedImport.key(table: name, day: day)
        if feed.wrongMD5 || file.wrongMD5 {
            expected.refused.insert(key)
            return
        }
        let identity = feed.archived || file.archived ? nil
            : "\(feed.feed)\(day)/\(name) \(file.bytes(full: true).count)"
        if !force, let identity, appliedCharts.contains(identity) {
            expected.unchanged.insert(key)
            return
        }
        let kept = file.rows.filter { !leftOut($0, file.table) }
        let accepted = kept.compactMap(\.stored)
        if !force || recordsRanks, let last = chartDays[name], exportDate < last {
            if recordsRanks && !force, let identity, recordedCharts.contains(identity) {
                expected.superseded.insert(key)
            } else if recordsRanks && file.mustFail {
                expected.refused.insert(key)
            } else {
                if recordsRanks {
                    recordRanks(file.table, accepted, day: exportDate)
                    if let identity { recordedCharts.insert(identity) }
                }
                expected.superseded.insert(key)
            }
            return
        }
        if file.mustFail {
            expected.refused.insert(key)
            return
        }
        expected.leftOut[key] = file.rows.count - kept.count
        expected.applied[key] = (kept.filter(\.rejected).count,
                                 kept.filter { !$0.rejected }.map(\.repaired).reduce(0, +))
        applyFull(file.table, accepted, exportDate: exportDate)
        chartDays[name] = exportDate
        if let identity { appliedCharts.insert(identity) }
        if recordsRanks { recordRanks(file.table, accepted, day: exportDate) }
    }

    /// Records `day` as the chart table holds `accepted` (a later row of a key winning): each storefront and
    /// genre's entries with a rank, by rank then id. A day recorded again replaces itself.
    private mutating func recordRanks(_ spec: TableSpec, _ accepted: [[String?]], day: Int64) {
        var rows: [[String?]: [String?]] = [:]
        for row in accepted { rows[key(spec, row)] = row }
        var charts: [RankKey: [RankEntry]] = [:]
        for row in rows.values {
            guard let storefront = row[1].flatMap({ Int64($0) }), let genre = row[2].flatMap({ Int64($0) }),
                  let id = row[3].flatMap({ Int64($0) }), let rank = row[4].flatMap({ Int64($0) }) else { continue }
            charts[RankKey(storefront: storefront, genre: genre), default: []].append(RankEntry(rank: rank, id: id))
        }
        rankDays[spec.name, default: [:]][day] = charts.mapValues { $0.sorted() }
    }

    /// Whether the selection leaves the row out (docs/import.md): decided on the value as written, for a row the
    /// reader finds well formed.
    private func leftOut(_ row: PlannedRow, _ table: TableSpec) -> Bool {
        if row.dirt.contains(where: ["stray-0x01", "invalid-utf8", "nul-byte"].contains) { return false }
        if let keptStorefronts, table.name != "storefront", let column = table.index(of: "storefront_id") {
            let written = row.fields[column]
            guard !written.isEmpty, written.allSatisfy({ (0x30...0x39).contains($0) }),
                  let id = Int64(String(decoding: written, as: UTF8.self)) else { return false }
            return !keptStorefronts.contains(id)
        }
        if let keptLanguages, table.name == "application_detail" || table.name.hasSuffix("_translation"),
           let column = table.index(of: "language_code") {
            let code = String(decoding: row.fields[column], as: UTF8.self).lowercased()
                .replacingOccurrences(of: "_", with: "-")
            guard !code.isEmpty else { return false }
            return !keptLanguages.contains { code == $0 || code.hasPrefix($0 + "-") }
        }
        return false
    }

    private mutating func applyFull(_ spec: TableSpec, _ accepted: [[String?]], exportDate: Int64) {
        var table = tables[spec.name] ?? Table()
        let existed = table.exists
        let before = table.rows
        let oldIDs = Set(table.rows.keys.compactMap { $0.first.flatMap { $0.flatMap { Int64($0) } } })
        table.rows = [:]
        table.list = []
        for row in accepted {
            if spec.keyed { table.rows[key(spec, row)] = row } else { table.list.append(row) }
        }
        table.exists = true
        if spec.tracked && existed {
            let newIDs = Set(table.rows.keys.compactMap { $0.first.flatMap { $0.flatMap { Int64($0) } } })
            for id in oldIDs.subtracting(newIDs).sorted() { record(exportDate, id, "removed") }
            for id in newIDs.subtracting(oldIDs).sorted() { record(exportDate, id, "added") }
        }
        if existed { recordPrices(spec, before: before, after: table.rows, keys: nil, exportDate: exportDate) }
        tables[spec.name] = table
    }

    /// With history on, for a price table that existed: each key of `keys` (all keys of both sides when nil)
    /// only after (`appeared`), only before (`disappeared`, a full only) or with another price or currency
    /// (`changed`), compared as numbers.
    private mutating func recordPrices(_ spec: TableSpec, before: [[String?]: [String?]], after: [[String?]: [String?]],
                                       keys: Set<[String?]>?, exportDate: Int64) {
        guard recordsHistory, spec.name == "application_price", let priceColumn = spec.index(of: "retail_price"),
              let currencyColumn = spec.index(of: "currency_code"),
              let storefrontColumn = spec.index(of: "storefront_id") else { return }
        func line(_ row: [String?], _ change: String, old: [String?]?, new: [String?]?) -> String {
            historyLine(["\(exportDate)", row[1], row[storefrontColumn], change, old?[priceColumn],
                         new?[priceColumn], (new ?? old)?[currencyColumn]])
        }
        func number(_ text: String??) -> Double? { (text ?? nil).flatMap(Double.init) }
        func append(_ row: [String?], _ change: String, old: [String?]?, new: [String?]?) {
            // Once per (id, storefront, export date): an export applied again (`--force`) records nothing new.
            guard pricesRecorded.insert("\(exportDate) \(row[1] ?? "∅") \(row[storefrontColumn] ?? "∅")").inserted
            else { return }
            priceHistory.append(line(row, change, old: old, new: new))
        }
        for key in keys ?? Set(before.keys).union(after.keys) {
            switch (before[key], after[key]) {
            case (nil, let new?): append(new, "appeared", old: nil, new: new)
            case (let old?, nil) where keys == nil: append(old, "disappeared", old: old, new: nil)
            case (let old?, let new?):
                if number(old[priceColumn]) != number(new[priceColumn]) || old[currencyColumn] != new[currencyColumn] {
                    append(new, "changed", old: old, new: new)
                }
            default: break
            }
        }
    }

    private mutating func applyIncremental(_ spec: TableSpec, _ accepted: [[String?]], exportDate: Int64) {
        var table = tables[spec.name] ?? Table()
        let tracking = spec.tracked && table.exists
        let existed = table.exists
        let before = table.rows
        var touched: Set<[String?]> = []
        table.exists = true
        var noted: [Int64: String] = [:]
        var order: [Int64] = []
        for row in accepted {
            guard spec.keyed else {
                table.list.append(row)
                continue
            }
            let rowKey = key(spec, row)
            var change = "added"
            if let stored = table.rows[rowKey] {
                let newer: Bool
                switch (row[0].flatMap { Int64($0) }, stored[0].flatMap { Int64($0) }) {
                case (_, nil): newer = true
                case (nil, _?): newer = false
                case (let incoming?, let current?): newer = incoming >= current
                }
                guard newer else { continue }
                change = "updated"
            }
            table.rows[rowKey] = row
            touched.insert(rowKey)
            if tracking, let id = rowKey.first.flatMap({ $0.flatMap { Int64($0) } }), noted[id] == nil {
                noted[id] = change
                order.append(id)
            }
        }
        for id in order.sorted() { record(exportDate, id, noted[id] ?? "") }
        if existed { recordPrices(spec, before: before, after: table.rows, keys: touched, exportDate: exportDate) }
        tables[spec.name] = table
    }

    private mutating func record(_ exportDate: Int64, _ id: Int64, _ change: String) {
        let entry = ModelChange(exportDate: exportDate, id: id, change: change)
        if !changes.contains(entry) { changes.append(entry) }
    }

    /// The export that removed `id`, when its latest change is a removal (what `epf lookup` reports): latest by
    /// export date, then as recorded (a full forced back in time records its removals under its own, older date).
    func removal(of id: Int64) -> Int64? {
        let mine = changes.enumerated().filter { $0.element.id == id }
        guard let last = mine.max(by: { ($0.element.exportDate, $0.offset) < ($1.element.exportDate, $1.offset) }),
              last.element.change == "removed" else { return nil }
        return last.element.exportDate
    }

    /// The ids of apps present now.
    var presentApps: [Int64] {
        (tables["application"]?.rows.keys.compactMap { $0.first.flatMap { $0.flatMap { Int64($0) } } } ?? []).sorted()
    }
}

/// One storefront and genre's chart.
struct RankKey: Hashable, Comparable {
    let storefront: Int64
    let genre: Int64

    static func < (left: RankKey, right: RankKey) -> Bool {
        (left.storefront, left.genre) < (right.storefront, right.genre)
    }
}

/// One entry of a recorded chart.
struct RankEntry: Hashable, Comparable {
    let rank: Int64
    let id: Int64

    static func < (left: RankEntry, right: RankEntry) -> Bool { (left.rank, left.id) < (right.rank, right.id) }
}
