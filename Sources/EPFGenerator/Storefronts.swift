import EPFFormat

/// One App Store storefront with its real Apple storefront id, ISO codes and currency.
package struct StorefrontInfo: Sendable, Equatable {
    /// Apple's storefront id, e.g. 143441 for the United States.
    package let id: Int
    /// ISO 3166-1 alpha-3 country code, as EPF's `storefront.country_code` holds it.
    package let countryCode: String
    /// Lower-case ISO 3166-1 alpha-2 code, as store links use it (`/us/app/...`).
    package let linkCode: String
    /// English country name.
    package let name: String
    /// ISO 4217 currency code of the prices in this storefront.
    package let currency: String
    /// Approximate units of `currency` per US dollar, used to derive price tiers.
    let rate: Double
    /// `currency` as UTF-8 bytes, for the writer.
    let currencyBytes: [UInt8]
    /// Prices are whole numbers rounded to this step (JPY 10, KRW 100 ...); 0 for cents-style x.99 prices.
    let wholeStep: Int
}

/// Apple's App Store storefronts as the generator writes them, from `AppleStorefronts` with their rates and steps.
///
/// `EPFQuery` keeps its own, unrelated tables (ISO 3166 codes in `CountryCodes`, display rules per currency in
/// `CurrencyFormat`); the generator's tests check that every currency here has a display rule there.
extension Reference {
    /// The first 60 storefronts, United States first: what every export without `--scale` writes (kept as it
    /// was, so existing feeds stay byte for byte the same). `application_price` uses the first entries most.
    package static let storefronts: [StorefrontInfo] = parse(AppleStorefronts.primaryTable)

    /// Apple's 175 storefronts with their real ids, ISO codes and the currency each storefront's prices use:
    /// `storefronts` followed by 115 smaller ones. Exports made with `--scale` use all of them.
    package static let allStorefronts: [StorefrontInfo] = storefronts + parse(AppleStorefronts.moreTable)

    private static func parse(_ table: String) -> [StorefrontInfo] {
        table.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ", maxSplits: 6).map(String.init)
            guard parts.count == 7, let id = Int(parts[0]), let rate = Double(parts[4]), let step = Int(parts[5])
            else { return nil }
            return StorefrontInfo(id: id, countryCode: parts[1], linkCode: parts[2], name: parts[6],
                                  currency: parts[3], rate: rate, currencyBytes: Array(parts[3].utf8),
                                  wholeStep: step)
        }
    }
}
