import EPFFormat

/// Writes one table file: header records, data rows, footer; injects dirt when the plan asks for it.
///
/// Not thread-safe: one emitter per table being written.
final class TableEmitter {
    let plan: Plan
    let schema: TableSchema
    let w: RecordWriter
    let dirt: DirtLog?
    private let dirtPlan: DirtPlan?
    private let applicationDirt: Set<Int>
    var title: [UInt8] = []
    var slug: [UInt8] = []
    var name: [UInt8] = []
    var nameSlug: [UInt8] = []
    /// The artist whose name `name` and `nameSlug` hold (-1: none yet).
    var composedArtist = -1
    private var incrementalDecoyDone = false
    private var exportDate: Int64 { plan.exportDate }
    private var full: Bool { plan.options.mode == .full }

    init(plan: Plan, schema: TableSchema, writer: RecordWriter, dirt: DirtLog?) {
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

    private func header() {
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
        w.raw(full ? "FULL" : "INCREMENTAL")
        w.endMetadataRecord()
        for line in TableEmitter.legal {
            w.raw("##legal:")
            w.raw(line)
            w.endMetadataRecord()
        }
    }

    private func footer() {
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

    private func rows() throws {
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
        case "application_popularity_per_genre":
            try popularityRows()
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
        default:
            throw GeneratorError.unknownTable(schema.name)
        }
    }

    /// Calls `body` for every app this export holds, with its revision: all apps of a full export; for an
    /// incremental, the apps `revision` reports as changed, then every app added up to the export's day.
    private func forEachApp(revision: ((Int, Int) -> Int)?, _ body: (AppFacts, Int) throws -> Void) throws {
        if full {
            for index in 0..<plan.apps { try body(AppFacts(plan: plan, index: index), 0) }
            return
        }
        let day = plan.options.day
        if let revision {
            for index in 0..<plan.apps {
                let changes = revision(index, day)
                if changes > 0 { try body(AppFacts(plan: plan, index: index), changes) }
            }
        }
        for index in plan.apps..<plan.appsAtExport { try body(AppFacts(plan: plan, index: index), 0) }
    }

    // MARK: application

    private enum AppVariant {
        case clean, decoy, straySeparator, junk([UInt8]), invalidUTF8, nul, datetime([UInt8])
    }

    private func applicationRows(_ app: AppFacts, _ revision: Int) throws {
        if let dirt, !full, !incrementalDecoyDone {
            incrementalDecoyDone = true
            try duplicate(app, revision, dirt)
            return
        }
        guard let dirtPlan, let dirt, applicationDirt.contains(app.index) else {
            try applicationRow(app, revision, .clean)
            return
        }
        let record = w.dataRecords + 1
        let offset = w.recordOffset
        switch app.index {
        case dirtPlan.straySeparator:
            try applicationRow(app, revision, .straySeparator)
            dirt.add(schema, .strayFieldSeparator, record: record, offset: offset, column: "description",
                     note: "0x01 inside the description: this record has \(schema.columns.count + 1) fields")
        case dirtPlan.duplicateApp:
            try duplicate(app, revision, dirt)
        case dirtPlan.junkBracket, dirtPlan.junkException, dirtPlan.junkControl, dirtPlan.junkTypeName:
            let junk: [UInt8] = app.index == dirtPlan.junkBracket ? Array("[123]".utf8)
                : app.index == dirtPlan.junkException ? Array("<UnknownKeyException>".utf8)
                : app.index == dirtPlan.junkTypeName ? Array("[int]".utf8) : [0x31, 0x32, 0x07, 0x33]
            try applicationRow(app, revision, .junk(junk))
            dirt.add(schema, .junkInteger, record: record, offset: offset, column: "download_size", value: junk,
                     note: "not an integer in a column that may be NULL: stored as NULL, the row kept")
        case dirtPlan.invalidUTF8:
            try applicationRow(app, revision, .invalidUTF8)
            dirt.add(schema, .invalidUTF8, record: record, offset: offset, column: "title",
                     value: TableEmitter.invalidBytes, note: "the title ends with bytes C3 28 FF, not UTF-8")
        case dirtPlan.nulByte:
            try applicationRow(app, revision, .nul)
            dirt.add(schema, .nulByte, record: record, offset: offset, column: "description",
                     note: "a NUL byte inside the description")
        default:
            let value: [UInt8] = app.index == dirtPlan.bareYear ? Array("2012".utf8)
                : app.index == dirtPlan.longDatetime ? Array("2012-09-25-10:00:00-Etc/GMT".utf8)
                : Array("12 9 25".utf8)
            try applicationRow(app, revision, .datetime(value))
            let note = app.index == dirtPlan.shortDatetime ? "2 digit year: not a date; stored as NULL, the row kept"
                : "DATETIME not in YYYY MM DD form; stored in the canonical form YYYY-MM-DDTHH:MM:SSZ"
            dirt.add(schema, .oddDatetime, record: record, offset: offset, column: "itunes_release_date",
                     value: value, note: note)
        }
    }

    private func duplicate(_ app: AppFacts, _ revision: Int, _ dirt: DirtLog) throws {
        let decoyRecord = w.dataRecords + 1
        try applicationRow(app, revision, .decoy)
        let record = w.dataRecords + 1
        let offset = w.recordOffset
        try applicationRow(app, revision, .clean)
        dirt.add(schema, .duplicatePrimaryKey, record: record, offset: offset, column: "application_id",
                 value: Array(String(app.id).utf8),
                 note: "repeats the key of record \(decoyRecord); this later record should win")
    }

    static let invalidBytes: [UInt8] = [0xC3, 0x28, 0xFF]
    static let decoyTitle: StaticString = "Decoy duplicate (the later record wins)"
    private static let ages: [StaticString] = ["4+", "9+", "12+", "17+"]

    private func applicationRow(_ app: AppFacts, _ revision: Int, _ variant: AppVariant) throws {
        var random = SplitMix64(plan.seed, Salt.app, app.index, 1)
        w.int(exportDate)
        w.int(app.id)
        composeTitle(app, language: app.language, revision: revision)
        if case .decoy = variant {
            w.text(TableEmitter.decoyTitle)
        } else {
            w.text(title)
        }
        if case .invalidUTF8 = variant { w.raw(TableEmitter.invalidBytes) }
        w.text(TableEmitter.ages[app.age])
        composeArtist(app.artist)
        w.text(name)
        w.text(name)
        if random.chance(90) {
            w.beginField()
            w.raw("https://www.")
            w.raw(nameSlug)
            w.raw(".com/")
        } else {
            w.null()
        }
        if app.index == 7 {
            w.null()
        } else {
            w.beginField()
            w.raw("https://www.")
            w.raw(nameSlug)
            w.raw(".com/support")
        }
        w.beginField()
        w.raw("https://itunes.apple.com/us/app/")
        w.raw(slug)
        w.raw("/id")
        w.digits(app.id)
        w.raw("?mt=8&uo=4")
        artwork(&random, file: "AppIcon-0-0-1x_U007emarketing-0-7-0-85-220.png", size: "512x512bb.jpg")
        artwork(&random, file: "AppIcon-0-0-1x_U007emarketing-0-7-0-85-220.png", size: "100x100bb.jpg")
        if case let .datetime(value) = variant { w.text(value) } else { date(app.releaseDay) }
        if random.chance(95) {
            w.beginField()
            w.raw("\u{00A9} ")
            w.digits(Int64(GeneratorOptions.civil(daysSinceEpoch: app.releaseDay).0))
            w.byte(32)
            w.raw(name)
        } else {
            w.null()
        }
        w.beginField()
        description(app, language: app.language)
        switch variant {
        case .straySeparator: w.raw("\u{01} (continued after a stray separator)")
        case .nul:
            w.byte(0)
            w.raw(" (after a NUL byte)")
        default: break
        }
        w.beginField()
        if case .decoy = variant {
            w.raw("0.0.1")
        } else {
            version(app, revision)
        }
        w.beginField()
        version(app, revision)
        if case let .junk(value) = variant { w.text(value) } else { w.int(app.downloadSize) }
        try w.endRecord()
    }

    private func version(_ app: AppFacts, _ revision: Int) {
        w.digits(Int64(app.version.0))
        w.byte(UInt8(ascii: "."))
        w.digits(Int64(app.version.1))
        w.byte(UInt8(ascii: "."))
        w.digits(Int64(app.version.2 + revision))
    }

    // MARK: application_detail

    private static let phoneSizes: [StaticString] = ["1242x2208", "1284x2778", "1290x2796", "640x1136"]
    private static let padSizes: [StaticString] = ["2048x2732", "2048x1536", "1668x2388"]

    private func detailRows(_ app: AppFacts, _ revision: Int) throws {
        for language in 0..<Language.all.count where app.detailLanguages & (1 << UInt16(language)) != 0 {
            var random = SplitMix64(plan.seed, Salt.detail, app.index, language &+ 100)
            w.int(exportDate)
            w.int(app.id)
            w.text(Language.codes[language])
            composeTitle(app, language: language, revision: revision)
            w.text(title)
            w.beginField()
            description(app, language: language)
            w.beginField()
            if random.chance(60) || revision > 0 {
                var notes = SplitMix64(plan.seed, Salt.detail, app.index, language &+ 1000 &* (revision + 1))
                Corpus.all[language].append(to: w, length: 20 + notes.below(600), using: &notes)
            }
            composeArtist(app.artist)
            if app.index == 7 {
                w.null()
            } else {
                w.beginField()
                w.raw("https://www.")
                w.raw(nameSlug)
                w.raw(".com/")
            }
            w.beginField()
            w.raw("https://www.")
            w.raw(nameSlug)
            w.raw(".com/support")
            let phone = 1 + random.below(4)
            let pad = app.devices & 4 != 0 ? random.below(5) : 0
            let phoneSize = TableEmitter.phoneSizes[random.below(TableEmitter.phoneSizes.count)]
            let padSize = TableEmitter.padSizes[random.below(TableEmitter.padSizes.count)]
            for shot in 0..<4 { if shot < phone { screenshot(&random, shot) } else { w.null() } }
            for shot in 0..<4 { if shot < phone { w.text(phoneSize) } else { w.null() } }
            for shot in 0..<4 { if shot < pad { screenshot(&random, shot) } else { w.null() } }
            for shot in 0..<4 { if shot < pad { w.text(padSize) } else { w.null() } }
            try w.endRecord()
        }
    }

    // MARK: genre_application, application_price

    private func genreRows(_ app: AppFacts) throws {
        let genres = [app.genre, app.secondGenre, app.thirdGenre].compactMap { $0 }
        for (position, genre) in genres.enumerated() {
            let record = w.dataRecords + 1
            let offset = w.recordOffset
            w.int(exportDate)
            if let dirt, let dirtPlan, app.index == dirtPlan.junkGenre, position == 0 {
                let junk = Array("[\(genre)]".utf8)
                w.text(junk)
                dirt.add(schema, .junkInteger, record: record, offset: offset, column: "genre_id", value: junk,
                         note: "genre id in brackets, in a primary key column: the row is rejected")
            } else {
                w.int(genre)
            }
            w.int(app.id)
            w.int(position == 0 ? 1 : 0)
            try w.endRecord()
        }
    }

    private func priceRows(_ app: AppFacts, _ revision: Int) throws {
        let tiers = Reference.priceTiersCents.count
        let tier = (app.tier + revision) % tiers
        let prices = plan.priceText
        let suffixes = plan.priceSuffix
        for step in 0..<plan.options.priceStorefronts {
            let storefront = plan.priceStorefront(step: step, offset: app.storefrontOffset)
            let price = prices[storefront * tiers + tier]
            if let dirt, let dirtPlan, storefront == 0,
               app.index == dirtPlan.duplicatePrice || app.index == dirtPlan.overflowPrice {
                try dirtyPriceRows(app, storefront: storefront, price: price, dirt: dirt, dirtPlan: dirtPlan)
                continue
            }
            w.int(exportDate)
            w.int(app.id)
            w.text(price)
            w.raw(suffixes[storefront])
            try w.endRecord()
        }
    }

    private func dirtyPriceRows(_ app: AppFacts, storefront: Int, price: UnsafeRawBufferPointer, dirt: DirtLog,
                                dirtPlan: DirtPlan) throws {
        let suffix = plan.priceSuffix[storefront]
        let storefrontID = plan.storefronts[storefront].id
        func row(_ value: UnsafeRawBufferPointer) throws {
            w.int(exportDate)
            w.int(app.id)
            w.text(value)
            w.raw(suffix)
            try w.endRecord()
        }
        if app.index == dirtPlan.duplicatePrice {
            let decoyRecord = w.dataRecords + 1
            try Array("99.990".utf8).withUnsafeBytes { try row($0) }
            let record = w.dataRecords + 1
            let offset = w.recordOffset
            try row(price)
            dirt.add(schema, .duplicatePrimaryKey, record: record, offset: offset, column: "application_id",
                     value: Array("\(app.id) \(storefrontID)".utf8),
                     note: "repeats the key of record \(decoyRecord); this later record should win")
        } else {
            let record = w.dataRecords + 1
            let offset = w.recordOffset
            let value = Array("1234567.990".utf8)
            try value.withUnsafeBytes { try row($0) }
            dirt.add(schema, .decimalOverflow, record: record, offset: offset, column: "retail_price",
                     value: value, note: "does not fit DECIMAL(9,3)")
        }
    }

    // MARK: popularity

    private func popularityRows() throws {
        guard full else { return }
        let ranking = Popularity(plan: plan, depth: plan.popularityDepth)
        for storefront in plan.popularityStorefronts {
            let storefrontID = plan.storefronts[storefront].id
            for (genre, apps) in ranking.ranks(storefront: storefront) {
                for (rank, index) in apps.enumerated() {
                    w.int(exportDate)
                    w.int(storefrontID)
                    w.int(genre)
                    w.int(plan.appID(index))
                    w.int(rank + 1)
                    try w.endRecord()
                }
            }
        }
    }

    // MARK: artist, collection, song, video

    private func artistRow(_ index: Int) throws {
        composeArtist(index)
        w.int(exportDate)
        w.int(plan.artistID(index))
        w.text(name)
        w.int(1)
        w.beginField()
        w.raw("https://itunes.apple.com/us/artist/")
        w.raw(nameSlug)
        w.raw("/id")
        w.digits(plan.artistID(index))
        w.raw("?uo=4")
        w.int(index < plan.softwareArtists ? 7 : 1)
        try w.endRecord()
    }

    private static let editions: [StaticString] = ["Deluxe Edition", "Remastered", "Live", "Acoustic Version"]
    private static let labels: [StaticString] = [
        "Sunset Records", "Nordlicht Musik GmbH", "Éditions Lumière", "東京サウンド", "Independent",
    ]

    private func collectionRow(_ index: Int) throws {
        var random = SplitMix64(plan.seed, Salt.collection, index)
        let artist = plan.collectionArtist(index)
        let released = 5_000 + random.below(max(1, plan.fullExportDay - 5_001))
        w.int(exportDate)
        w.int(plan.collectionID(index))
        composeName(&random, language: random.below(Language.all.count), words: 1 + random.below(3))
        w.text(title)
        if random.chance(15) {
            w.text(TableEmitter.editions[random.below(TableEmitter.editions.count)])
        } else {
            w.null()
        }
        w.null()
        if random.chance(20) { w.int(random.chance(50) ? 1 : 2) } else { w.null() }
        composeArtist(artist)
        w.text(name)
        w.beginField()
        w.raw("https://itunes.apple.com/us/album/")
        w.raw(slug)
        w.raw("/id")
        w.digits(plan.collectionID(index))
        w.raw("?uo=5")
        artwork(&random, file: "cover.jpg", size: "600x600bb.jpg")
        date(released)
        date(max(released, 14_000))
        let label = TableEmitter.labels[random.below(TableEmitter.labels.count)]
        w.text(label)
        w.text(label)
        w.beginField()
        w.raw("\u{2117} ")
        w.digits(Int64(GeneratorOptions.civil(daysSinceEpoch: released).0))
        w.byte(32)
        w.raw(label)
        w.beginField()
        w.raw("\u{2117} ")
        w.digits(Int64(GeneratorOptions.civil(daysSinceEpoch: released).0))
        w.byte(32)
        w.raw(name)
        w.int(1)
        w.int(random.chance(10) ? 1 : 0)
        w.int(1)
        try w.endRecord()
    }

    private func songRow(_ index: Int) throws {
        var random = SplitMix64(plan.seed, Salt.song, index)
        let collection = index / Plan.songsPerCollection
        var collectionRandom = SplitMix64(plan.seed, Salt.collection, collection)
        let released = 5_000 + collectionRandom.below(max(1, plan.fullExportDay - 5_001))
        composeName(&collectionRandom, language: collectionRandom.below(Language.all.count),
                    words: 1 + collectionRandom.below(3))
        let collectionTitle = title
        let collectionSlug = slug
        w.int(exportDate)
        w.int(plan.songID(index))
        composeName(&random, language: random.below(Language.all.count), words: 1 + random.below(3))
        w.text(title)
        if random.chance(8) { w.text("Remix") } else { w.null() }
        w.null()
        if random.chance(20) { w.int(random.chance(50) ? 1 : 2) } else { w.null() }
        composeArtist(plan.collectionArtist(collection))
        w.text(name)
        w.text(collectionTitle)
        w.beginField()
        w.raw("https://itunes.apple.com/us/album/")
        w.raw(collectionSlug)
        w.raw("/id")
        w.digits(plan.collectionID(collection))
        w.raw("?i=")
        w.digits(plan.songID(index))
        w.raw("&uo=4")
        date(released)
        date(max(released, 14_000))
        w.int(90_000 + random.below(300_000))
        w.beginField()
        w.raw("\u{2117} ")
        w.digits(Int64(GeneratorOptions.civil(daysSinceEpoch: released).0))
        w.byte(32)
        w.raw(name)
        w.null()
        w.beginField()
        w.raw("https://audio-ssl.itunes.apple.com/itunes-assets/AudioPreview")
        w.digits(Int64(100 + random.below(130)))
        w.raw("/v4/")
        hexPath(&random)
        w.raw("/mzaf_")
        w.digits(Int64(random.next() % 10_000_000_000_000_000))
        w.raw(".plus.aac.p.m4a")
        w.int(30_000)
        try w.endRecord()
    }

    private static let studios: [StaticString] = ["Northern Lights Pictures", "Studio Ghibli-ish", "Cinéma Bleu"]
    private static let networks: [StaticString] = ["ABC-ish", "BBC Two-ish", "NHK-ish"]

    private func videoRow(_ index: Int) throws {
        var random = SplitMix64(plan.seed, Salt.video, index)
        let kind = random.below(3) // 0 movie, 1 TV episode, 2 music video
        let language = random.below(Language.all.count)
        let released = 5_000 + random.below(max(1, plan.fullExportDay - 5_001))
        w.int(exportDate)
        w.int(plan.videoID(index))
        composeName(&random, language: language, words: 1 + random.below(4))
        w.text(title)
        w.null()
        w.null()
        if random.chance(30) { w.int(random.chance(50) ? 1 : 2) } else { w.null() }
        composeArtist(plan.softwareArtists + random.below(plan.musicArtists))
        w.text(name)
        if kind == 1 { w.text("Season 1") } else { w.null() }
        w.int(kind == 0 ? 6 : kind == 1 ? 4 : 5)
        w.beginField()
        w.raw(kind == 0 ? "https://itunes.apple.com/us/movie/" : kind == 1 ? "https://itunes.apple.com/us/tv-season/"
            : "https://itunes.apple.com/us/music-video/")
        w.raw(slug)
        w.raw("/id")
        w.digits(plan.videoID(index))
        w.raw("?uo=4")
        artwork(&random, file: "poster.jpg", size: "1200x630bb.jpg")
        date(released)
        date(max(released, 14_000))
        if kind == 0 { w.text(TableEmitter.studios[random.below(TableEmitter.studios.count)]) } else { w.null() }
        if kind == 1 { w.text(TableEmitter.networks[random.below(TableEmitter.networks.count)]) } else { w.null() }
        w.text(name)
        w.int(kind == 2 ? 180_000 + random.below(200_000) : 1_200_000 + random.below(6_000_000))
        w.beginField()
        w.raw("\u{00A9} ")
        w.digits(Int64(GeneratorOptions.civil(daysSinceEpoch: released).0))
        w.byte(32)
        w.raw(name)
        w.null()
        w.beginField()
        Corpus.all[language].append(to: w, length: 40 + random.below(160), using: &random)
        w.beginField()
        Corpus.all[language].append(to: w, length: 200 + random.below(2_000), using: &random)
        if kind == 1 { w.int(100 + random.below(24)) } else { w.null() }
        try w.endRecord()
    }
}
