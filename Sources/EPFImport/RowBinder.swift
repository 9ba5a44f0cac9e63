import EPFFormat
import Foundation

/// Why a record was not loaded, or why one of its values was stored as NULL.
public struct RejectReason: Sendable, Equatable {
    /// Short machine-readable kind: field-count, invalid-utf8, nul-byte, unterminated, bad-integer, bad-decimal,
    /// bad-date, empty-key.
    package let kind: String
    /// Human-readable detail: the column and the offending value (truncated).
    package let detail: String
    /// The column concerned, when one is.
    package var column: String?
    /// The offending value, escaped and truncated (see `RowBinder.escaped`), when there is one.
    package var value: String?

    @usableFromInline
    init(kind: String, detail: String, column: String? = nil, value: String? = nil) {
        self.kind = kind
        self.detail = detail
        self.column = column
        self.value = value
    }
}

/// Where `RowBinder` puts a record's values, in column order (parameter `index` is column `index - 1`): a SQLite
/// statement's parameters, or a row of PostgreSQL's binary COPY. Decimals and dates arrive as text (the decimal
/// as given, the date in its canonical `YYYY-MM-DDTHH:MM:SSZ` form). Public, as `RowBinder.bind` is: see there.
public protocol RowSink: AnyObject {
    func bindNull(at index: Int32) throws
    func bind(_ value: Int64, at index: Int32) throws
    func bindTextNoCopy(_ bytes: UnsafeRawPointer, count: Int, at index: Int32) throws
}

/// A value stored as NULL because it was not of its column's type; the row was kept.
@usableFromInline
struct ValueRepair {
    /// Column index in file order.
    package let column: Int
    /// bad-integer, bad-decimal or bad-date.
    package let kind: String
}

/// Checks the typed values of a record against a schema and binds them to an INSERT statement, without
/// allocating per field on the good path.
///
/// A value that is not of its column's type (junk such as `[123]` in an integer column, an unparseable date) is
/// stored as NULL and listed in `repairs` when the column may be NULL: not part of the primary key, not
/// `export_date`, and the policy is `.null`. Otherwise the record is rejected.
///
/// Public, with `bind` `@inlinable`, unlike the rest of the import engine: the stores call `bind` for every row,
/// and Swift 6.3 inlines and specializes a function across modules only when it is a public member of a public
/// type (not a package one), so each store's `bind` runs specialized for its sink, as it did while the binder lived
/// in the store's module. Its other members are package or internal (`@usableFromInline` where `bind` reads them).
public final class RowBinder {
    @usableFromInline
    enum Kind: UInt8 { case integer, decimal, text, datetime }
    private let kinds: [Kind]
    @usableFromInline
    package let names: [String]
    private let keyColumns: Set<Int>
    private let policy: BadValuePolicy
    /// The repairs of the record last bound (valid until the next `bind`).
    @usableFromInline
    internal(set) var repairs: [ValueRepair] = []
    /// Column index of `export_date`, if present.
    package let exportDateColumn: Int?
    /// The column count the schema expects from the file.
    @usableFromInline
    package let columnCount: Int

    /// Per-column kind codes and flags in plain memory: the hot loop reads them without ARC traffic.
    @usableFromInline
    let kindTable: UnsafeMutablePointer<Kind>
    @usableFromInline
    let keyTable: UnsafeMutablePointer<Bool>
    /// True where a bad value becomes NULL (a repair) instead of rejecting the row.
    private let repairableTable: UnsafeMutablePointer<Bool>
    /// Canonical dates are written here, 20 bytes per column, and bound without a copy until the next step.
    @usableFromInline
    let dateScratch: UnsafeMutableRawPointer

    deinit {
        kindTable.deallocate()
        keyTable.deallocate()
        repairableTable.deallocate()
        dateScratch.deallocate()
    }

    /// The most significant digits a decimal may have (nil: any), for a store that keeps decimals as doubles.
    @usableFromInline
    let decimalDigits: Int?

    /// `decimalDigits` limits the significant digits of a decimal value (SQLite's REAL holds
    /// `DecimalNumber.exactDigits` exactly); a longer one is a bad value like any other. PostgreSQL's numeric
    /// holds any, so its loads pass nil.
    package init(schema: TableSchema, fileColumns: Int, policy: BadValuePolicy, decimalDigits: Int? = nil) {
        self.decimalDigits = decimalDigits
        let fileSchema = schema.columns.prefix(fileColumns)
        kinds = fileSchema.map { column in
            switch column.type {
            case .integer, .boolean: return .integer
            case .decimal: return .decimal
            case .text: return .text
            case .datetime: return .datetime
            }
        }
        names = fileSchema.map(\.name)
        keyColumns = Set(schema.primaryKey.compactMap { key in fileSchema.firstIndex { $0.name == key } })
        exportDateColumn = fileSchema.firstIndex { $0.name == "export_date" }
        self.policy = policy
        columnCount = fileSchema.count
        let capacity = max(1, kinds.count)
        kindTable = UnsafeMutablePointer<Kind>.allocate(capacity: capacity)
        keyTable = UnsafeMutablePointer<Bool>.allocate(capacity: capacity)
        repairableTable = UnsafeMutablePointer<Bool>.allocate(capacity: capacity)
        dateScratch = UnsafeMutableRawPointer.allocate(byteCount: capacity * EPFValues.canonicalDatetimeLength,
                                                       alignment: 8)
        for (index, kind) in kinds.enumerated() {
            let key = keyColumns.contains(index)
            (kindTable + index).initialize(to: kind)
            (keyTable + index).initialize(to: key)
            (repairableTable + index).initialize(to: policy == .null && !key && index != exportDateColumn)
        }
    }

    /// A field as text for messages and the rejects file: at most `limit` bytes, cut at a character boundary
    /// with `...` appended; control bytes written `\xNN` and backslashes `\\`, so the text holds no byte that
    /// could end an EPF field or record; invalid UTF-8 becomes U+FFFD.
    package static func escaped(_ field: UnsafeRawBufferPointer, limit: Int = 200) -> String {
        var cut = min(field.count, limit)
        if cut < field.count {
            var back = 0
            while back < 3 && cut > 0 && field[cut] & 0xc0 == 0x80 {
                cut -= 1
                back += 1
            }
        }
        var text = ""
        for scalar in String(decoding: UnsafeRawBufferPointer(rebasing: field[0..<cut]), as: UTF8.self)
            .unicodeScalars {
            if scalar.value < 0x20 || scalar.value == 0x7f {
                text += "\\x" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16)
            } else if scalar == "\\" {
                text += "\\\\"
            } else {
                text.unicodeScalars.append(scalar)
            }
        }
        return cut < field.count ? text + "..." : text
    }

    /// The record-level problem, if any, as a reject reason.
    @usableFromInline
    func recordProblem(_ record: EPFRecord) -> RejectReason? {
        let issues = record.issues
        if issues.isEmpty { return nil }
        if issues.contains(.unterminated) {
            return RejectReason(kind: "unterminated", detail: "the file ends inside this record")
        }
        if issues.contains(.fieldCount) {
            return RejectReason(kind: "field-count",
                                detail: "\(record.fieldCount) fields, header has \(columnCount) "
                                    + "(a stray 0x01 inside a value?)")
        }
        if issues.contains(.nulByte) { return RejectReason(kind: "nul-byte", detail: "a NUL byte inside the record") }
        return RejectReason(kind: "invalid-utf8", detail: "bytes that are not UTF-8")
    }

    /// A bad value in column `index`: nil (and a repair noted) when the column may be NULL, else the reason to
    /// reject the record.
    @usableFromInline
    func badValue(_ index: Int, _ field: UnsafeRawBufferPointer, kind: String, what: String)
        -> RejectReason? {
        if repairableTable[index] {
            repairs.append(ValueRepair(column: index, kind: kind))
            return nil
        }
        let role = keyTable[index] ? "primary key column" : index == exportDateColumn ? "required column" : "column"
        let policyNote = keyTable[index] || index == exportDateColumn ? "" : " (--bad-values reject)"
        let value = Self.escaped(field)
        return RejectReason(kind: kind, detail: "\(what) in \(role) \(names[index]): '\(value)'\(policyNote)",
                            column: names[index], value: value)
    }

    /// The significant digits of a decimal `EPFValues.decimal` accepts: its digits without the leading zeros and
    /// the zeros that end its fraction (`0012.500` has 3).
    @usableFromInline
    static func significantDigits(_ field: UnsafeRawBufferPointer) -> Int {
        let zero = UInt8(ascii: "0"), point = UInt8(ascii: ".")
        var first = 0
        while first < field.count, field[first] == zero || field[first] == UInt8(ascii: "-") || field[first] == point {
            first += 1
        }
        var end = field.count
        if field[first..<end].contains(point) {
            while end > first, field[end - 1] == zero || field[end - 1] == point { end -= 1 }
        }
        return field[first..<end].reduce(0) { $0 + ($1 == point ? 0 : 1) }
    }

    /// The rejects-file entry for a repair of the record last bound.
    func repairReason(_ repair: ValueRepair, in record: EPFRecord) -> RejectReason {
        let field = record.field(repair.column)
        let what = switch repair.kind {
        case "bad-date": "not a date"
        case "bad-decimal": EPFValues.decimal(field) ? "a decimal of too many digits" : "not a decimal"
        default: "not an integer"
        }
        return RejectReason(kind: repair.kind, detail: "\(what); stored NULL, row kept",
                            column: names[repair.column], value: Self.escaped(field))
    }

    /// Validates every field and binds it to `statement` (parameters 1...n in file order). Returns the reason when
    /// the record must be rejected; then the statement's bindings are incomplete and it must not be stepped.
    /// Values stored as NULL instead are listed in `repairs` afterwards.
    @inlinable
    public func bind<Sink: RowSink>(_ record: EPFRecord, to statement: Sink?) throws -> RejectReason? {
        if !repairs.isEmpty { repairs.removeAll(keepingCapacity: true) }
        if let problem = recordProblem(record) { return problem }
        for index in 0..<columnCount {
            let field = record.field(index)
            let parameter = Int32(index + 1)
            if field.isEmpty {
                if keyTable[index] {
                    return RejectReason(kind: "empty-key", detail: "primary key column \(names[index]) is empty",
                                        column: names[index], value: "")
                }
                try statement?.bindNull(at: parameter)
                continue
            }
            switch kindTable[index] {
            case .integer:
                if let value = EPFValues.integer(field) {
                    try statement?.bind(value, at: parameter)
                } else {
                    if let reason = badValue(index, field, kind: "bad-integer", what: "not an integer") {
                        return reason
                    }
                    try statement?.bindNull(at: parameter)
                }
            case .text:
                if let base = field.baseAddress {
                    try statement?.bindTextNoCopy(base, count: field.count, at: parameter)
                }
            case .decimal:
                if EPFValues.decimal(field), let base = field.baseAddress {
                    if let decimalDigits, Self.significantDigits(field) > decimalDigits {
                        if let reason = badValue(index, field, kind: "bad-decimal",
                                                 what: "a decimal of more than \(decimalDigits) significant digits") {
                            return reason
                        }
                        try statement?.bindNull(at: parameter)
                    } else {
                        // As text: the column's REAL affinity makes it SQLite's own double of it, the one
                        // `CAST(... AS REAL)` and a literal in a query make.
                        try statement?.bindTextNoCopy(base, count: field.count, at: parameter)
                    }
                } else {
                    if let reason = badValue(index, field, kind: "bad-decimal", what: "not a decimal") { return reason }
                    try statement?.bindNull(at: parameter)
                }
            case .datetime:
                let length = EPFValues.canonicalDatetimeLength
                let target = dateScratch + index &* length
                if EPFValues.canonicalDatetime(field, into: target) {
                    try statement?.bindTextNoCopy(target, count: length, at: parameter)
                } else {
                    if let reason = badValue(index, field, kind: "bad-date", what: "not a date") { return reason }
                    try statement?.bindNull(at: parameter)
                }
            }
        }
        return nil
    }
}
