import Foundation

/// Text for a terminal: widths in columns (CJK and emoji take two), cutting to a width, one-line cells, bold.
enum TerminalText {
    /// Bold text when colour is allowed.
    static func bold(_ text: String) -> String {
        colorAllowed ? "\u{1B}[1m" + text + "\u{1B}[0m" : text
    }

    /// Columns a string takes on a terminal: wide (CJK, fullwidth, emoji) count 2, combining marks 0.
    static func displayWidth(_ text: String) -> Int {
        var width = 0
        for scalar in text.unicodeScalars {
            width += scalarWidth(scalar.value)
        }
        return width
    }

    static func scalarWidth(_ value: UInt32) -> Int {
        switch value {
        case 0x0300...0x036F, 0x200B...0x200F, 0xFE00...0xFE0F: return 0
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
             0xA000...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
             0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x3FFFD:
            return 2
        default: return value < 0x20 ? 0 : 1
        }
    }

    /// Cuts text to `width` columns, ending with "…" when cut; unchanged when width is nil.
    static func truncate(_ text: String, to width: Int?) -> String {
        guard let width, displayWidth(text) > width else { return text }
        var result = ""
        var used = 0
        for character in text {
            let columns = displayWidth(String(character))
            if used + columns > width - 1 { break }
            result.append(character)
            used += columns
        }
        return result + "…"
    }

    /// One line: control characters (newlines, tabs) shown as spaces.
    static func oneLine(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { $0.value < 0x20 ? " " : $0 }))
    }
}

/// How tables meet the terminal: `--wide` (a global option) shows every column even when the lines are wider.
enum TableLayout {
    /// Set by `--wide`: no columns dropped or shortened to fit the terminal. Unchecked: set once on the main thread
    /// while the arguments are parsed, before any table is printed, and read there.
    nonisolated(unsafe) static var wide = false
}

/// Prints rows as aligned columns under a header: the one table printer of the CLI (import summaries, status,
/// query results). Widths are display widths, so CJK titles line up; control characters in cells show as spaces;
/// lines lose their trailing spaces. `rightAligned` lists the columns to align right (numbers, prices).
///
/// On a terminal (`width` is the terminal's; nil when stdout is not one, or with `--wide`) a table wider than the
/// terminal is made to fit, never cut at the edge: first the columns least worth their room go, in the order
/// `priorities` gives (one number per column: 0 is never dropped, higher numbers go first; no priorities, nothing
/// is dropped), then the widest text columns are shortened, their cells ending in "…". A line under the table names
/// the columns left out. Not a terminal: every column in full.
func printTable(header: [String], rows: [[String]], width: Int? = terminalWidth(), rightAligned: Set<Int> = [],
                boldHeader: Bool = false, priorities: [Int]? = nil) {
    let cleaned = rows.map { $0.map(TerminalText.oneLine) }
    let fit = TableLayout.wide ? nil : width
    let layout = TableFit(header: header, rows: cleaned, rightAligned: rightAligned, priorities: priorities,
                          width: fit)
    func line(_ cells: [String]) -> String {
        var text = ""
        for (position, index) in layout.kept.enumerated() {
            let cell = index < cells.count ? cells[index] : ""
            let columnWidth = layout.widths[index]
            let shown = TerminalText.displayWidth(cell) > columnWidth ? TerminalText.truncate(cell, to: columnWidth)
                : cell
            let pad = String(repeating: " ", count: max(0, columnWidth - TerminalText.displayWidth(shown)))
            text += rightAligned.contains(index) ? pad + shown : shown + pad
            if position < layout.kept.count - 1 { text += "  " }
        }
        while text.last == " " { text.removeLast() }
        return TerminalText.truncate(text, to: fit)
    }
    say(boldHeader ? TerminalText.bold(line(header)) : line(header))
    for row in cleaned { say(line(row)) }
    if !layout.dropped.isEmpty {
        say("(\(layout.dropped.map { header[$0] }.joined(separator: ", ")) left out to fit \(fit ?? 0) columns; "
            + "--wide shows them)")
    }
}

/// Which columns of a table are shown and how wide each is, to fit a width (see `printTable`).
struct TableFit {
    /// The indexes of the columns shown, in order.
    private(set) var kept: [Int]
    /// Each column's width (for every column, shown or not).
    private(set) var widths: [Int]
    /// The columns left out, in table order.
    var dropped: [Int] { (0..<widths.count).filter { !kept.contains($0) } }

    init(header: [String], rows: [[String]], rightAligned: Set<Int>, priorities: [Int]?, width: Int?) {
        var widths = header.map(TerminalText.displayWidth)
        for row in rows {
            for (index, cell) in row.enumerated() where index < widths.count {
                widths[index] = max(widths[index], TerminalText.displayWidth(cell))
            }
        }
        self.widths = widths
        kept = Array(widths.indices)
        guard let width else { return }
        func total() -> Int { kept.map { self.widths[$0] }.reduce(0, +) + 2 * max(0, kept.count - 1) }
        if let priorities {
            // Least useful first; of equal priority, the rightmost first.
            let order = widths.indices.filter { (priorities.indices.contains($0) ? priorities[$0] : 0) > 0 }
                .sorted { (priorities[$0], $0) > (priorities[$1], $1) }
            for index in order where total() > width {
                kept.removeAll { $0 == index }
            }
        }
        // Still too wide: shorten the widest text column a column at a time, each down to 8 or its header.
        let floors = header.map { max(8, TerminalText.displayWidth($0)) }
        while total() > width, let widest = kept.filter({ !rightAligned.contains($0) && self.widths[$0] > floors[$0] })
            .max(by: { self.widths[$0] < self.widths[$1] }) {
            self.widths[widest] -= 1
        }
    }
}
