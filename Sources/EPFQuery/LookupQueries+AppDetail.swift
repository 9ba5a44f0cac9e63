import JSONText

/// An app's `application_detail` row in one language: localized texts and screenshots, with English as fallback.
extension LookupQueries {
    /// One `application_detail` row.
    struct Detail {
        var code: String
        var title: String?
        var description: String?
        var releaseNotes: String?
        /// `screenshot_url_1...4`, in order, the empty ones left out.
        var screenshots: [String] = []
        /// `ipad_screenshot_url_1...4`, in order, the empty ones left out.
        var ipadScreenshots: [String] = []
    }

    /// The detail row of `language` (normalized: `ja`, `ja_jp`, `pt-br`), else of its primary subtag (`ja`), else
    /// the English one (`en`); nil when the app has none of them.
    func localizedDetail(_ id: Int64, language: String?) throws -> Detail? {
        var candidates: [String] = []
        if let language {
            candidates.append(language)
            let primary = String(language.prefix { $0 != "_" && $0 != "-" })
            if primary != language { candidates.append(primary) }
        }
        if !candidates.contains("en") { candidates.append("en") }
        for candidate in candidates {
            if let detail = try applicationDetail(id, language: candidate) { return detail }
        }
        return nil
    }

    /// The detail row whose language code is `language` or starts with it followed by `-` or `_` (the shortest
    /// such code wins), nil without one.
    func applicationDetail(_ id: Int64, language: String) throws -> Detail? {
        guard tables.contains("application_detail") else { return nil }
        let shots = try detailScreenshotColumns()
        let sql = """
            SELECT language_code, title, description, release_notes\(shots.isEmpty ? "" : ", " + shots)
            FROM application_detail
            WHERE application_id = ?1 AND lower(substr(language_code, 1, length(?2))) = ?2
              AND (length(language_code) = length(?2) OR substr(language_code, length(?2) + 1, 1) IN ('-', '_'))
            ORDER BY length(language_code), language_code LIMIT 1
            """
        return try firstRow(sql, [.integer(id), .text(language)]) { row in
            let statement = row.statement
            var detail = Detail(code: statement.text(at: 0) ?? language, title: statement.text(at: 1),
                                description: statement.text(at: 2), releaseNotes: statement.text(at: 3))
            if !shots.isEmpty {
                detail.screenshots = (4..<8).compactMap { Self.nonEmpty(statement.text(at: $0)) }
                detail.ipadScreenshots = (8..<12).compactMap { Self.nonEmpty(statement.text(at: $0)) }
            }
            return detail
        }
    }

    /// The eight screenshot columns as a select list, empty when the table lacks any of them (an old header).
    func detailScreenshotColumns() throws -> String {
        dropStaleStatements()
        if let detailScreenshots { return detailScreenshots }
        let names = (1...4).map { "screenshot_url_\($0)" } + (1...4).map { "ipad_screenshot_url_\($0)" }
        let present = try columnNames("application_detail")
        let list = names.allSatisfy(present.contains) ? names.joined(separator: ", ") : ""
        detailScreenshots = list
        return list
    }

    static func nonEmpty(_ text: String?) -> String? {
        guard let text, !text.isEmpty else { return nil }
        return text
    }

    /// Adds the fields of an app's detail rows: `releaseNotes`, `screenshotUrls` and `ipadScreenshotUrls` from
    /// `detail` (the requested language's row or the English one), the screenshots from the English row when the
    /// chosen one has none.
    func addDetailFields(_ fields: inout Fields, id: Int64, detail: Detail?) throws {
        guard tables.contains("application_detail") else { return }
        fields.add("releaseNotes", detail?.releaseNotes)
        var screenshots = detail?.screenshots ?? []
        var ipadScreenshots = detail?.ipadScreenshots ?? []
        if screenshots.isEmpty && ipadScreenshots.isEmpty, detail.map({ !Self.isEnglish($0.code) }) ?? false,
           let english = try applicationDetail(id, language: "en") {
            screenshots = english.screenshots
            ipadScreenshots = english.ipadScreenshots
        }
        fields.add("screenshotUrls", .array(screenshots.map { .string($0) }))
        fields.add("ipadScreenshotUrls", .array(ipadScreenshots.map { .string($0) }))
    }

    static func isEnglish(_ code: String) -> Bool {
        let lower = code.lowercased()
        return lower == "en" || lower.hasPrefix("en-") || lower.hasPrefix("en_")
    }

    /// Apple's artwork URL of `size` x `size` pixels made from a feed's artwork URL: the image service's size
    /// segment (`.../512x512bb.jpg`) or an older file suffix (`....100x100-75.jpg`) is replaced; any other URL
    /// is returned unchanged (the feed's own size).
    static func artworkURL(_ url: String, size: Int) -> String {
        guard let slash = url.lastIndex(of: "/") else { return url }
        let last = url[url.index(after: slash)...]
        // "512x512bb.jpg": digits, 'x', digits, then letters, '.', extension.
        let width = last.prefix { $0.isASCII && $0.isNumber }
        if !width.isEmpty, last.dropFirst(width.count).first == "x" {
            let rest = last.dropFirst(width.count + 1)
            let height = rest.prefix { $0.isASCII && $0.isNumber }
            let suffix = rest.dropFirst(height.count)
            if !height.isEmpty, suffix.contains("."), !suffix.contains("/"), !suffix.contains("?") {
                return String(url[...slash]) + "\(size)x\(size)" + suffix
            }
        }
        // "name.100x100-75.jpg"
        let parts = last.split(separator: ".", omittingEmptySubsequences: false)
        if parts.count >= 3 {
            let sized = parts[parts.count - 2]
            let pieces = sized.split(separator: "-")
            let dimensions = pieces.first?.split(separator: "x") ?? []
            if pieces.count == 2, dimensions.count == 2,
               dimensions.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }) {
                var replaced = parts.map(String.init)
                replaced[parts.count - 2] = "\(size)x\(size)-\(pieces[1])"
                return String(url[...slash]) + replaced.joined(separator: ".")
            }
        }
        return url
    }
}
