import EPFFormat
import EPFQuery
import EPFStore
import JSONText

/// `epf lookup`: what an Apple ID or store link is, like Apple's Lookup API but from the local database.
enum LookupCommand: Command {
    static let name = "lookup"
    static let summary = "Look up Apple IDs or store links (apps, books, albums, songs, videos, artists)"
    static let help = """
    USAGE: epf lookup ID_OR_LINK... [--country CC] [--lang LL] [--json] [--db FILE]

    Each argument is an Apple ID or a store link (apps.apple.com, itunes.apple.com, books.apple.com,
    music.apple.com; /app/, /book/, /album/ (?i= means the song), /artist/, /movie/, /tv-season/,
    /music-video/). The ID is looked up in every table the database holds; the answer says its kind.

    OPTIONS:
    \(optionsHelp(declaredOptions))

    IDs not found are listed on stderr; an ID the changes table says left the store is reported as
    "removed from the store in the export of DATE" (see epf changes). Exit status 0 when all were found,
    1 when any was not.

    EXAMPLES:
      epf lookup 293406864
      epf lookup https://apps.apple.com/gb/app/dragon-battle-tracker/id293406864 --lang fr
      epf lookup 293406864 284207097 --country jp --json
    """

    static let country = TextOption("country", "CC",
                                    "Storefront for the price (ISO 3166 alpha-2, e.g. us, gb, jp).",
                                    shownDefault: "the link's country; with neither, prices in every storefront")
    static let language = TextOption("lang", "LL", "Show the title and description localised for this language "
                                         + "(application_detail).")
    static let json = CommonOptions.json("Print {\"resultCount\", \"results\", \"invalidIds\"} shaped like Apple's "
                                             + "Lookup API.")

    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let path = try databasePath(&arguments)
        let country = try arguments.read(Self.country)
        let language = try arguments.read(Self.language)
        let json = arguments.read(Self.json)
        let items = try arguments.finish()
        guard !items.isEmpty else { throw UsageError("give at least one Apple ID or store link") }
        let unreadable = StoreLink.unreadable(items)
        guard unreadable.isEmpty else {
            throw UsageError(StoreLink.notAnIDMessage(unreadable))
        }
        let result = try QueryCLI.run {
            let engine = try QueryEngine(databasePath: path)
            return try engine.lookups.lookup(items, country: country, language: language, allPrices: country == nil)
        }
        if json {
            QueryCLI.writeJSON(result.json)
        } else {
            let width = terminalWidth()
            for (index, item) in result.items.enumerated() {
                if index > 0 { say() }
                QueryCLI.printItem(item, width: width, requestedCountry: country)
            }
        }
        if !result.invalidIds.isEmpty {
            Output.shared.flush()
            for removed in result.removedIds { printError(QueryCLI.removedMessage(Self.name, removed)) }
            let removedIds = Set(result.removedIds.map(\.argument))
            let missing = result.invalidIds.filter { !removedIds.contains($0) }
            if !missing.isEmpty { printError("epf lookup: not found: " + missing.joined(separator: ", ")) }
            return .notFound
        }
        return .ok
    }
}

/// Helpers shared by the query commands (lookup, search, prices, genres, storefronts, sql).
enum QueryCLI {
    /// Runs a query, turning `QueryError` into the CLI's errors and exit statuses.
    ///
    /// Missing or empty database: 66. Bad option value: usage error (64). A database file this user may not read,
    /// or one that is not SQLite: as every command (`ExitCode.forDatabaseFile`). Refused or failing SQL: 65.
    static func run<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as QueryError {
            throw failure(error)
        }
    }

    /// The CLI error for a query error (see `run`).
    static func failure(_ error: QueryError) -> any Error {
        switch error {
        case .databaseEmpty(let path) where ImportLock.isHeld(databasePath: path):
            // A first import running, before its first commit: as status says, try again later.
            return importRunning(path)
        case .databaseMissing, .databaseEmpty: return CommandFailure(.noInput, message(error))
        case .badArgument: return UsageError(message(error))
        case .refused: return CommandFailure(.dataError, message(error))
        case .sqlite(let sqlite): return CommandFailure(ExitCode.forDatabaseFile(sqlite) ?? .dataError, message(error))
        }
    }

    /// The failure of every command reading a database whose first import is running and has committed no table
    /// yet (75, try again later).
    static func importRunning(_ path: String) -> CommandFailure {
        CommandFailure(.tempFail, "database '\(path)': an import is running and has committed no table yet; try "
                       + "again later")
    }

    /// A query error in the CLI's words: options as flags, and what to run when there is no data. The one wording
    /// of "no database" and "no EPF tables" for every command (`status` and `export` too).
    static func message(_ error: QueryError) -> String {
        switch error {
        case .databaseMissing(let path):
            if let reason = DatabaseLocation.readerReason(for: path) {
                return "\(error.description): \(reason); give --db the path of an existing database (or create one "
                    + "with 'epf import FEED_PATH --db \(path)' once the directory exists)"
            }
            return "\(error.description): import a feed first with 'epf import FEED_PATH --db \(path)'"
        case .databaseEmpty(let path):
            return "\(error.description): import a feed first with 'epf import FEED_PATH --db \(path)'"
        case .badArgument(let name, let message):
            return "--\(name): \(message)"
        case .refused, .sqlite:
            return error.description
        }
    }

    /// What `lookup` and `prices` say on stderr of an id not found because it left the store:
    /// "epf lookup: 343339686: removed from the store in the export of 2026-01-12".
    static func removedMessage(_ command: String, _ removed: RemovedItem) -> String {
        "epf \(command): \(removed.argument): removed from the store in the export of "
            + EPFValues.isoDate(milliseconds: removed.exportDate)
    }

    /// Writes compact JSON and a newline to stdout.
    static func writeJSON(_ value: JSONValue) {
        var bytes = value.serialized()
        bytes.append(0x0A)
        Output.shared.write(String(decoding: bytes, as: UTF8.self))
    }

    /// Prints one lookup or search result as a titled block of aligned fields.
    static func printItem(_ item: LookupItem, width: Int?, requestedCountry: String? = nil) {
        let value = item.value
        let title = value["trackName"]?.stringValue ?? value["collectionName"]?.stringValue
            ?? value["artistName"]?.stringValue ?? ""
        let heading = TerminalText.oneLine("\(item.id)  \(title)  (\(item.kind.word))")
        say(TerminalText.bold(TerminalText.truncate(heading, to: width)))
        var lines: [(String, String)] = []
        func add(_ label: String, _ text: String?) {
            if let text, !text.isEmpty { lines.append((label, text)) }
        }
        func join(_ key: String, drop: Int = 0) -> String? {
            guard let array = value[key]?.arrayValue else { return nil }
            return array.dropFirst(drop).compactMap(\.stringValue).joined(separator: ", ")
        }
        if value["sellerName"]?.stringValue != value["artistName"]?.stringValue {
            add("Seller", value["sellerName"]?.stringValue)
        }
        if item.kind != .artist { add("Artist", value["artistName"]?.stringValue) }
        add("Artist type", value["artistType"]?.stringValue)
        if item.kind != .album { add("Collection", value["collectionName"]?.stringValue) }
        add("Age", value["contentAdvisoryRating"]?.stringValue)
        add("Released", value["releaseDate"]?.stringValue.map { String($0.prefix(10)) })
        add("Version", value["version"]?.stringValue)
        add("Size", value["fileSizeBytes"]?.stringValue.flatMap { Int64($0) }.map(humanBytes))
        add("Duration", value["trackTimeMillis"]?.intValue.map(duration))
        add("Tracks", value["trackCount"]?.intValue.map { String($0) })
        add("Genre", value["primaryGenreName"]?.stringValue)
        add("Other genres", join("genres", drop: 1))
        add("Devices", join("supportedDevices"))
        add("Languages", join("languageCodesISO2A"))
        add("Language", value["languageCode"]?.stringValue)
        add("URL", (value["trackViewUrl"] ?? value["collectionViewUrl"] ?? value["artistLinkUrl"])?.stringValue)
        add("Artwork", value["artworkUrl512"]?.stringValue ?? value["artworkUrl100"]?.stringValue)
        if let formatted = value["formattedPrice"]?.stringValue {
            let currency = value["currency"]?.stringValue ?? ""
            add("Price", "\(formatted)  (\(currency), \(item.country ?? "?"))")
        } else if item.kind == .software, let country = requestedCountry ?? item.storefront ?? item.country,
                  value["prices"] == nil {
            add("Price", "none in the \(country.lowercased()) storefront (not sold there); see: epf prices \(item.id)")
        }
        let description = (value["description"] ?? value["longDescription"] ?? value["shortDescription"])?
            .stringValue
        let labelWidth = (lines.map { TerminalText.displayWidth($0.0) } + [11]).max() ?? 11
        func pad(_ label: String) -> String {
            "  " + label + String(repeating: " ", count: labelWidth - TerminalText.displayWidth(label)) + "  "
        }
        for (label, text) in lines { say(TerminalText.truncate(pad(label) + TerminalText.oneLine(text), to: width)) }
        if let description, !description.isEmpty {
            if width != nil {
                say(TerminalText.truncate(pad("Description") + TerminalText.oneLine(description), to: width))
            } else {
                let indent = String(repeating: " ", count: labelWidth + 4)
                // Feeds hold LF, CRLF and bare CR line ends: any of them starts an indented line.
                let body = description.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
                    .map { TerminalText.oneLine(String($0)) }
                    .joined(separator: "\n" + indent)
                say(pad("Description") + body)
            }
        }
        if let notes = value["releaseNotes"]?.stringValue, !notes.isEmpty {
            say(TerminalText.truncate(pad("Notes") + TerminalText.oneLine(notes), to: width))
        }
        if let prices = value["prices"]?.arrayValue {
            if prices.isEmpty {
                say(pad("Prices") + "none")
            } else {
                say(pad("Prices") + "\(prices.count) storefronts")
                let rows = prices.map { price -> [String] in
                    ["  " + (price["country"]?.stringValue ?? "?"), price["storefrontName"]?.stringValue ?? "",
                     price["currency"]?.stringValue ?? "", price["formattedPrice"]?.stringValue ?? ""]
                }
                printTable(header: ["  CC", "STOREFRONT", "CURRENCY", "PRICE"], rows: rows, width: width,
                           rightAligned: [3], boldHeader: true)
            }
        }
    }

    /// 1234567 -> "1.2 MB (1234567 bytes)".
    static func humanBytes(_ count: Int64) -> String {
        let units = ["bytes", "KB", "MB", "GB", "TB"]
        var value = Double(count)
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        if unit == 0 { return "\(count) bytes" }
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) \(units[unit]) (\(count) bytes)"
    }

    /// 245000 -> "4:05".
    static func duration(_ milliseconds: Int64) -> String {
        let seconds = milliseconds / 1000
        let rest = seconds % 60
        if seconds >= 3600 {
            let minutes = (seconds / 60) % 60
            return "\(seconds / 3600):\(minutes < 10 ? "0" : "")\(minutes):\(rest < 10 ? "0" : "")\(rest)"
        }
        return "\(seconds / 60):\(rest < 10 ? "0" : "")\(rest)"
    }
}
