import EPFFormat
import EPFQuery
import JSONText

/// `epf prices ID --history`: an item's recorded price changes, as a table and, on a terminal, a chart.
enum PriceHistoryCommand {
    static func run(link: StoreLink, argument: String, country: String?, since: String?, json: Bool,
                    path: String) throws -> ExitCode {
        let kind = link.kind.flatMap { PriceHistoryKinds.word(for: $0) }
        let changes = try QueryCLI.run {
            try QueryEngine(databasePath: path).changes.priceHistory(id: link.id, kind: kind, country: country,
                                                                      since: since)
        }
        if json {
            QueryCLI.writeJSON(.object([("id", .int(link.id)), ("resultCount", .int(Int64(changes.count))),
                                        ("changes", .array(changes.map(\.json)))]))
            return .ok
        }
        if changes.isEmpty {
            say("no recorded price changes for \(argument) (the database records them when imports run with "
                + "--history prices; epf status shows whether it does)")
            return .ok
        }
        let rows = changes.map { change -> [String] in
            [EPFValues.isoDate(milliseconds: change.exportDate), change.country ?? "?", String(change.storefrontId),
             change.change, change.formatted(change.oldPrice)?.text ?? "-",
             change.formatted(change.newPrice)?.text ?? "-"]
        }
        printTable(header: ["EXPORT", "CC", "STOREFRONT", "CHANGE", "OLD", "NEW"], rows: rows,
                   width: terminalWidth(), rightAligned: [2, 4, 5], boldHeader: true)
        if colorAllowed {
            say()
            for line in PriceChart.lines(changes) { say(line) }
        }
        return .ok
    }
}

/// The kind words of the price history by entity kind.
enum PriceHistoryKinds {
    static func word(for kind: EntityKind) -> String? {
        switch kind {
        case .software: return "app"
        case .album, .ebook: return "collection"
        case .song: return "song"
        case .video: return "video"
        case .artist: return nil
        }
    }
}

/// A small chart of prices over time: one line per storefront, one block per recorded step (the price before the
/// first change, then after each), its height the price between the storefront's lowest and highest; a gap where
/// the item was not sold there.
enum PriceChart {
    static let blocks: [Character] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]
    /// Most storefronts drawn (the rest are in the table above).
    static let maximumLines = 12

    static func lines(_ changes: [PriceChange]) -> [String] {
        var order: [Int64] = []
        var byStorefront: [Int64: [PriceChange]] = [:]
        for change in changes {
            if byStorefront[change.storefrontId] == nil { order.append(change.storefrontId) }
            byStorefront[change.storefrontId, default: []].append(change)
        }
        var lines: [String] = []
        for storefront in order.prefix(maximumLines) {
            guard let list = byStorefront[storefront], let first = list.first else { continue }
            var steps: [Double?] = [first.oldPrice.flatMap(Double.init)]
            steps += list.map { $0.change == "disappeared" ? nil : $0.newPrice.flatMap(Double.init) }
            let known = steps.compactMap { $0 }
            guard let low = known.min(), let high = known.max() else { continue }
            let bars = String(steps.map { step -> Character in
                guard let step else { return " " }
                guard high > low else { return blocks[blocks.count / 2] }
                return blocks[min(blocks.count - 1, Int((step - low) / (high - low) * Double(blocks.count - 1) + 0.5))]
            })
            let last = list[list.count - 1]
            let from = first.formatted(first.oldPrice)?.text ?? "-"
            let to = last.change == "disappeared" ? "not sold" : last.formatted(last.newPrice)?.text ?? "-"
            let code = (first.country ?? String(storefront)).padding(toLength: 3, withPad: " ", startingAt: 0)
            lines.append("\(code) \(bars)  \(from) → \(to)  (\(list.count) change\(list.count == 1 ? "" : "s"))")
        }
        if order.count > maximumLines { lines.append("… and \(order.count - maximumLines) more storefronts") }
        return lines
    }
}
