import EPFFormat

/// Writes one table file: header records, data rows, footer; injects dirt when the plan asks for it.
///
/// Not thread-safe: one emitter per table being written.
final class TableEmitter {
    let plan: Plan
    let schema: EPFTable
    let w: RecordWriter
    let dirt: DirtLog?
    let dirtPlan: DirtPlan?
    let applicationDirt: Set<Int>
    var title: [UInt8] = []
    var slug: [UInt8] = []
    var name: [UInt8] = []
    var nameSlug: [UInt8] = []
    /// The artist whose name `name` and `nameSlug` hold (-1: none yet).
    var composedArtist = -1
    var incrementalDecoyDone = false
    var exportDate: Int64 { plan.exportDate }
    var full: Bool { plan.options.mode == .full }

    init(plan: Plan, schema: EPFTable, writer: RecordWriter, dirt: DirtLog?) {
        self.plan = plan
        self.schema = schema
        w = writer
        self.dirt = dirt
        dirtPlan = dirt != nil && plan.options.mode == .full ? DirtPlan(apps: plan.apps) : nil
        applicationDirt = Set(dirtPlan?.applicationIndices ?? [])
        title.reserveCapacity(256)
        slug.reserveCapacity(256)
        name.reserveCapacity(256)
        nameSlug.reserveCapacity(256)
    }

    /// Writes the whole file and finishes the writer's sink chain.
    func writeFile() throws {
        header()
        try rows()
        footer()
        try w.finish()
    }

    // MARK: Header and footer

    func header() {
        w.byte(UInt8(ascii: "#"))
        for column in schema.columns { w.text(Array(column.utf8)) }
        w.endMetadataRecord()

        let keyOffset = w.recordOffset
        w.raw("#primaryKey:")
        if let dirt, schema.name == "genre" {
            w.raw("device_type_id")
            dirt.add(schema, .missingPrimaryKeyColumn, record: 0, offset: keyOffset, column: "device_type_id",
                     note: "#primaryKey: names device_type_id, which is not a column of genre; the key is genre_id")
        } else {
            for key in schema.primaryKey { w.text(Array(key.utf8)) }
        }
        w.endMetadataRecord()

        let typesOffset = w.recordOffset
        var types = schema.types
        if let dirt {
            switch schema.name {
            case "collection":
                types = types.enumerated().map { $0.offset < 2 ? $0.element : "VARCHAR(1000)" }
                dirt.add(schema, .wrongHeaderTypes, record: 0, offset: typesOffset,
                         note: "every column after collection_id declared VARCHAR(1000), as in feeds since 2021")
            case "artist_application":
                types = types.map { $0 == "INTEGER" ? "BIGINT" : $0 }
                dirt.add(schema, .typeDrift, record: 0, offset: typesOffset, column: "artist_id",
                         note: "ids declared BIGINT here but INTEGER in every other table")
            case "genre_application":
                types = types.map { $0 == "BOOLEAN" ? "INTEGER" : $0 }
                dirt.add(schema, .typeDrift, record: 0, offset: typesOffset, column: "is_primary",
                         note: "is_primary declared INTEGER instead of BOOLEAN")
            default:
                break
            }
        }
        w.raw("#dbTypes:")
        for type in types { w.text(Array(type.utf8)) }
        w.endMetadataRecord()

        w.raw("#exportMode:")
        w.raw(full || GeneratedTables.dailyTables.contains(schema.name) ? "FULL" : "INCREMENTAL")
        w.endMetadataRecord()
        for line in TableEmitter.legal {
            w.raw("##legal:")
            w.raw(line)
            w.endMetadataRecord()
        }
    }

    func footer() {
        let offset = w.recordOffset
        var count = w.dataRecords
        if let dirt, schema.name == "artist_type" {
            count += 3
            dirt.add(schema, .recordsWrittenTooLarge, record: 0, offset: offset, column: nil,
                     value: Array("#recordsWritten:\(count)".utf8),
                     note: "footer claims \(count) records but the file holds \(w.dataRecords)")
        }
        if let dirt, count == 0 {
            dirt.add(schema, .zeroRows, record: 0, offset: offset, note: "a table file with zero data records")
        }
        w.raw("#recordsWritten:")
        w.digits(Int64(count))
        w.endMetadataRecord()
    }

    /// Legal lines in the style of Apple's (not their text); some are empty after the prefix.
    static let legal: [StaticString] = [
        " IMPORTANT: This is a synthetic feed generated for testing; it is not Apple data.",
        " The layout follows the Enterprise Partner Feed relational format.", "",
        " Records end with STX LF; fields are separated by SOH; there is no quoting.",
        " Every value is UTF-8 text; an empty field means NULL.", "",
        " Identifiers, titles, prices and ranks are invented from a seed and are deterministic.",
        " Any resemblance to real products, companies or prices is coincidental.", "",
        " Use of this data is limited to building and testing EPF tooling.",
        " THE DATA IS PROVIDED AS IS, WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED,",
        " INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A",
        " PARTICULAR PURPOSE AND NONINFRINGEMENT.", "",
        " Export dates are milliseconds since 1970-01-01 00:00:00 UTC.",
        " DATETIME values are written as YYYY MM DD.", " Prices are DECIMAL(9,3) in the storefront currency.", "",
        " A FULL export is a complete snapshot; an INCREMENTAL export holds rows added or changed",
        " since the last FULL export and is cumulative.", "",
        " The last record of every file states how many data records it holds.",
        " Generated by epf generate.", "", " Contact: nobody@example.com", "",
        " Storefront ids, country codes and currencies are real; everything else is not.",
        " Copyright (c) the epf authors.", "", " END OF LEGAL NOTICE",
    ]

    // MARK: Rows

    func rows() throws {
        switch schema.name {
        case "application":
            try forEachApp(revision: plan.appRevision) { app, revision in try self.applicationRows(app, revision) }
        case "application_detail":
            try forEachApp(revision: plan.appRevision) { app, revision in try self.detailRows(app, revision) }
        case "application_device_type":
            try forEachApp(revision: nil) { app, _ in
                for (bit, device) in Reference.deviceTypes.enumerated() where app.devices & (1 << UInt16(bit)) != 0 {
                    self.w.int(self.exportDate)
                    self.w.int(app.id)
                    self.w.int(device.id)
                    try self.w.endRecord()
                }
            }
        case "artist_application":
            try forEachApp(revision: nil) { app, _ in
                self.w.int(self.exportDate)
                self.w.int(self.plan.artistID(app.artist))
                self.w.int(app.id)
                try self.w.endRecord()
            }
        case "genre_application":
            try forEachApp(revision: nil) { app, _ in try self.genreRows(app) }
        case "application_price":
            try forEachApp(revision: plan.priceRevision) { app, revision in try self.priceRows(app, revision) }
        case "application_popularity_per_genre", "free_application_popularity_per_genre",
             "paid_application_popularity_per_genre", "free_ipad_application_popularity_per_genre",
             "paid_ipad_application_popularity_per_genre":
            try popularityRows()
        case "key_value":
            try keyValueRows()
        case "artist":
            for index in 0..<(plan.softwareArtists + plan.musicArtists) { try artistRow(index) }
        case "artist_type":
            for type in Reference.artistTypes {
                w.int(exportDate)
                w.int(type.id)
                w.text(Array(type.name.utf8))
                w.int(type.mediaType)
                try w.endRecord()
            }
        case "media_type", "device_type":
            // Both are (id, name) reference lists.
            for type in schema.name == "media_type" ? Reference.mediaTypes : Reference.deviceTypes {
                w.int(exportDate)
                w.int(type.id)
                w.text(Array(type.name.utf8))
                try w.endRecord()
            }
        case "genre":
            for genre in Reference.genres {
                w.int(exportDate)
                w.int(genre.id)
                if let parent = genre.parent { w.int(parent) } else { w.null() }
                w.text(Array(genre.name.utf8))
                try w.endRecord()
            }
        case "storefront":
            guard full else { return } // an incremental storefront file (dirt only) has zero rows
            for storefront in plan.storefronts {
                w.int(exportDate)
                w.int(storefront.id)
                w.text(Array(storefront.countryCode.utf8))
                w.text(Array(storefront.name.utf8))
                try w.endRecord()
            }
        case "collection":
            for index in 0..<plan.collections { try collectionRow(index) }
        case "artist_collection":
            for index in 0..<plan.collections {
                w.int(exportDate)
                w.int(plan.artistID(plan.collectionArtist(index)))
                w.int(plan.collectionID(index))
                w.int(1)
                w.int(1)
                try w.endRecord()
            }
        case "song":
            for index in 0..<plan.songs { try songRow(index) }
        case "collection_song":
            for index in 0..<plan.songs {
                w.int(exportDate)
                w.int(plan.collectionID(index / Plan.songsPerCollection))
                w.int(plan.songID(index))
                w.int(index % Plan.songsPerCollection + 1)
                w.int(1)
                try w.endRecord()
            }
        case "artist_song":
            for index in 0..<plan.songs {
                w.int(exportDate)
                w.int(plan.artistID(plan.collectionArtist(index / Plan.songsPerCollection)))
                w.int(plan.songID(index))
                try w.endRecord()
            }
        case "video":
            for index in 0..<plan.videos { try videoRow(index) }
        case "artist_match", "collection_match", "song_match", "video_match":
            try matchRows()
        default:
            throw GeneratorError.unknownTable(schema.name)
        }
    }

    /// Calls `body` for every app this export holds, with its revision: all apps of a full export (for a later
    /// full, with their changes up to its day); for an incremental, the apps `revision` reports as changed, then
    /// every app added up to the export's day. Apps removed by the export's day are left out (`isPresent`).
    func forEachApp(revision: ((Int, Int) -> Int)?, _ body: (AppFacts, Int) throws -> Void) throws {
        let day = plan.options.exportDay
        if full {
            for index in 0..<plan.appsAtExport where plan.isPresent(index, atDay: day) {
                try body(AppFacts(plan: plan, index: index), day > 0 ? revision?(index, day) ?? 0 : 0)
            }
            return
        }
        if let revision {
            for index in 0..<plan.apps where plan.isPresent(index, atDay: day) {
                let changes = revision(index, day)
                if changes > 0 { try body(AppFacts(plan: plan, index: index), changes) }
            }
        }
        for index in plan.apps..<plan.appsAtExport where plan.isPresent(index, atDay: day) {
            try body(AppFacts(plan: plan, index: index), 0)
        }
    }
}
