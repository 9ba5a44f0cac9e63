import EPFTestSupport
import Foundation
import Testing
@testable import EPFQuery
import JSONText

@Suite struct StoreLinkTests {
    @Test(arguments: [
        ("364709193", 364709193, nil, nil),
        ("id364709193", 364709193, nil, nil),
        ("https://itunes.apple.com/us/app/ibooks/id364709193?mt=8", 364709193, "software", "us"),
        ("https://apps.apple.com/us/app/ibooks/id364709193", 364709193, "software", "us"),
        ("http://itunes.apple.com/app/baby-snap-date/id562148264?uo=5", 562148264, "software", nil),
        ("https://apps.apple.com/GB/app/x/id1", 1, "software", "gb"),
        ("itunes.apple.com/jp/app/x/id42", 42, "software", "jp"),
        ("itms-apps://itunes.apple.com/app/id77", 77, "software", nil),
        ("https://books.apple.com/us/book/x/id123", 123, "ebook", "us"),
        ("https://itunes.apple.com/us/book/some-book/id456?mt=11", 456, "ebook", "us"),
        ("https://itunes.apple.com/fr/album/la-vie-en-rose/id500000001", 500000001, "album", "fr"),
        ("https://music.apple.com/us/album/x/id500000001?i=600000001", 600000001, "song", "us"),
        ("https://itunes.apple.com/fr/album/la-vie/id500000001?uo=4&i=600000001", 600000001, "song", "fr"),
        ("https://itunes.apple.com/us/artist/apple/id284417353", 284417353, "artist", "us"),
        ("https://itunes.apple.com/us/movie/big-movie/id800000001", 800000001, "video", "us"),
        ("https://itunes.apple.com/us/tv-season/show/id800000002", 800000002, "video", "us"),
        ("https://itunes.apple.com/us/music-video/clip/id800000003", 800000003, "video", "us"),
        ("https://itunes.apple.com/WebObjects/MZStore.woa/wa/viewSoftware?id=364709193&mt=8", 364709193,
         "software", nil),
        ("  https://apps.apple.com/de/app/x/id9#reviews ", 9, "software", "de"),
    ] as [(String, Int64, String?, String?)])
    func parsesLinks(text: String, id: Int64, kind: String?, country: String?) {
        let link = StoreLink.parse(text)
        #expect(link?.id == id)
        #expect(link?.kind?.rawValue == kind)
        #expect(link?.country == country)
    }

    @Test(arguments: ["", "abc", "0", "-5", "12a", "https://apps.apple.com/us/app/x", "99999999999999999999",
                      "https://apps.apple.com/us/app/x/idabc"])
    func rejectsNonIDs(text: String) {
        #expect(StoreLink.parse(text) == nil)
    }
}

@Suite struct JSONValueTests {
    @Test func escapesStringsSoFoundationReadsThemBack() throws {
        let tricky = "quote \" backslash \\ newline \n tab \t cr \r nul \u{0} bell \u{7} unit \u{1F} "
            + "ls \u{2028} ps \u{2029} emoji 🍎 cjk 東京 é"
        let bytes = JSONValue.object([("s", .string(tricky))]).serialized()
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains("\\u2028") && text.contains("\\u2029") && text.contains("\\u0000"))
        #expect(text.contains("\\u001f") && text.contains("\\n") && !text.contains("\u{2028}"))
        let parsed = try #require(try parseJSON(bytes) as? [String: Any])
        #expect(parsed["s"] as? String == tricky)
    }

    /// Strings are scanned eight bytes at a time: put each escape at every offset of a long ASCII run.
    @Test(arguments: ["\"", "\\", "\n", "\u{0}", "\u{1F}", "\u{7F}", "\u{2028}", "é", "\u{E2}x", "~"])
    func escapesAtEveryOffset(special: String) throws {
        for offset in 0...17 {
            let text = String(repeating: "a", count: offset) + special + String(repeating: "b", count: 17 - offset)
            let bytes = JSONValue.string(text).serialized()
            let parsed = try #require(try parseJSON(Array("[".utf8) + bytes + Array("]".utf8)) as? [String])
            #expect(parsed == [text])
            #expect(!String(decoding: bytes, as: UTF8.self).contains("\u{2028}"))
        }
        #expect(JSONValue.string("0123456789abcdef\"01234567").jsonText == #""0123456789abcdef\"01234567""#)
    }

    @Test func keepsKeyOrderAndNumberTypes() throws {
        let value = JSONValue.object([
            ("z", .int(-9_223_372_036_854_775_807)), ("a", .decimal("0.99")), ("m", .double(1.5)),
            ("b", .bool(true)), ("n", .null), ("arr", .array([.int(0), .string("x")])), ("bad", .decimal("1e")),
            ("inf", .double(.infinity)),
        ])
        #expect(value.jsonText == #"{"z":-9223372036854775807,"a":0.99,"m":1.5,"b":true,"n":null,"# +
                #""arr":[0,"x"],"bad":null,"inf":null}"#)
        #expect(value["a"] == .decimal("0.99"))
    }

    @Test(arguments: ["0", "-1", "0.99", "120", "1e5", "1.5E-3"]) func acceptsJSONNumbers(text: String) {
        #expect(JSONValue.isJSONNumber(text))
    }

    @Test(arguments: ["", "-", "01", ".5", "1.", "1e", "NaN", "0x1", "1 "]) func rejectsNonNumbers(text: String) {
        #expect(!JSONValue.isJSONNumber(text))
    }
}

@Suite struct CurrencyTests {
    @Test(arguments: [
        ("USD", "0.990", "$0.99", "0.99"), ("USD", "0.000", "Free", "0.00"), ("USD", "1234.5", "$1,234.50", "1234.50"),
        ("EUR", "0.99", "0,99 €", "0.99"), ("EUR", "1234.5", "1.234,50 €", "1234.50"),
        ("JPY", "120.000", "¥120", "120"), ("JPY", "1200", "¥1,200", "1200"), ("GBP", "0.79", "£0.79", "0.79"),
        ("KRW", "1200.000", "₩1,200", "1200"), ("usd", "4.99", "$4.99", "4.99"), ("USD", "0.995", "$1.00", "1.00"),
        ("USD", "9.999", "$10.00", "10.00"), ("JPY", "0", "Free", "0"), ("XYZ", "3.5", "XYZ 3.50", "3.50"),
        ("CHF", "1.00", "CHF 1.00", "1.00"), ("SEK", "10", "10,00 kr", "10.00"),
    ] as [(String, String, String, String)])
    func formatsInTheStorefrontCurrency(code: String, text: String, formatted: String, number: String) {
        let format = CurrencyFormat.forCode(code)
        #expect(format.format(text) == formatted)
        #expect(format.jsonNumber(text) == number)
    }

    @Test(arguments: ["", "abc", "1.2.3", "1,5"]) func rejectsNonDecimals(text: String) {
        #expect(CurrencyFormat.forCode("USD").format(text) == nil)
    }
}

@Suite struct CountryTests {
    @Test func tableIsCompleteAndRoundTrips() {
        #expect(CountryCodes.count == 250)  // 249 ISO 3166-1 codes plus Kosovo (XK)
        for (alpha2, alpha3) in [("us", "USA"), ("gb", "GBR"), ("jp", "JPN"), ("kr", "KOR"), ("de", "DEU"),
                                 ("ch", "CHE"), ("ss", "SSD"), ("cw", "CUW"), ("xk", "XKX")] {
            #expect(CountryCodes.alpha3(fromAlpha2: alpha2) == alpha3)
            #expect(CountryCodes.alpha2(fromAlpha3: alpha3) == alpha2)
        }
        #expect(CountryCodes.alpha2(fromAlpha3: "XKS") == "xk")
        #expect(CountryCodes.alpha3(fromAlpha2: "zz") == nil)
    }

    /// The byte check (used on every request with a country) agrees with the table, for every pair of bytes.
    @Test func alpha2CheckAgreesWithTheTable() {
        for first in UInt8.min...UInt8.max {
            for second in UInt8.min...UInt8.max {
                let text = String(decoding: [first, second], as: UTF8.self)
                let known = first < 0x80 && second < 0x80 && CountryCodes.alpha3(fromAlpha2: text) != nil
                #expect(CountryCodes.isAlpha2(first, second) == known, "\(first) \(second)")
            }
        }
        for code in ["gb", "GB", "Gb", "us", "XK"] { #expect(CountryCodes.isAlpha2(code)) }
        for code in ["", "g", "gbr", "zz", "g1", "1g", "é", "gb ", " gb", "g\u{0}"] {
            #expect(!CountryCodes.isAlpha2(code))
        }
    }
}
