import EPFFormat

/// Sizes, ID ranges and per-row facts derived from the options; every fact is a pure function of
/// `(seed, index)` so any row can be regenerated without the others.
final class Plan: Sendable {
    let options: GeneratorOptions
    let seed: UInt64
    let exportDate: Int64
    /// Apps of the full export.
    let apps: Int
    /// Apps added on each day after the full export.
    let newAppsPerDay: Int
    let softwareArtists: Int
    let musicArtists: Int
    let collections: Int
    let songs: Int
    let videos: Int
    private let appStride: Int64
    private let artistStride: Int64
    private let collectionStride: Int64
    private let songStride: Int64
    private let videoStride: Int64
    /// The storefronts of this export (`GeneratorOptions.storefronts`).
    let storefronts: [StorefrontInfo]
    /// Storefronts with popularity ranks (indices into `storefronts`), and how many apps each genre ranks.
    let popularityStorefronts: [Int]
    let popularityDepth: Int
    /// Percent of the full's apps whose title or version changes on each incremental day, and whose prices do.
    let changePercent: UInt64
    /// `retail_price` text of storefront s and tier t at `s * tiers + t`.
    let priceText: ByteTable
    /// Per storefront, everything after the price in an `application_price` record: 0x01, currency, 0x01, id.
    let priceSuffix: ByteTable

    /// First Apple ID of each kind; the ranges do not overlap, so an ID tells its kind.
    static let appIDBase: Int64 = 284_000_000
    static let appIDLimit: Int64 = 1_700_000_000
    static let artistIDBase: Int64 = 100_000_000
    static let collectionIDBase: Int64 = 1_700_000_000
    static let songIDBase: Int64 = 1_800_000_000
    static let videoIDBase: Int64 = 2_000_000_000
    static let maximumDays = 366
    static let songsPerCollection = 8

    init(_ options: GeneratorOptions) {
        self.options = options
        seed = options.seed
        exportDate = options.exportDate
        apps = options.apps
        newAppsPerDay = max(3, options.apps / 100)
        softwareArtists = max(10, options.apps / 4)
        collections = max(10, options.apps / 10)
        songs = collections * Plan.songsPerCollection
        videos = max(5, options.apps / 20)
        musicArtists = max(5, collections / 3)
        let appCapacity = Int64(apps + newAppsPerDay * Plan.maximumDays)
        appStride = max(2, (Plan.appIDLimit - Plan.appIDBase) / appCapacity)
        artistStride = max(2, (Plan.appIDBase - Plan.artistIDBase) / Int64(softwareArtists + musicArtists))
        collectionStride = max(2, (Plan.songIDBase - Plan.collectionIDBase) / Int64(collections))
        songStride = max(2, (Plan.videoIDBase - Plan.songIDBase) / Int64(songs))
        videoStride = max(2, 100_000_000 / Int64(videos))
        storefronts = options.storefronts
        if let scale = options.scale {
            popularityStorefronts = Array(storefronts.indices)
            popularityDepth = max(1, Int((200 * scale).rounded()))
            changePercent = 3
        } else {
            popularityStorefronts = Reference.popularityStorefronts
            popularityDepth = 200
            changePercent = 1
        }
        priceText = ByteTable(storefronts.flatMap { storefront in
            Reference.priceTiersCents.map { Plan.price(cents: $0, storefront: storefront) }
        })
        priceSuffix = ByteTable(storefronts.map { storefront in
            [0x01] + Array(storefront.currency.utf8) + [0x01] + Array(String(storefront.id).utf8)
        })
    }

    /// Days since 1970 of the full export. Release dates are drawn below it, so an app keeps its release
    /// date in every incremental.
    var fullExportDay: Int { Int(options.fullExportDate / GeneratorOptions.dayMilliseconds) }

    /// Apps numbered at this export: the first full's, plus those added up to its day (some of which a later
    /// export may have removed, see `isPresent`).
    var appsAtExport: Int { apps + newAppsPerDay * options.exportDay }

    // MARK: IDs

    private func id(_ base: Int64, _ stride: Int64, _ index: Int, _ salt: UInt64) -> Int64 {
        let jitter = Int64(SplitMix64.hash(seed, salt, index) % UInt64(max(1, stride / 2)))
        return base + Int64(index) * stride + jitter
    }

    /// Apple ID of app `index` (0-based; apps added by incrementals continue after the full's).
    func appID(_ index: Int) -> Int64 { id(Plan.appIDBase, appStride, index, Salt.appID) }
    /// Apple ID of artist `index`: software artists first, then music artists.
    func artistID(_ index: Int) -> Int64 { id(Plan.artistIDBase, artistStride, index, Salt.otherID) }
    /// Apple ID of collection `index`.
    func collectionID(_ index: Int) -> Int64 { id(Plan.collectionIDBase, collectionStride, index, Salt.otherID &+ 1) }
    /// Apple ID of song `index`.
    func songID(_ index: Int) -> Int64 { id(Plan.songIDBase, songStride, index, Salt.otherID &+ 2) }
    /// Apple ID of video `index`.
    func videoID(_ index: Int) -> Int64 { id(Plan.videoIDBase, videoStride, index, Salt.otherID &+ 3) }

    /// Music artist of a collection (an index into all artists).
    func collectionArtist(_ collection: Int) -> Int {
        softwareArtists + Int(SplitMix64.hash(seed, Salt.collection, collection, 1) % UInt64(musicArtists))
    }

    // MARK: Changes

    /// How many of days 1 ... `day` changed app `index`'s title or version (0 for apps added later).
    func appRevision(_ index: Int, day: Int) -> Int {
        guard index < apps, day > 0 else { return 0 }
        var revision = 0
        for day in 1...day {
            let forced = index == 0 && day == 1
            if forced || SplitMix64.hash(seed, Salt.appChange, index, day) % 100 < changePercent { revision += 1 }
        }
        return revision
    }

    /// How many of days 1 ... `day` changed app `index`'s prices (0 for apps added later).
    func priceRevision(_ index: Int, day: Int) -> Int {
        guard index < apps, day > 0 else { return 0 }
        var revision = 0
        for day in 1...day {
            let forced = index == 1 && day == 1
            if forced || SplitMix64.hash(seed, Salt.priceChange, index, day) % 100 < changePercent { revision += 1 }
        }
        return revision
    }

    // MARK: Prices

    /// `retail_price` text: tier 0 is `0.000`; cents-style currencies end in `.990`; whole-number currencies
    /// (JPY, KRW ...) are rounded to their step, like `150.000`.
    static func price(cents: Int, storefront: StorefrontInfo) -> [UInt8] {
        if cents == 0 { return Array("0.000".utf8) }
        let local = Double(cents) / 100 * storefront.rate
        if storefront.wholeStep == 0 {
            let whole = max(1, Int(local.rounded(.up)))
            return Array("\(whole - 1).990".utf8)
        }
        let step = Double(storefront.wholeStep)
        let value = max(storefront.wholeStep, Int((local / step).rounded()) * storefront.wholeStep)
        return Array("\(value).000".utf8)
    }

    /// The `step`-th storefront (index into `storefronts`) app prices are in: the US first, then a
    /// rotation that starts at the app's `offset`.
    @inline(__always)
    func priceStorefront(step: Int, offset: Int) -> Int {
        step == 0 ? 0 : 1 + (offset + step - 1) % (storefronts.count - 1)
    }
}

/// Immutable byte strings stored back to back, readable in hot loops without reference counting.
final class ByteTable: @unchecked Sendable {
    private let storage: UnsafeMutablePointer<UInt8>
    private let bounds: UnsafeMutablePointer<Int>
    let count: Int

    init(_ items: [[UInt8]]) {
        count = items.count
        let total = items.reduce(0) { $0 + $1.count }
        storage = UnsafeMutablePointer<UInt8>.allocate(capacity: max(1, total))
        bounds = UnsafeMutablePointer<Int>.allocate(capacity: items.count * 2 + 1)
        var offset = 0
        for (index, item) in items.enumerated() {
            for (position, byte) in item.enumerated() { storage[offset + position] = byte }
            bounds[index * 2] = offset
            offset += item.count
            bounds[index * 2 + 1] = offset
        }
    }

    deinit {
        storage.deallocate()
        bounds.deallocate()
    }

    /// Item `index`; valid while the table lives.
    @inline(__always)
    subscript(index: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: storage + bounds[index * 2], count: bounds[index * 2 + 1] - bounds[index * 2])
    }
}

/// The facts of one app that several tables share.
struct AppFacts {
    let index: Int
    let id: Int64
    let language: Int
    /// Index into all artists (always a software artist).
    let artist: Int
    let genre: Int
    let secondGenre: Int?
    let thirdGenre: Int?
    let tier: Int
    /// Bit i set: the app runs on `Reference.deviceTypes[i]`.
    let devices: UInt16
    /// Bit i set: the app has an `application_detail` row in `Language.all[i]`.
    let detailLanguages: UInt16
    let releaseDay: Int
    let storefrontOffset: Int
    let version: (Int, Int, Int)
    let downloadSize: Int64
    let age: Int

    /// Percent of apps that run on each of `Reference.deviceTypes`.
    static let deviceOdds = [92, 60, 70, 5, 10, 8, 3, 2, 4]

    init(plan: Plan, index: Int) {
        self.index = index
        id = plan.appID(index)
        var random = SplitMix64(plan.seed, Salt.app, index)
        let roll = random.below(100)
        language = index < FixedApp.languages.count ? FixedApp.languages[index] : Language.pick(roll)
        artist = random.below(plan.softwareArtists)
        let categories = Reference.appCategories
        let isGame = random.chance(30)
        let primary = isGame ? 6014 : categories[random.below(categories.count)]
        genre = primary
        if primary == 6014 {
            secondGenre = Reference.gameSubgenres[random.below(Reference.gameSubgenres.count)]
        } else {
            let other = categories[random.below(categories.count)]
            secondGenre = random.chance(40) && other != primary && other != 6014 ? other : nil
        }
        let third = Reference.gameSubgenres[random.below(Reference.gameSubgenres.count)]
        thirdGenre = primary == 6014 && random.chance(25) && third != secondGenre ? third : nil
        tier = random.chance(62) ? 0 : 1 + min(random.below(6) + random.below(6) + random.below(4),
                                               Reference.priceTiersCents.count - 2)
        var devices: UInt16 = 0
        for (bit, odds) in AppFacts.deviceOdds.enumerated() where random.chance(odds) { devices |= 1 << UInt16(bit) }
        self.devices = devices == 0 ? 1 : devices
        var languages: UInt16 = 1 | (1 << UInt16(language))
        for _ in 0..<random.below(4) { languages |= 1 << UInt16(random.below(Language.all.count)) }
        if plan.options.scale != nil {
            // Real proportions: about 3 languages per app. A separate stream keeps unscaled feeds unchanged.
            var more = SplitMix64(plan.seed, Salt.detail, index, 0x5CA1E)
            let target = 2 + more.below(3)
            while languages.nonzeroBitCount < target { languages |= 1 << UInt16(more.below(Language.all.count)) }
        }
        detailLanguages = languages
        let firstDay = 14_070 // 2008-07-10, the App Store's opening
        releaseDay = firstDay + random.below(max(1, plan.fullExportDay - firstDay - 1))
        storefrontOffset = random.below(plan.storefronts.count)
        version = (1 + random.below(12), random.below(20), random.below(10))
        downloadSize = Int64(500_000 + random.below(20_000_000)) * Int64(1 + random.below(random.chance(10) ? 200 : 8))
        let ageRoll = random.below(100)
        age = ageRoll < 62 ? 0 : ageRoll < 80 ? 1 : ageRoll < 93 ? 2 : 3
    }
}

/// Apps whose titles do not depend on the seed, so tests can search for them. Their IDs are `appID(index)`.
package struct FixedApp: Sendable {
    /// Row index of the app in the full export (0-based).
    package let index: Int
    /// The title in `application.title` and in the primary language's `application_detail` row.
    package let title: String
    /// The fixed description, if any (nil: generated; `""`: NULL).
    package let description: String?
    let language: Int

    /// Apps 0 ... 7 of every feed.
    package static let all: [FixedApp] = [
        FixedApp(index: 0, title: "Café Olé Lite", description: nil, language: 0),
        FixedApp(index: 1, title: "日本語のゲーム", description: nil, language: 4),
        FixedApp(index: 2, title: "Rocket 🚀 Launch", description: nil, language: 0),
        FixedApp(index: 3, title: "تطبيق الطقس", description: nil, language: 6),
        FixedApp(index: 4, title: "Погода Плюс", description: nil, language: 7),
        FixedApp(index: 5, title: "NULL", description: nil, language: 0),
        FixedApp(index: 6, title: "Line Breaks", description: "First line\r\nSecond line\nThird line\r\n\r\nLast line",
                 language: 0),
        FixedApp(index: 7, title: "Über Fußball 中文应用 👨‍👩‍👧", description: "", language: 1),
    ]

    /// Primary language of apps 0 ... 7, as indices into `Language.all`.
    static let languages: [Int] = all.map(\.language)

    /// Length of app 3's description: the one value over 64 KiB.
    package static let longDescriptionBytes = 70_000
}
