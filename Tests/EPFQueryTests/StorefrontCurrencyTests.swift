import EPFGenerator
import Testing
@testable import EPFQuery

/// The generator's 175 real storefronts and EPFQuery's display tables agree.
struct StorefrontCurrencyTests {
    @Test func everyStorefrontCurrencyHasADisplayRule() {
        let unknown = Reference.allStorefronts.filter { !CurrencyFormat.isKnown($0.currency) }.map(\.currency)
        #expect(unknown.isEmpty, "no display rule for \(unknown)")
    }

    @Test func everyStorefrontCodeMapsToItsLinkCode() {
        for storefront in Reference.allStorefronts {
            #expect(CountryCodes.alpha2(fromAlpha3: storefront.countryCode) == storefront.linkCode,
                    "\(storefront.id) \(storefront.countryCode)")
        }
    }
}

/// `FormattedPrices`, which formats each price of a listing once: whatever order prices come in, each change gets
/// what it would format itself, the same text in another currency included (USD 0.99 is not EUR 0.99).
struct FormattedPricesTests {
    @Test func eachChangeGetsItsOwnCurrencysFormatting() {
        let prices = FormattedPrices()
        let texts = ["0.99", "0.990", "1.99", "120", "1000", "0", "", "abc", "1e3", "-1", "0.5"]
        let currencies: [String?] = ["USD", "EUR", "JPY", "GBP", "usd", "XYZ", "", nil]
        var random = SystemRandomNumberGenerator()
        for _ in 0..<3 {
            for currency in currencies.shuffled(using: &random) {
                for text in texts.shuffled(using: &random) {
                    let change = PriceChange(id: 1, kind: "app", storefrontId: 143_441, country: "us",
                                             change: "changed", oldPrice: text, newPrice: nil, currency: currency,
                                             exportDate: 0, sequence: 1)
                    let want = change.formatted(text)
                    let got = prices.of(text, in: change)
                    #expect(got?.number == want?.number && got?.text == want?.text,
                            "\(text) in \(currency ?? "nil"): \(String(describing: got)) != \(String(describing: want))")
                    #expect(prices.of(nil, in: change) == nil)
                }
            }
        }
    }
}
