@testable import EPFExport
import Testing

/// The export's conversions of stored values to Parquet numbers: exact, or refused (the column then goes as text).
@Suite struct ExactValuesTests {
    func thousandths(_ text: String) -> Int64? {
        var copy = text
        return copy.withUTF8 { ExactValues.thousandths(UnsafeRawBufferPointer($0)) }
    }

    @Test func decimalTextIsParsedDigitByDigit() {
        #expect(thousandths("0.99") == 990)
        #expect(thousandths("0.990") == 990)
        #expect(thousandths("0.9900") == 990)
        #expect(thousandths("1225000") == 1_225_000_000)
        #expect(thousandths("-1.5") == -1500)
        #expect(thousandths(".5") == 500)
        #expect(thousandths("999999999999999.999") == 999_999_999_999_999_999)
        #expect(thousandths("0.9999") == nil) // a fourth digit that is not zero
        #expect(thousandths("1000000000000000") == nil) // beyond 18 digits
        #expect(thousandths("") == nil)
        #expect(thousandths("-") == nil)
        #expect(thousandths("1e3") == nil)
        #expect(thousandths("1.2.3") == nil)
    }

    @Test func integersAndRealsConvertExactlyOrNotAtAll() {
        #expect(ExactValues.thousandths(Int64(7)) == 7000)
        #expect(ExactValues.thousandths(Int64.max) == nil)
        #expect(ExactValues.thousandths(0.99) == 990)
        #expect(ExactValues.thousandths(1225000.0) == 1_225_000_000)
        #expect(ExactValues.thousandths(-0.001) == -1)
        #expect(ExactValues.thousandths(99999.999) == 99_999_999)
        #expect(ExactValues.thousandths(0.9999) == nil)
        #expect(ExactValues.thousandths(Double.nan) == nil)
        #expect(ExactValues.thousandths(1e16) == nil)
    }

    @Test func datesAreTheImportsCanonicalText() {
        func milliseconds(_ text: String) -> Int64? {
            var copy = text
            return copy.withUTF8 { ExactValues.milliseconds(UnsafeRawBufferPointer($0)) }
        }
        #expect(milliseconds("2016-01-06T10:00:01Z") == 1_452_074_401_000)
        #expect(milliseconds("1970-01-01") == 0)
        #expect(milliseconds("1969-12-31T23:59:59Z") == -1000)
        #expect(milliseconds("1000-01-01T00:00:00Z") == -30_610_224_000_000)
        #expect(milliseconds("2012 09 25") == nil)
        #expect(milliseconds("2016-13-06T10:00:01Z") == nil)
    }
}
