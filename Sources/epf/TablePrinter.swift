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

/// Prints rows as aligned columns under a header: the one table printer of the CLI (import summaries, status,
/// query results). Widths are display widths, so CJK titles line up; control characters in cells show as spaces;
/// every line is cut to `width` columns (the terminal's, by default; nil when stdout is not a terminal) and
/// loses its trailing spaces. `rightAligned` lists the columns to align right (numbers, prices).
func printTable(header: [String], rows: [[String]], width: Int? = terminalWidth(), rightAligned: Set<Int> = [],
                boldHeader: Bool = false) {
    let cleaned = rows.map { $0.map(TerminalText.oneLine) }
    var widths = header.map(TerminalText.displayWidth)
    for row in cleaned {
        for (index, cell) in row.enumerated() where index < widths.count {
            widths[index] = max(widths[index], TerminalText.displayWidth(cell))
        }
    }
    func line(_ cells: [String]) -> String {
        var text = ""
        for (index, cell) in cells.enumerated() {
            let columnWidth = index < widths.count ? widths[index] : 0
            let pad = String(repeating: " ", count: max(0, columnWidth - TerminalText.displayWidth(cell)))
            text += rightAligned.contains(index) ? pad + cell : cell + pad
            if index < cells.count - 1 { text += "  " }
        }
        while text.last == " " { text.removeLast() }
        return TerminalText.truncate(text, to: width)
    }
    say(boldHeader ? TerminalText.bold(line(header)) : line(header))
    for row in cleaned { say(line(row)) }
}
