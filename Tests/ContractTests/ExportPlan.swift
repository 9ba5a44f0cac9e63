import EPFTestSupport

/// One data row as written, and what the database must hold for it.
struct PlannedRow {
    /// The field values as written (joined with 0x01); a stray 0x01 inside one adds a field.
    var fields: [[UInt8]]
    /// The stored values, one per column (nil = NULL); nil when the row must be rejected.
    var stored: [String?]?
    /// How many values of the row must be repaired (stored NULL, row kept).
    var repaired = 0
    /// What was done to the row, for failure messages.
    var dirt: [String] = []

    var rejected: Bool { stored == nil }
}

/// Dirt of a whole file.
enum FileDirt: String {
    case none
    /// `#recordsWritten` one more than the rows.
    case countHigh
    /// `#recordsWritten` one less than the rows.
    case countLow
    /// The file ends in the middle of a record (no footer).
    case cut
    /// No data rows at all (a clean file).
    case zeroRows
}

struct PlannedFile {
    let table: TableSpec
    var rows: [PlannedRow]
    var dirt: FileDirt = .none
    /// The file's `#exportMode` when it is not its export's (a chart is FULL in every export).
    var full: Bool?
    /// Where a cut file ends, as a fraction of its data bytes.
    var cutFraction = 0.5
    /// v5's layout: the file is its own archive in its feed's folder (`popularity20260107/<table>.tbz`, holding
    /// `popularity20260107/<table>`) with a `.md5` sidecar, which names another digest when `wrongMD5`.
    var archived = false
    var wrongMD5 = false

    /// Whether the importer must refuse the file (verification fails).
    var mustFail: Bool { dirt == .countHigh || dirt == .countLow || dirt == .cut }

    /// The file's bytes, in EPF's format: header records, data rows, the footer.
    func bytes(full: Bool) -> [UInt8] {
        var out: [UInt8] = []
        func record(_ bytes: [UInt8]) { out += bytes + [0x02, 0x0A] }
        record(Array(("#" + table.columns.map(\.name).joined(separator: "\u{1}")).utf8))
        record(Array(("#primaryKey:" + table.key.map { table.columns[$0].name }.joined(separator: ",")).utf8))
        record(Array(("#dbTypes:" + table.columns.map(\.dbType).joined(separator: "\u{1}")).utf8))
        record(Array(("#exportMode:" + (full ? "FULL" : "INCREMENTAL")).utf8))
        record(Array("##legal: Test data for epf's contract matrix, not Apple's.".utf8))
        let headerEnd = out.count
        for row in rows {
            record(Array(row.fields.joined(separator: [0x01])))
        }
        switch dirt {
        case .cut:
            let dataBytes = out.count - headerEnd
            let keep = headerEnd + max(1, min(dataBytes - 3, Int(Double(dataBytes) * cutFraction)))
            out.removeSubrange(keep...)
            // A cut never ends exactly on a record terminator.
            if out.count >= 2 && out[out.count - 2] == 0x02 && out[out.count - 1] == 0x0A { out.removeLast() }
        case .countHigh:
            record(Array("#recordsWritten:\(rows.count + 1)".utf8))
        case .countLow:
            record(Array("#recordsWritten:\(rows.count - 1)".utf8))
        case .none, .zeroRows:
            record(Array("#recordsWritten:\(rows.count)".utf8))
        }
        return out
    }
}

/// One feed of an export (`itunes20260105`): its table files, written as a directory or a `.tbz` with a sidecar.
struct PlannedFeed {
    let feed: String
    var files: [PlannedFile]
    /// The feed's day (`YYYYMMDD`) and its midnight in milliseconds when it is not its export's (a chart of an
    /// earlier day, shipped late or again).
    var day: String?
    var exportDate: Int64?
    var archived = false
    /// The `.md5` sidecar names another digest: every table of the archive must be refused.
    var wrongMD5 = false
}

struct PlannedExport {
    let number: Int
    let full: Bool
    /// `YYYYMMDD`.
    let day: String
    /// Midnight UTC of `day`, in milliseconds: every clean row's `export_date`.
    let exportDate: Int64
    var feeds: [PlannedFeed]

    var summary: String {
        let files = feeds.map { feed in
            let tables = feed.files.map { file in
                let dirty = file.rows.filter { !$0.dirt.isEmpty }.map { $0.dirt.joined(separator: "+") }
                var text = "\(file.table.name)\(file.archived ? ".tbz" : "")\(file.wrongMD5 ? " (wrong .md5)" : "")"
                    + "[\(file.rows.count) rows"
                if file.dirt != .none { text += ", \(file.dirt.rawValue)" }
                if !dirty.isEmpty { text += ", dirt: \(dirty.joined(separator: " "))" }
                return text + "]"
            }
            return "\(feed.feed)\(feed.day ?? day)\(feed.archived ? ".tbz" : "")"
                + "\(feed.wrongMD5 ? " (wrong .md5)" : "") "
                + tables.joined(separator: " ")
        }
        return "export \(number) (\(full ? "FULL" : "INCREMENTAL") \(day)): " + files.joined(separator: "; ")
    }
}

/// A seeded generator of export sequences: a full, one to three incrementals (some tables only), mostly a second
/// full that drops and adds apps, then more incrementals; with random dirt from EPF-FORMAT.md in any file.
///
/// The first data row of every file is clean: the importer names a file's export date after its first readable row,
/// and the changes it records carry that date.
struct ExportPlanner {
    var random: SeededGenerator
    private var catalogue: [Int64] = []
    private var nextApp: Int64 = 300_000_001
    private var nextNote: Int64 = 1

    /// Five of Apple's storefronts, and one id Apple has not given out (a storefront the feed may add one day):
    /// the history's exact per-item maps cover Apple's range, other ids take the Bloom filter and the merge's
    /// comparison sort.
    static let storefronts: [Int64] = [143441, 143444, 143462, 143455, 143460, 143800]
    static let genres: [Int64] = [6000, 6001, 6002, 6014, 6017]
    static let languages = ["EN", "JA", "FR", "DE", "ZH"]

    init(seed: UInt64) { random = SeededGenerator(seed: seed) }

    /// The exports of one sequence.
    mutating func sequence() -> [PlannedExport] {
        var shape = [true] + Array(repeating: false, count: 1 + random.below(3))
        // A later full in three sequences of four: the full's price merge runs only on a table that existed.
        if chance(0.75) { shape += [true] + Array(repeating: false, count: 1 + random.below(3)) }
        var day = 5
        return shape.enumerated().map { number, full in
            defer { day += 1 + random.below(2) }
            let text = "202601" + (day < 10 ? "0\(day)" : "\(day)")
            return export(number: number + 1, full: full, day: text, exportDate: 1_767_225_600_000
                          + Int64(day - 1) * 86_400_000)
        }
    }

    // MARK: - Exports

    private mutating func export(number: Int, full: Bool, day: String, exportDate: Int64) -> PlannedExport {
        let apps: [Int64]
        if full {
            if catalogue.isEmpty {
                catalogue = (0..<(4 + random.below(7))).map { _ in newApp() }
            } else {
                catalogue = catalogue.filter { _ in !chance(0.25) } + (0..<(1 + random.below(3))).map { _ in newApp() }
            }
            apps = catalogue
        } else {
            let updated = catalogue.filter { _ in chance(0.35) }
            let added = (0..<random.below(3)).map { _ in newApp() }
            catalogue += added
            apps = updated + added
        }
        var tables = ContractTables.all
        if !full {
            tables = tables.filter { _ in chance(0.6) }
            if tables.isEmpty { tables = [ContractTables.all[random.below(ContractTables.all.count)]] }
        }
        var feeds: [PlannedFeed] = []
        for feed in ContractTables.feeds {
            let files = tables.filter { $0.feed == feed }
                .map { file(for: $0, apps: apps, full: full, date: exportDate) }
            guard !files.isEmpty else { continue }
            var planned = PlannedFeed(feed: feed, files: files)
            if chance(0.15) {
                planned.archived = true
                planned.wrongMD5 = chance(0.3)
            }
            feeds.append(planned)
        }
        return PlannedExport(number: number, full: full, day: day, exportDate: exportDate, feeds: feeds)
    }

    private mutating func newApp() -> Int64 {
        defer { nextApp += 1 + Int64(random.below(50)) }
        return nextApp
    }

    // MARK: - Files

    private mutating func file(for table: TableSpec, apps: [Int64], full: Bool, date: Int64) -> PlannedFile {
        var keys: [[String]] = []
        switch table.name {
        case "application":
            keys = apps.map { ["\($0)"] }
        case "application_detail":
            for app in apps {
                for language in pick(Self.languages, 1 + random.below(2)) { keys.append(["\(app)", language]) }
            }
        case "genre_application":
            for app in apps {
                for genre in pick(Self.genres, 1 + random.below(2)) { keys.append(["\(genre)", "\(app)"]) }
            }
        case "application_price":
            for app in apps {
                for storefront in pick(Self.storefronts, 1 + random.below(3)) {
                    keys.append(["\(app)", "\(storefront)"])
                }
            }
        default:
            keys = (0..<(full ? 2 + random.below(4) : 1 + random.below(3))).map { _ in [] }
        }
        return dress(table, keys.map { row(table, key: $0, date: date) }, full: full, date: date)
    }

    /// A file of `rows` with the dirt any file may get: a key written twice, dirty rows (never the first), and now
    /// and then no rows, a wrong count or a cut.
    mutating func dress(_ table: TableSpec, _ rows: [PlannedRow], full: Bool, date: Int64) -> PlannedFile {
        var rows = rows
        // A key written twice: the same key again with fresh values, right after or at the end.
        if table.keyed && !rows.isEmpty && chance(0.3) {
            for _ in 0..<(1 + random.below(2)) {
                let original = random.below(rows.count)
                let keyValues = table.key.map { String(decoding: rows[original].fields[$0], as: UTF8.self) }
                var again = row(table, key: keyValues, date: date)
                again.dirt.append("written-twice")
                if chance(0.5) {
                    rows.insert(again, at: original + 1)
                } else {
                    rows.append(again)
                }
            }
        }
        for index in rows.indices.dropFirst() where chance(0.18) {
            dirty(&rows[index], table: table, full: full, date: date)
        }
        var file = PlannedFile(table: table, rows: rows)
        let roll = random.below(100)
        if roll < 4 {
            file.rows = []
            file.dirt = .zeroRows
        } else if roll < 7 {
            file.dirt = .countHigh
        } else if roll < 10 && !rows.isEmpty {
            file.dirt = .countLow
        } else if roll < 13 && !rows.isEmpty {
            file.dirt = .cut
            file.cutFraction = 0.05 + Double(random.below(90)) / 100
        }
        return file
    }

    /// A clean row: the key's values, fresh values elsewhere.
    mutating func row(_ table: TableSpec, key: [String], date: Int64) -> PlannedRow {
        var fields: [[UInt8]] = []
        var stored: [String?] = []
        for (index, column) in table.columns.enumerated() {
            if let position = table.key.firstIndex(of: index) {
                fields.append(Array(key[position].utf8))
                stored.append(key[position])
                continue
            }
            let (written, value) = cleanValue(column.kind, date: date)
            fields.append(Array(written.utf8))
            stored.append(value)
        }
        return PlannedRow(fields: fields, stored: stored)
    }

    private static let words = ["Dragon", "Café", "Olé", "Tracker", "日本語", "株式会社天気", "Notes", "Camera",
                                "🚀", "Žluťoučký", "Battle", "Lite", "Ñandú", "Photo", "Pro"]

    private mutating func words(_ count: Int) -> String {
        (0..<count).map { _ in Self.words[random.below(Self.words.count)] }.joined(separator: " ")
    }

    /// A value as written and as stored.
    private mutating func cleanValue(_ kind: ValueKind, date: Int64) -> (String, String?) {
        switch kind {
        case .exportDate:
            return ("\(date)", "\(date)")
        case .id, .integer:
            let value = "\(1 + random.below(900_000_000))"
            return (value, value)
        case .rank:
            let value = "\(1 + random.below(10))"
            return (value, value)
        case .text:
            if chance(0.08) { return ("", nil) }
            let value = words(1 + random.below(3))
            return (value, value)
        case .longText:
            if chance(0.08) { return ("", nil) }
            let value = words(2 + random.below(4)) + (chance(0.4) ? "\n" + words(3) : "") + "."
            return (value, value)
        case .date:
            let year = 2008 + random.below(18)
            let month = 1 + random.below(12)
            let day = 1 + random.below(28)
            func two(_ number: Int) -> String { number < 10 ? "0\(number)" : "\(number)" }
            let iso = "\(year)-\(two(month))-\(two(day))T00:00:00Z"
            switch random.below(5) {
            case 0: return ("\(year)-\(two(month))-\(two(day))", iso)
            case 1: return ("\(year)-\(two(month))-\(two(day))-00:00:00-Etc/GMT", iso)
            case 2: return ("\(year)", "\(year)-01-01T00:00:00Z")
            default: return ("\(year) \(two(month)) \(two(day))", iso)
            }
        case .decimal:
            let value = ["0.000", "0.990", "1.99", "4.990", "12.000", "299.99"][random.below(6)]
            return (value, value)
        case .boolean:
            let value = chance(0.5) ? "1" : "0"
            return (value, value)
        case .language:
            let value = Self.languages[random.below(Self.languages.count)]
            return (value, value)
        case .currency:
            let value = ["USD", "EUR", "JPY", "GBP"][random.below(4)]
            return (value, value)
        }
    }

    // MARK: - Dirt

    private enum RowDirt: CaseIterable {
        case strayField, invalidUTF8, nulByte, junkKey, emptyKey, junkExportDate, emptyExportDate, junkNullable,
             crlfText, nullText, emptyField, olderDated
    }

    /// Applies one random kind of dirt that fits the table (and the export's mode) to a row.
    mutating func dirty(_ row: inout PlannedRow, table: TableSpec, full: Bool, date: Int64) {
        let textColumns = table.columns.indices.filter {
            !table.key.contains($0) && [.text, .longText, .currency].contains(table.columns[$0].kind)
        }
        let integerKeys = table.key.filter { table.columns[$0].kind == .id }
        let repairable = table.columns.indices.filter {
            !table.key.contains($0)
                && [.integer, .rank, .date, .decimal, .boolean, .id].contains(table.columns[$0].kind)
        }
        let nullable = table.columns.indices.filter { !table.key.contains($0) && $0 != 0 }
        let fitting = RowDirt.allCases.filter { dirt in
            switch dirt {
            case .strayField, .invalidUTF8, .nulByte, .crlfText, .nullText: return !textColumns.isEmpty
            case .junkKey: return !integerKeys.isEmpty
            case .emptyKey: return table.keyed
            case .junkNullable: return !repairable.isEmpty
            case .emptyField: return !nullable.isEmpty
            case .olderDated: return !full
            case .junkExportDate, .emptyExportDate: return true
            }
        }
        guard !fitting.isEmpty else { return }
        let dirt = fitting[random.below(fitting.count)]
        func set(_ column: Int, _ text: [UInt8]) { row.fields[column] = text }
        switch dirt {
        case .strayField:
            let column = textColumns[random.below(textColumns.count)]
            set(column, row.fields[column] + [0x01] + Array("stray".utf8))
            row.stored = nil
            row.dirt.append("stray-0x01")
        case .invalidUTF8:
            let column = textColumns[random.below(textColumns.count)]
            set(column, row.fields[column] + [[0xC3, 0x28], [0xFF], [0xED, 0xA0, 0x80]][random.below(3)])
            row.stored = nil
            row.dirt.append("invalid-utf8")
        case .nulByte:
            let column = textColumns[random.below(textColumns.count)]
            set(column, Array("before".utf8) + [0x00] + Array("after".utf8))
            row.stored = nil
            row.dirt.append("nul-byte")
        case .junkKey:
            let column = integerKeys[random.below(integerKeys.count)]
            set(column, Array(["[123]", "<UnknownKeyException>", "12x", "\u{7}9"][random.below(4)].utf8))
            row.stored = nil
            row.dirt.append("junk-key")
        case .emptyKey:
            set(table.key[random.below(table.key.count)], [])
            row.stored = nil
            row.dirt.append("empty-key")
        case .junkExportDate:
            set(0, Array(["x1", "[1767571200000]", "2026-01-05"][random.below(3)].utf8))
            row.stored = nil
            row.dirt.append("junk-export-date")
        case .emptyExportDate:
            set(0, [])
            row.stored?[0] = nil
            row.dirt.append("empty-export-date")
        case .junkNullable:
            let column = repairable[random.below(repairable.count)]
            let junk: [String]
            switch table.columns[column].kind {
            case .date: junk = ["12 9 25", "2011 02 29", "soon"]
            case .decimal: junk = ["$1", "free", "1,99"]
            case .boolean: junk = ["[x]", "<UnknownKeyException>"]
            default: junk = ["[123]", "<UnknownKeyException>", "12 MB"]
            }
            set(column, Array(junk[random.below(junk.count)].utf8))
            row.stored?[column] = nil
            row.repaired += 1
            row.dirt.append("junk-in-\(table.columns[column].name)")
        case .crlfText:
            let column = textColumns[random.below(textColumns.count)]
            let value = chance(0.5) ? "\r\nleading CR LF\r\nsecond line" : "first line\r\nsecond line\r\n"
            set(column, Array(value.utf8))
            row.stored?[column] = value
            row.dirt.append("cr-lf")
        case .nullText:
            let column = textColumns[random.below(textColumns.count)]
            set(column, Array("NULL".utf8))
            row.stored?[column] = "NULL"
            row.dirt.append("text-NULL")
        case .emptyField:
            let column = nullable[random.below(nullable.count)]
            set(column, [])
            row.stored?[column] = nil
            row.dirt.append("empty-\(table.columns[column].name)")
        case .olderDated:
            let older = date - Int64(1 + random.below(4)) * 86_400_000
            set(0, Array("\(older)".utf8))
            row.stored?[0] = "\(older)"
            row.dirt.append("older-dated")
        }
    }

    // MARK: - Randomness

    mutating func chance(_ probability: Double) -> Bool {
        Double(random.below(1_000_000)) < probability * 1_000_000
    }

    mutating func pick<T>(_ values: [T], _ count: Int) -> [T] {
        var pool = values
        var picked: [T] = []
        for _ in 0..<min(count, pool.count) { picked.append(pool.remove(at: random.below(pool.count))) }
        return picked
    }
}
