import EPFFormat

/// The order in which an import applies its inputs, whatever order they were given in: by feed date, the full
/// export before the incremental of the same date, otherwise as given. Both stores' imports use it (`ImportPass`).
enum ImportOrder {
    /// Thrown to stop reading an input once its header is known.
    private struct StopPeeking: Error {}

    /// The order key of an input: its feed date, then FULL before INCREMENTAL.
    private static func orderKey(_ path: String) -> (date: String, rank: Int) {
        var date = FeedInput.feedAndDate(in: path)?.date
        if date == nil, let first = try? FeedInput.files(at: path).first {
            date = FeedInput.feedAndDate(in: first)?.date
        }
        return (date ?? "99999999", exportMode(of: path) == .incremental ? 1 : 0)
    }

    /// The `#exportMode` of the first table file of an input (a file, an archive or a feed directory), read from
    /// its header only; nil when it has none or cannot be read (errors surface when the input is really read).
    package static func exportMode(of path: String) -> ExportMode? {
        guard let first = (try? FeedInput.files(at: path))?.first else { return nil }
        var peekOptions = ReadOptions(prefetch: false)
        peekOptions.verifySidecars = false
        // The header is in the first block: decoding blocks ahead in parallel would be wasted.
        peekOptions.decompressionThreads = 1
        var mode: ExportMode?
        do {
            try FeedInput.forEachTable(inFile: first, options: peekOptions) { _, reader in
                mode = reader.header.exportMode
                throw StopPeeking()
            }
        } catch {
            // Errors surface when the input is really read.
        }
        return mode
    }

    /// Orders inputs: by date, full before incremental, otherwise as given.
    package static func ordered(_ paths: [String]) -> [String] {
        let keyed = paths.enumerated().map { (index: $0.offset, path: $0.element, key: orderKey($0.element)) }
        return keyed.sorted { left, right in
            if left.key.date != right.key.date { return left.key.date < right.key.date }
            if left.key.rank != right.key.rank { return left.key.rank < right.key.rank }
            return left.index < right.index
        }.map(\.path)
    }
}
