import JSONText
import Testing

/// The one JSON writer: escapes, key order, exact decimals, and what it writes for values JSON cannot hold.
@Suite struct JSONValueTests {
    @Test func stringEscapes() {
        let value = JSONValue.string("a\"b\\c\n\r\t\u{01}\u{1F}é\u{2028}\u{2029}🚀/")
        #expect(value.jsonText == "\"a\\\"b\\\\c\\n\\r\\t\\u0001\\u001fé\\u2028\\u2029🚀/\"")
    }

    @Test func objectsKeepTheirKeyOrder() {
        let value = JSONValue.object([("z", .int(1)), ("a", .bool(true)), ("m", .null)])
        #expect(value.jsonText == "{\"z\":1,\"a\":true,\"m\":null}")
        #expect(value["a"] == .bool(true))
        #expect(value["missing"] == nil)
    }

    @Test func decimalsStayExactAndNonNumbersAreNull() {
        #expect(JSONValue.array([.decimal("0.990"), .decimal("-12.5e3"), .decimal("$1"), .decimal("01")]).jsonText
                == "[0.990,-12.5e3,null,null]")
        #expect(JSONValue.array([.double(.infinity), .double(.nan), .double(1.5)]).jsonText == "[null,null,1.5]")
        #expect(JSONValue.int(Int64.min).jsonText == "-9223372036854775808")
    }

    @Test func serializedValuesAreWrittenAsTheyAre() {
        let stored = JSONValue.serialized(Array("{\"trackId\":1}".utf8))
        #expect(JSONValue.array([stored, .int(2)]).jsonText == "[{\"trackId\":1},2]")
        #expect(stored["trackId"] == nil)
    }

    @Test func prettyTextIndentsTwoSpacesALevel() {
        let value = JSONValue.object([("a", .array([.int(1), .string("x")])), ("b", .object([])), ("c", .array([]))])
        #expect(value.prettyText == "{\n  \"a\": [\n    1,\n    \"x\"\n  ],\n  \"b\": {},\n  \"c\": []\n}")
    }

    @Test(arguments: [("0", true), ("-0", true), ("0.99", true), ("1e5", true), ("1E-5", true), ("12.50", true),
                      ("", false), ("-", false), ("01", false), (".5", false), ("1.", false), ("1e", false),
                      ("+1", false), ("0x10", false), (" 1", false), ("NaN", false)])
    func jsonNumbers(text: String, isNumber: Bool) {
        #expect(JSONValue.isJSONNumber(text) == isNumber)
    }
}
