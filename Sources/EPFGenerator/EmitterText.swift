/// Text, dates and URLs of rows: everything is appended straight into the record writer.
extension TableEmitter {
    private static let fixedTitles: [Int: (title: [UInt8], slug: [UInt8])] = Dictionary(
        uniqueKeysWithValues: FixedApp.all.map { app in
            let words = app.title.split(separator: " ").map { Language.slug(String($0)) }.filter { !$0.isEmpty }
            return (app.index, (Array(app.title.utf8), Array(words.joined(separator: [UInt8(ascii: "-")]))))
        })

    /// Fills `title` and `slug` with app `app`'s title in `language`; a changed app (revision > 0) whose title
    /// changes gets the suffix " N" (N = revision + 1); app 0 always does.
    func composeTitle(_ app: AppFacts, language: Int, revision: Int) {
        title.removeAll(keepingCapacity: true)
        slug.removeAll(keepingCapacity: true)
        if language == app.language, let fixed = TableEmitter.fixedTitles[app.index] {
            title += fixed.title
            slug += fixed.slug
        } else {
            var random = SplitMix64(plan.seed, Salt.text, app.index, language)
            appendWords(&random, language: language, count: 1 + random.below(3))
            if random.chance(30) { title += Language.titleSuffixes[random.below(Language.titleSuffixes.count)] }
            if random.chance(4) {
                title.append(32)
                title += Language.emoji[random.below(Language.emoji.count)]
            }
        }
        if revision > 0 && (app.index == 0 || SplitMix64.hash(plan.seed, Salt.appChange, app.index, 9_999) & 1 == 0) {
            title.append(32)
            title += Array(String(revision + 1).utf8)
            slug.append(UInt8(ascii: "-"))
            slug += Array(String(revision + 1).utf8)
        }
        if slug.isEmpty { slug += Array("app".utf8) }
    }

    /// Fills `title` and `slug` with `count` words of `language` (album, song and video names).
    func composeName(_ random: inout SplitMix64, language: Int, words count: Int) {
        title.removeAll(keepingCapacity: true)
        slug.removeAll(keepingCapacity: true)
        appendWords(&random, language: language, count: count)
        if slug.isEmpty { slug += Array("item".utf8) }
    }

    private func appendWords(_ random: inout SplitMix64, language: Int, count: Int) {
        let words = Language.all[language]
        for word in 0..<count {
            let pick = random.below(words.words.count)
            if word > 0 && words.spaced { title.append(32) }
            title += words.words[pick]
            if !words.slugs[pick].isEmpty {
                if !slug.isEmpty { slug.append(UInt8(ascii: "-")) }
                slug += words.slugs[pick]
            }
        }
    }

    /// Fills `name` and `nameSlug` with artist `index`'s name: a company for software artists
    /// ("Pixel Labs", "株式会社天気"), a band or person for music artists.
    func composeArtist(_ index: Int) {
        if index == composedArtist { return }
        composedArtist = index
        name.removeAll(keepingCapacity: true)
        nameSlug.removeAll(keepingCapacity: true)
        var random = SplitMix64(plan.seed, Salt.artist, index)
        let language = Language.all[Language.pick(random.below(100))]
        let software = index < plan.softwareArtists
        let suffix = software ? Array(language.companySuffixes[random.below(language.companySuffixes.count)].utf8) : []
        let prefixed = !language.spaced || language.code == "KO"
        if prefixed && !suffix.isEmpty { name += suffix }
        if !software && language.code == "EN" && random.chance(40) { name += Array("The ".utf8) }
        for word in 0..<(1 + random.below(2)) {
            let pick = random.below(language.words.count)
            if (word > 0 || (prefixed && !suffix.isEmpty)) && language.spaced { name.append(32) }
            name += language.words[pick]
            if !language.slugs[pick].isEmpty {
                if !nameSlug.isEmpty { nameSlug.append(UInt8(ascii: "-")) }
                nameSlug += language.slugs[pick]
            }
        }
        if !prefixed && !suffix.isEmpty {
            name.append(32)
            name += suffix
        }
        if nameSlug.isEmpty { nameSlug += Array("developer".utf8) }
        var digits = index
        let first = nameSlug.count
        repeat {
            nameSlug.insert(UInt8(truncatingIfNeeded: digits % 10) &+ 48, at: first)
            digits /= 10
        } while digits > 0
    }

    /// Appends app `app`'s description in `language` to the current field (nothing: NULL). Lengths run from
    /// 50 bytes to 4 KB; about one app in 20,000, and always app 3, has one over 64 KiB.
    func description(_ app: AppFacts, language: Int) {
        if language == app.language, let fixed = FixedApp.all.first(where: { $0.index == app.index }),
           let text = fixed.description {
            w.raw(Array(text.utf8))
            return
        }
        var random = SplitMix64(plan.seed, Salt.detail, app.index, language)
        if app.index >= FixedApp.all.count && random.chance(1) { return }
        let length: Int
        if app.index == 3 && language == app.language {
            length = FixedApp.longDescriptionBytes
        } else if random.below(20_000) == 0 {
            length = 65_536 + random.below(8_000)
        } else {
            let bucket = random.below(100)
            length = bucket < 20 ? 50 + random.below(250) : bucket < 72 ? 300 + random.below(1_200)
                : 1_500 + random.below(2_600)
        }
        Corpus.all[language].append(to: w, length: length, using: &random)
    }

    /// A new field with the date `YYYY MM DD` of a day number since 1970.
    func date(_ day: Int) {
        let (year, month, dayOfMonth) = GeneratorOptions.civil(daysSinceEpoch: day)
        w.beginField()
        w.padded(year, width: 4)
        w.byte(32)
        w.padded(month, width: 2)
        w.byte(32)
        w.padded(dayOfMonth, width: 2)
    }

    /// Appends `count` (at most 16) random lower-case hex digits.
    func hex(_ random: inout SplitMix64, count: Int) {
        w.hex(random.next(), count: count)
    }

    /// Appends `ab/cd/ef/<uuid>` as in mzstatic paths.
    func hexPath(_ random: inout SplitMix64) {
        for _ in 0..<3 {
            hex(&random, count: 2)
            w.byte(UInt8(ascii: "/"))
        }
        hex(&random, count: 8)
        for group in [4, 4, 4, 12] {
            w.byte(UInt8(ascii: "-"))
            hex(&random, count: group)
        }
    }

    /// A new field with an mzstatic artwork URL.
    func artwork(_ random: inout SplitMix64, file: StaticString, size: StaticString) {
        w.beginField()
        w.raw("https://is")
        w.digits(Int64(1 + random.below(5)))
        w.raw("-ssl.mzstatic.com/image/thumb/Purple")
        w.digits(Int64(100 + random.below(122)))
        w.raw("/v4/")
        hexPath(&random)
        w.byte(UInt8(ascii: "/"))
        w.raw(file)
        w.byte(UInt8(ascii: "/"))
        w.raw(size)
    }

    /// A new field with a screenshot URL.
    func screenshot(_ random: inout SplitMix64, _ number: Int) {
        w.beginField()
        w.raw("https://a")
        w.digits(Int64(1 + random.below(5)))
        w.raw(".mzstatic.com/us/r30/Purple")
        w.digits(Int64(100 + random.below(122)))
        w.raw("/v4/")
        hexPath(&random)
        w.raw("/screen")
        w.digits(Int64(number + 1))
        w.raw(".jpeg")
    }
}

/// The top apps per genre in a storefront on one day: each app's score mixes a seed-wide quality with
/// per-storefront noise; apps rank in genre 36 (all apps), their primary genre and their games subgenre.
///
/// Day to day (`day`: days after the first full), a slow random walk per app and storefront (a knot every
/// `walkDays` days, straight lines between) and a small daily jitter move most ranks a little, so apps near
/// the depth enter and leave; apps added by incrementals launch with a random boost that fades over
/// `launchDays` days, so new apps appear; apps removed from the store leave. Day 0 has no movement.
struct Popularity {
    private let plan: Plan
    private let depth: Int
    private let day: Int
    private let primary: [Int32]
    private let secondary: [Int32]
    /// Per app: free (its first price tier is 0) and on iPad (iPad or iPad Pro among its devices), for v5's charts.
    private let free: [Bool]
    private let iPad: [Bool]
    /// Per app: in the store on `day`.
    private let present: [Bool]

    /// Days between the knots of the random walk.
    static let walkDays = 5
    /// Days over which a new app's launch boost fades.
    static let launchDays = 10

    init(plan: Plan, depth: Int, day: Int = 0) {
        self.plan = plan
        self.depth = depth
        self.day = day
        let apps = plan.apps + plan.newAppsPerDay * day
        var primary = [Int32](repeating: 0, count: apps)
        var secondary = [Int32](repeating: 0, count: apps)
        var free = [Bool](repeating: false, count: apps)
        var iPad = [Bool](repeating: false, count: apps)
        var present = [Bool](repeating: true, count: apps)
        let iPadBits = Reference.deviceTypes.enumerated().filter { $0.element.name.hasPrefix("iPad") }
            .reduce(UInt16(0)) { $0 | (1 << UInt16($1.offset)) }
        for index in 0..<apps {
            let app = AppFacts(plan: plan, index: index)
            primary[index] = Int32(app.genre)
            secondary[index] = Int32(app.genre == 6014 ? app.secondGenre ?? 0 : 0)
            free[index] = Reference.priceTiersCents[app.tier % Reference.priceTiersCents.count] == 0
            iPad[index] = app.devices & iPadBits != 0
            if day > 0 { present[index] = plan.isPresent(index, atDay: day) }
        }
        self.primary = primary
        self.secondary = secondary
        self.free = free
        self.iPad = iPad
        self.present = present
    }

    /// The apps a chart table ranks: all of them for v3's one table, else free or paid, on iPad or not.
    func ranked(_ index: Int, in table: String) -> Bool {
        guard present[index] else { return false }
        switch table {
        case "free_application_popularity_per_genre": return free[index]
        case "paid_application_popularity_per_genre": return !free[index]
        case "free_ipad_application_popularity_per_genre": return free[index] && iPad[index]
        case "paid_ipad_application_popularity_per_genre": return !free[index] && iPad[index]
        default: return true
        }
    }

    /// What the day adds to an app's score in a storefront: the walk, the jitter and a launch boost (0 on day 0).
    private func movement(_ index: Int, storefront: Int) -> UInt64 {
        guard day > 0 else { return 0 }
        let knot = day / Self.walkDays
        let step = UInt64(day % Self.walkDays)
        func walk(_ knot: Int) -> UInt64 {
            knot == 0 ? 0 : SplitMix64.hash(plan.seed, Salt.popularityWalk, index, (storefront + 1) << 20 | knot) >> 4
        }
        let from = walk(knot)
        let to = walk(knot + 1)
        // The walk between two knots, then a jitter of about a sixteenth of its range.
        let days = UInt64(Self.walkDays)
        let position = from / days * (days - step) + to / days * step
        let jitter = SplitMix64.hash(plan.seed, Salt.popularityWalk, index, (storefront + 1) << 20 | 1 << 19 | day) >> 8
        var boost: UInt64 = 0
        let age = day - plan.addedDay(index)
        if index >= plan.apps, age < Self.launchDays {
            let launch = SplitMix64.hash(plan.seed, Salt.popularityWalk, index) >> 4
            boost = launch / UInt64(Self.launchDays) * UInt64(Self.launchDays - age)
        }
        return position &+ jitter &+ boost
    }

    /// Genres in `Reference.genres` order that have apps, each with app indices best first.
    func ranks(storefront: Int, table: String = "application_popularity_per_genre") -> [(Int, [Int])] {
        var candidates: [Int: [(UInt64, Int)]] = [:]
        func offer(_ genre: Int, _ score: UInt64, _ index: Int) {
            candidates[genre, default: []].append((score, index))
            if let count = candidates[genre]?.count, count >= depth * 4 { trim(genre) }
        }
        func trim(_ genre: Int) {
            guard var list = candidates[genre] else { return }
            list.sort { $0.0 != $1.0 ? $0.0 > $1.0 : $0.1 < $1.1 }
            list.removeLast(max(0, list.count - depth))
            candidates[genre] = list
        }
        for index in 0..<present.count where ranked(index, in: table) {
            let quality = SplitMix64.hash(plan.seed, Salt.popularity, index) >> 2
            let score = quality &+ (SplitMix64.hash(plan.seed, Salt.popularity, index, storefront + 1) >> 3)
                &+ movement(index, storefront: storefront)
            offer(36, score, index)
            offer(Int(primary[index]), score, index)
            if secondary[index] != 0 { offer(Int(secondary[index]), score, index) }
        }
        var result: [(Int, [Int])] = []
        for genre in Reference.genres where candidates[genre.id] != nil {
            trim(genre.id)
            result.append((genre.id, candidates[genre.id]?.map(\.1) ?? []))
        }
        return result
    }
}
