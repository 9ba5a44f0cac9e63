import EPFFormat
import Foundation

/// How the feed files are laid out on disk.
package enum FeedLayout: String, Sendable, CaseIterable, Codable {
    /// `<out>/itunes<YYYYMMDD>/<table>`: plain extension-less table files (optionally `.gz`).
    case v3
    /// `<out>/itunes<YYYYMMDD>.tbz` + `.tbz.md5`, the archive holding the v3 directory.
    case v3Archive = "v3-archive"
    /// `<out>/itunes<YYYYMMDD>/<table>.tbz` + `<table>.tbz.md5`, one archive per table with member
    /// `itunes<YYYYMMDD>/<table>`.
    case v5
}

/// Everything that decides what the generator writes. The same options always give the same bytes.
package struct GeneratorOptions: Sendable, Equatable {
    /// Seeds every random choice; the same seed gives the same catalogue.
    package var seed: UInt64 = 1
    /// Number of apps in the full export, 100 ... 10_000_000. Other tables scale with it.
    package var apps: Int = 300
    /// File layout.
    package var layout: FeedLayout = .v3
    /// FULL or INCREMENTAL (`EPFFormat.ExportMode`, the same type the reader reports).
    package var mode: ExportMode = .full
    /// Export date of the full export, milliseconds since 1970 UTC; default 2026-01-05 00:00:00 UTC.
    package var fullExportDate: Int64 = 1_767_571_200_000
    /// For incrementals: days after the full export, 1 ... 366. Incrementals are cumulative: day N holds every
    /// change of days 1 ... N.
    package var day: Int = 1
    /// For full exports: weeks after the first full export, 0 ... 52 (0: the first). A later full export holds
    /// the catalogue as of its day: apps changed and added up to then, without the apps removed by then (see
    /// `FeedModel.fullChanges`).
    package var week: Int = 0
    /// How many storefronts each app has a price in, 1 ... `Reference.storefronts.count`.
    package var priceStorefronts: Int = 20
    /// Inject the damage of real feeds at known places and write `dirt.json` (see `DirtKind`).
    package var dirt: Bool = false
    /// Tables to write; nil writes every table of the mode (the match feed only with `match`).
    package var tables: Set<String>? = nil
    /// Also write the match feed (`match<YYYYMMDD>`: `collection_match`, `song_match`, `artist_match`,
    /// `video_match`; see `MatchIDs`).
    package var match: Bool = false
    /// With the v3 layout, gzip every table file (`<table>.gz`).
    package var gzip: Bool = false
    /// Tables written at once (v3 and v5; a v3 archive is one stream). The bytes do not depend on it.
    package var threads: Int = 2
    /// A fraction of Apple's real weekly export (nil: the small synthetic proportions). Set with `setScale(_:)`,
    /// which also sets `apps` and `priceStorefronts`; see `setScale(_:)` for what changes.
    package private(set) var scale: Double? = nil

    /// Apps in Apple's real weekly full export, the unit of `scale`.
    package static let realApps = 2_000_000

    /// The defaults: seed 1, 300 apps, v3, full, 2026-01-05, 20 price storefronts, clean.
    package init() {}

    /// Makes the export a fraction of Apple's real weekly full: `apps` = 2,000,000 x `fraction`, every app
    /// priced in all 175 real storefronts (`Reference.allStorefronts`; about 350 million `application_price` rows
    /// at 1.0), about 3 `application_detail` rows per app, popularity ranked in every storefront with a depth
    /// scaled by `fraction`, no music tables (Apple dropped them in 2025), and 3 % of apps and of prices changed
    /// per incremental day (1 % without a scale). `validate()` rejects a fraction that gives under 100 apps.
    package mutating func setScale(_ fraction: Double) {
        scale = fraction
        apps = fraction.isFinite && fraction > 0 ? Int((Double(GeneratorOptions.realApps) * fraction).rounded()) : 0
        priceStorefronts = Reference.allStorefronts.count
    }

    /// A fraction written as `1/16`, `0.0625` or `6.25%`; nil when the text is none of these or not above 0.
    package static func fraction(_ text: String) -> Double? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        var value: Double?
        if let slash = trimmed.firstIndex(of: "/") {
            if let top = Double(trimmed[..<slash]), let bottom = Double(trimmed[trimmed.index(after: slash)...]),
               bottom != 0 {
                value = top / bottom
            }
        } else if trimmed.hasSuffix("%") {
            value = Double(trimmed.dropLast()).map { $0 / 100 }
        } else {
            value = Double(trimmed)
        }
        guard let value, value.isFinite, value > 0 else { return nil }
        return value
    }

    /// The storefronts this export uses: all 175 with a scale, else the first 60.
    package var storefronts: [StorefrontInfo] { scale == nil ? Reference.storefronts : Reference.allStorefronts }

    /// Milliseconds per day.
    package static let dayMilliseconds: Int64 = 86_400_000

    /// Days from the first full export to this export: `7 x week` for a full, `day` for an incremental.
    package var exportDay: Int { mode == .full ? 7 * week : day }

    /// The `export_date` of this export: the first full's date plus `exportDay` days.
    package var exportDate: Int64 { fullExportDate + Int64(exportDay) * GeneratorOptions.dayMilliseconds }

    /// `YYYYMMDD` of the export date in UTC, as in `itunes20260105`.
    package var dateStamp: String { GeneratorOptions.stamp(milliseconds: exportDate) }

    /// Throws `GeneratorError.invalidOption` naming the first option out of range.
    package func validate() throws {
        if let scale, !(scale > 0 && scale <= 5) || apps < 100 {
            throw GeneratorError.invalidOption(
                option: "scale", problem: "must give 100 ... 10000000 apps (1/20000 ... 5), got \(scale)")
        }
        guard (100...10_000_000).contains(apps) else {
            throw GeneratorError.invalidOption(option: "apps", problem: "must be 100 ... 10000000, got \(apps)")
        }
        guard (1...366).contains(day) else {
            throw GeneratorError.invalidOption(option: "day", problem: "must be 1 ... 366, got \(day)")
        }
        guard (0...52).contains(week) else {
            throw GeneratorError.invalidOption(option: "week", problem: "must be 0 ... 52, got \(week)")
        }
        guard (1...storefronts.count).contains(priceStorefronts) else {
            throw GeneratorError.invalidOption(
                option: "priceStorefronts",
                problem: "must be 1 ... \(storefronts.count), got \(priceStorefronts)")
        }
        guard fullExportDate >= 946_684_800_000 else {
            throw GeneratorError.invalidOption(option: "fullExportDate", problem: "must be 2000-01-01 or later")
        }
        if let tables {
            for name in tables where GeneratedTables.named(name) == nil { throw GeneratorError.unknownTable(name) }
        }
        guard (1...64).contains(threads) else {
            throw GeneratorError.invalidOption(option: "threads", problem: "must be 1 ... 64, got \(threads)")
        }
        if gzip && layout != .v3 {
            throw GeneratorError.invalidOption(option: "gzip", problem: "only the v3 layout can be gzipped")
        }
    }

    /// `YYYYMMDD` of a UTC instant.
    package static func stamp(milliseconds: Int64) -> String {
        let (year, month, day) = civil(daysSinceEpoch: Int(milliseconds / dayMilliseconds))
        return String(format: "%04d%02d%02d", year, month, day)
    }

    /// Milliseconds since 1970 of midnight UTC on a date given as `YYYY-MM-DD` or `YYYYMMDD`; nil if malformed.
    package static func milliseconds(date text: String) -> Int64? {
        let digits = text.filter { $0 != "-" }
        guard digits.count == 8, digits.allSatisfy(\.isASCII), let number = Int(digits) else { return nil }
        let year = number / 10000
        let month = number / 100 % 100
        let day = number % 100
        guard (1970...9999).contains(year), (1...12).contains(month), (1...31).contains(day) else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        guard civil(daysSinceEpoch: days) == (year, month, day) else { return nil }
        return Int64(days) * dayMilliseconds
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The Gregorian date of a day number since 1970-01-01.
    static func civil(daysSinceEpoch days: Int) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
