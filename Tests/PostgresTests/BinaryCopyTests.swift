import EPFPostgres
import Testing

@Suite struct BinaryCopyTests {
    @Test func microsecondsCountFromTheYear2000() {
        func micros(_ text: String) -> Int64? {
            Array(text.utf8).withUnsafeBytes { BinaryCopyWriter.microseconds($0) }
        }
        #expect(micros("2000-01-01T00:00:00Z") == 0)
        #expect(micros("2000-01-02T00:00:01Z") == 86_401_000_000)
        #expect(micros("1999-12-31T23:59:59Z") == -1_000_000)
        let expected: Int64 = (4651 * 86_400 + 36_000) * 1_000_000
        #expect(micros("2012-09-25T10:00:00Z") == expected)
        #expect(micros("2012-09-25") == nil)
    }

    @Test func redactedURLsHoldNoPassword() {
        #expect(PostgresURL.redacted("postgresql://epf:s3cret@db.example:5433/epf?sslmode=require")
                == "postgresql://epf@db.example:5433/epf?sslmode=require")
        #expect(PostgresURL.redacted("postgres://db/epf?password=s3cret&user=x") == "postgres://db/epf?user=x")
        #expect(PostgresURL.redacted("postgresql:///epf?host=/tmp") == "postgresql:///epf?host=/tmp")
        #expect(PostgresURL.isPostgres("POSTGRES://x") && !PostgresURL.isPostgres("epf.sqlite"))
    }
}
