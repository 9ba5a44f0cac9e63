import EPFFormat

/// The generator's own model of a feed: which rows each table holds, as field values exactly as written
/// (nil for an empty field), so end-to-end tests can compare a database with what was generated.
///
/// Rows are regenerated on demand from `(seed, index)`; nothing is kept between calls. Values are decoded
/// as UTF-8, with invalid bytes (only in dirt) replaced by U+FFFD. With dirt, records are returned as written:
/// a record with a stray 0x01 has one field too many, junk stays junk.
///
/// Incrementals (`day` 1 ... 366) are cumulative and hold, for the apps changed or added up to that day:
/// `application` (app 0 always changes on day 1: "Café Olé Lite" becomes "Café Olé Lite 2"),
/// `application_detail`, `application_price` (app 1's prices always change on day 1), and for new apps
/// `genre_application`, `artist_application`, `application_device_type`; and the day's charts (popularity) as a
/// FULL snapshot, as Apple ships them every day. Other tables come only with full exports.
package struct FeedModel: Sendable {
    /// The options of the first full export; `mode`, `day` and `week` are ignored, `layout` and `gzip` do not
    /// matter.
    package let options: GeneratorOptions
    private let plan: Plan

    /// A model of the feeds written with `options` (as a full export and its incrementals).
    package init(_ options: GeneratorOptions) {
        var full = options
        full.mode = .full
        full.week = 0
        self.options = full
        plan = Plan(full)
    }

    /// Apps whose titles do not depend on the seed (indices 0 ... 7).
    package static var fixedApps: [FixedApp] { FixedApp.all }

    /// Apple ID of app `index`; apps added by incrementals continue after the full's `apps`.
    package func appID(_ index: Int) -> Int64 { plan.appID(index) }

    /// Number of apps after applying the full export and the incremental of `day` (0: the full alone).
    package func appCount(throughDay day: Int = 0) -> Int { plan.apps + plan.newAppsPerDay * day }

    /// Number of apps each incremental day adds.
    package var newAppsPerDay: Int { plan.newAppsPerDay }

    /// Apple ID of artist `index` (software artists first, then music artists).
    package func artistID(_ index: Int) -> Int64 { plan.artistID(index) }

    /// Apple ID of collection `index`.
    package func collectionID(_ index: Int) -> Int64 { plan.collectionID(index) }

    /// Apple ID of song `index`.
    package func songID(_ index: Int) -> Int64 { plan.songID(index) }

    /// Apple ID of video `index`.
    package func videoID(_ index: Int) -> Int64 { plan.videoID(index) }

    /// The options of the incremental export of `day` (1 ... 366) that belongs to this full export.
    package func incrementalOptions(day: Int) -> GeneratorOptions {
        var incremental = options
        incremental.mode = .incremental
        incremental.day = day
        return incremental
    }

    /// Calls `body` with every data record of one table file, in file order: the full export (`day` 0) or
    /// the incremental of `day`. A table the export does not write yields nothing.
    package func forEachRecord(_ table: String, day: Int = 0, _ body: ([String?]) throws -> Void) throws {
        try forEachRecord(table, exportOptions: day == 0 ? options : incrementalOptions(day: day), body)
    }

    /// Calls `body` with every data record of one table file of the export made with `exportOptions`.
    func forEachRecord(_ table: String, exportOptions: GeneratorOptions, _ body: ([String?]) throws -> Void) throws {
        guard let schema = GeneratedTables.named(table) else { throw GeneratorError.unknownTable(table) }
        try exportOptions.validate()
        var unfiltered = exportOptions
        unfiltered.tables = nil
        guard FeedGenerator.tables(for: unfiltered).contains(schema) else { return }
        try withoutActuallyEscaping(body) { escapable in
            let sink = CallbackSink { chunk in try FeedModel.parse(chunk, escapable) }
            let writer = RecordWriter(sink: sink)
            try TableEmitter(plan: Plan(exportOptions), schema: schema, writer: writer,
                             dirt: exportOptions.dirt ? DirtLog() : nil).writeFile()
        }
    }

    /// Every data record of one table file in file order (see `forEachRecord`).
    package func records(_ table: String, day: Int = 0) throws -> [[String?]] {
        var result: [[String?]] = []
        try forEachRecord(table, day: day) { result.append($0) }
        return result
    }

    /// The rows table `table` should hold after loading the full export and then the incremental of `day`
    /// (0: the full alone). Records are merged by the table's real primary key, a later record replacing an
    /// earlier one; rows keep the position where their key first appeared. Incrementals are cumulative, so
    /// loading days 1 ... N in turn gives the same rows as loading day N alone. A daily table (the charts,
    /// `GeneratedTables.dailyTables`) holds the day's snapshot alone.
    package func rows(_ table: String, throughDay day: Int = 0) throws -> [[String?]] {
        guard let schema = GeneratedTables.named(table) else { throw GeneratorError.unknownTable(table) }
        let keys = schema.keyIndices
        var rows: [[String?]] = []
        var positions: [[String?]: Int] = [:]
        func merge(_ record: [String?]) {
            let key = keys.map { $0 < record.count ? record[$0] : nil }
            if let position = positions[key] {
                rows[position] = record
            } else {
                positions[key] = rows.count
                rows.append(record)
            }
        }
        // A daily table (the charts) is a FULL snapshot in every export: the day's file replaces the table.
        let daily = day > 0 && GeneratedTables.dailyTables.contains(table)
        if !daily { try forEachRecord(table, day: 0, merge) }
        if day > 0 { try forEachRecord(table, day: day, merge) }
        return rows
    }

    /// Splits whole records at 0x02 0x0A and fields at 0x01, skipping metadata records (first byte `#`).
    static func parse(_ chunk: UnsafeRawBufferPointer, _ body: ([String?]) throws -> Void) throws {
        let bytes = chunk.assumingMemoryBound(to: UInt8.self)
        var start = 0
        var index = 0
        let count = bytes.count
        while index + 1 < count {
            if bytes[index] == 0x02 && bytes[index + 1] == 0x0A {
                if bytes[start] != UInt8(ascii: "#") {
                    var fields: [String?] = []
                    var fieldStart = start
                    for position in start...index where position == index || bytes[position] == 0x01 {
                        fields.append(position == fieldStart ? nil
                            : String(decoding: UnsafeBufferPointer(rebasing: bytes[fieldStart..<position]),
                                     as: UTF8.self))
                        fieldStart = position + 1
                    }
                    try body(fields)
                }
                index += 2
                start = index
            } else {
                index += 1
            }
        }
    }
}
