import Foundation
import Testing
@testable import EPFGenerator

/// `--scale`: a fraction of Apple's real weekly export, in real proportions and real storefronts.
struct ScaleTests {
    private func scaled(_ fraction: Double, seed: UInt64 = 3) -> GeneratorOptions {
        var options = GeneratorOptions()
        options.seed = seed
        options.setScale(fraction)
        return options
    }

    private func rows(_ table: String, _ options: GeneratorOptions) throws -> [[String?]] {
        splitRecords(try FeedGenerator.tableBytes(table, options: options)).filter { !$0.isMetadata }.map(\.strings)
    }

    @Test(arguments: [("1/16", 0.0625), ("0.0625", 0.0625), ("6.25%", 0.0625), (" 1/8 ", 0.125), ("2", 2.0)])
    func fractionsParse(text: String, value: Double) {
        #expect(GeneratorOptions.fraction(text) == value)
    }

    @Test(arguments: ["", "0", "-1/16", "1/0", "a/16", "1/", "nan", "inf", "1/16/2"])
    func badFractionsAreRejected(text: String) {
        #expect(GeneratorOptions.fraction(text) == nil)
    }

    @Test func scaleSetsAppsAndAllStorefronts() throws {
        let options = scaled(1.0 / 16)
        #expect(options.apps == 125_000)
        #expect(options.priceStorefronts == 175)
        #expect(options.storefronts.count == 175)
        try options.validate()
        #expect(throws: GeneratorError.self) { try scaled(1.0 / 40_000).validate() }
        #expect(throws: GeneratorError.self) { try scaled(6).validate() }
    }

    @Test func realStorefrontsHaveRealIDsCodesAndCurrencies() {
        let all = Reference.allStorefronts
        #expect(all.count == 175)
        #expect(Set(all.map(\.id)).count == 175 && Set(all.map(\.countryCode)).count == 175)
        #expect(Array(all.prefix(60)) == Reference.storefronts)
        let expected: [(Int, String, String)] = [
            (143441, "USA", "USD"), (143444, "GBR", "GBP"), (143462, "JPN", "JPY"), (143443, "DEU", "EUR"),
            (143442, "FRA", "EUR"), (143455, "CAN", "CAD"), (143460, "AUS", "AUD"), (143465, "CHN", "CNY"),
            (143572, "TZA", "TZS"), (143605, "ZWE", "USD"), (143557, "CYP", "EUR"),
        ]
        for (id, code, currency) in expected {
            let storefront = all.first { $0.id == id }
            #expect(storefront?.countryCode == code && storefront?.currency == currency, "storefront \(id)")
        }
        #expect(all.allSatisfy { (143_441...143_699).contains($0.id) && $0.countryCode.count == 3 })
        #expect(all.allSatisfy { $0.currency.count == 3 && $0.linkCode.count == 2 })
    }

    @Test func fullExportHasRealProportions() throws {
        let options = scaled(1.0 / 20_000) // 100 apps
        let feed = FeedModel(options)
        #expect(feed.appCount() == 100)
        let storefronts = try rows("storefront", options)
        #expect(storefronts.count == 175)
        #expect(storefronts.contains { $0 == ["1767571200000", "143441", "USA", "United States"] })
        #expect(storefronts.contains { $0 == ["1767571200000", "143572", "TZA", "Tanzania"] })
        let prices = try rows("application_price", options)
        #expect(prices.count == 100 * 175)
        let currency = Dictionary(uniqueKeysWithValues: Reference.allStorefronts.map { (String($0.id), $0.currency) })
        #expect(prices.allSatisfy { $0[3] == currency[$0[4] ?? ""] })
        #expect(Set(prices.compactMap { $0[4] }).count == 175)
        let perApp = Dictionary(grouping: prices, by: { $0[1] ?? "" }).mapValues(\.count)
        #expect(perApp.count == 100 && perApp.values.allSatisfy { $0 == 175 })
        let details = try rows("application_detail", options)
        let detailsPerApp = Double(details.count) / 100
        #expect(detailsPerApp > 2.6 && detailsPerApp < 3.6, "\(detailsPerApp) detail rows per app")
        let descriptions = details.compactMap { $0[4]?.utf8.count }
        let mean = descriptions.reduce(0, +) / max(1, descriptions.count)
        #expect(mean > 700 && mean < 4_000, "mean description \(mean) bytes")
        let popularity = try rows("application_popularity_per_genre", options)
        #expect(Set(popularity.compactMap { $0[1] }).count == 175)
        let tables = FeedGenerator.tables(for: options).map(\.name)
        #expect(!tables.contains("song") && !tables.contains("collection") && tables.contains("video"))
    }

    @Test func unscaledFeedsKeepTheirSixtyStorefronts() throws {
        var options = GeneratorOptions()
        options.apps = 100
        #expect(options.scale == nil && options.storefronts.count == 60)
        #expect(try rows("storefront", options).count == 60)
        #expect(FeedGenerator.tables(for: options).contains { $0.name == "song" })
        options.priceStorefronts = 61
        #expect(throws: GeneratorError.self) { try options.validate() }
    }

    @Test func scaledFeedsAreDeterministic() throws {
        let one = try FeedGenerator.tableBytes("application_price", options: scaled(1.0 / 20_000))
        let two = try FeedGenerator.tableBytes("application_price", options: scaled(1.0 / 20_000))
        let other = try FeedGenerator.tableBytes("application_price", options: scaled(1.0 / 20_000, seed: 4))
        #expect(one == two)
        #expect(one != other)
    }

    @Test func dailyIncrementalChangesAFewPercentSpreadOverTheKeys() throws {
        let full = scaled(1.0 / 2_000) // 1,000 apps
        let model = FeedModel(full)
        let day1 = model.incrementalOptions(day: 1)
        let apps = try rows("application", day1)
        let ids = Set(apps.compactMap { $0[1] }.compactMap { Int64($0) })
        let added = model.newAppsPerDay
        let changed = ids.count - added
        #expect(changed >= 15 && changed <= 50, "\(changed) of 1000 apps changed")
        let fullIDs = (0..<1_000).map { model.appID($0) }
        let changedIDs = ids.filter { $0 <= fullIDs[999] }.sorted()
        #expect(changedIDs.first ?? .max < fullIDs[250] && changedIDs.last ?? 0 > fullIDs[750])
        let prices = try rows("application_price", day1)
        #expect(prices.count % 175 == 0)
        let pricedApps = prices.count / 175 - added
        #expect(pricedApps >= 15 && pricedApps <= 50, "\(pricedApps) of 1000 apps repriced")
    }
}
