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
