import EPFFormat

/// The rows of popularity and of the music and video catalogue: artist, collection, song, video.
extension TableEmitter {
    // MARK: popularity

    /// The ranks of one chart table on the export's day, a FULL snapshot in every export (incrementals too): v3's
    /// `application_popularity_per_genre` ranks every app, v5's four charts the free or paid apps, on iPhone or
    /// on iPad.
    func popularityRows() throws {
        let ranking = Popularity(plan: plan, depth: plan.popularityDepth, day: plan.options.exportDay)
        for storefront in plan.popularityStorefronts {
            let storefrontID = plan.storefronts[storefront].id
            for (genre, apps) in ranking.ranks(storefront: storefront, table: schema.name) {
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

    /// v5's `key_value`: what made the export (the generator says so rather than invent Apple's keys).
    func keyValueRows() throws {
        for (key, value) in [("generated_by", "epf generate"), ("export_mode", full ? "FULL" : "INCREMENTAL")] {
            w.int(exportDate)
            w.text(Array(key.utf8))
            w.text(Array(value.utf8))
            try w.endRecord()
        }
    }

    // MARK: artist, collection, song, video

    func artistRow(_ index: Int) throws {
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

    func collectionRow(_ index: Int) throws {
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

    func songRow(_ index: Int) throws {
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

    func videoRow(_ index: Int) throws {
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
