import EPFFormat

/// The rows of the per-app tables: application, application_detail, genre_application, application_price.
extension TableEmitter {
    // MARK: application

    enum AppVariant {
        case clean, decoy, straySeparator, junk([UInt8]), invalidUTF8, nul, datetime([UInt8])
    }

    func applicationRows(_ app: AppFacts, _ revision: Int) throws {
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

    func duplicate(_ app: AppFacts, _ revision: Int, _ dirt: DirtLog) throws {
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

    func applicationRow(_ app: AppFacts, _ revision: Int, _ variant: AppVariant) throws {
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

    func version(_ app: AppFacts, _ revision: Int) {
        w.digits(Int64(app.version.0))
        w.byte(UInt8(ascii: "."))
        w.digits(Int64(app.version.1))
        w.byte(UInt8(ascii: "."))
        w.digits(Int64(app.version.2 + revision))
    }

    // MARK: application_detail

    private static let phoneSizes: [StaticString] = ["1242x2208", "1284x2778", "1290x2796", "640x1136"]
    private static let padSizes: [StaticString] = ["2048x2732", "2048x1536", "1668x2388"]

    func detailRows(_ app: AppFacts, _ revision: Int) throws {
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

    func genreRows(_ app: AppFacts) throws {
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

    func priceRows(_ app: AppFacts, _ revision: Int) throws {
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

    func dirtyPriceRows(_ app: AppFacts, storefront: Int, price: UnsafeRawBufferPointer, dirt: DirtLog,
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
}
