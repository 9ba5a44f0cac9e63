/// Writes Apache Thrift's compact protocol, the encoding of every Parquet metadata structure (page headers and the
/// footer). Only what Parquet's structures need: structs, fields of i16/i32/i64/binary/bool/struct/list, lists.
///
/// Field headers carry the difference from the previous field id of the same struct in their high nibble (1...15),
/// else the id follows as a zigzag varint; integers are zigzag varints; binaries are a varint length and the bytes.
struct ThriftCompactWriter {
    /// The compact protocol's type codes.
    enum FieldType: UInt8 {
        case booleanTrue = 1, booleanFalse = 2, byte = 3, i16 = 4, i32 = 5, i64 = 6, double = 7, binary = 8
        case list = 9, set = 10, map = 11, structure = 12
    }

    private(set) var bytes: [UInt8] = []
    /// The last field id written in each open struct (innermost last).
    private var lastFieldIDs: [Int16] = [0]

    init() { bytes.reserveCapacity(256) }

    mutating func i32(_ id: Int16, _ value: Int32) {
        fieldHeader(id, .i32)
        varint(zigzag(Int64(value)))
    }

    mutating func i64(_ id: Int16, _ value: Int64) {
        fieldHeader(id, .i64)
        varint(zigzag(value))
    }

    mutating func i16(_ id: Int16, _ value: Int16) {
        fieldHeader(id, .i16)
        varint(zigzag(Int64(value)))
    }

    mutating func bool(_ id: Int16, _ value: Bool) {
        fieldHeader(id, value ? .booleanTrue : .booleanFalse)
    }

    mutating func binary(_ id: Int16, _ value: [UInt8]) {
        fieldHeader(id, .binary)
        varint(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    mutating func string(_ id: Int16, _ value: String) { binary(id, Array(value.utf8)) }

    /// A struct field: `body` writes the struct's fields; the stop byte is added.
    mutating func structure(_ id: Int16, _ body: (inout ThriftCompactWriter) -> Void) {
        fieldHeader(id, .structure)
        structBody(body)
    }

    /// An empty struct field (a union member without fields, such as `StringType` or `MilliSeconds`).
    mutating func emptyStructure(_ id: Int16) { structure(id) { _ in } }

    /// A list field of `count` structs, the `index`th written by `element`.
    mutating func structList(_ id: Int16, count: Int, _ element: (inout ThriftCompactWriter, Int) -> Void) {
        fieldHeader(id, .list)
        listHeader(count: count, type: .structure)
        for index in 0..<count { structBody { element(&$0, index) } }
    }

    mutating func i32List(_ id: Int16, _ values: [Int32]) {
        fieldHeader(id, .list)
        listHeader(count: values.count, type: .i32)
        for value in values { varint(zigzag(Int64(value))) }
    }

    mutating func stringList(_ id: Int16, _ values: [String]) {
        fieldHeader(id, .list)
        listHeader(count: values.count, type: .binary)
        for value in values {
            varint(UInt64(value.utf8.count))
            bytes.append(contentsOf: value.utf8)
        }
    }

    /// Fields already encoded by another writer of the same struct level (a row group kept until the footer).
    mutating func appendRaw(_ encoded: [UInt8]) { bytes.append(contentsOf: encoded) }

    /// A whole struct at the top level (a page header, the footer's `FileMetaData`).
    static func message(_ body: (inout ThriftCompactWriter) -> Void) -> [UInt8] {
        var writer = ThriftCompactWriter()
        writer.structBody(body)
        return writer.bytes
    }

    private mutating func structBody(_ body: (inout ThriftCompactWriter) -> Void) {
        lastFieldIDs.append(0)
        body(&self)
        bytes.append(0)
        lastFieldIDs.removeLast()
    }

    private mutating func fieldHeader(_ id: Int16, _ type: FieldType) {
        let last = lastFieldIDs[lastFieldIDs.count - 1]
        let delta = Int(id) - Int(last)
        if delta > 0 && delta <= 15 {
            bytes.append(UInt8(delta) << 4 | type.rawValue)
        } else {
            bytes.append(type.rawValue)
            varint(zigzag(Int64(id)))
        }
        lastFieldIDs[lastFieldIDs.count - 1] = id
    }

    private mutating func listHeader(count: Int, type: FieldType) {
        if count < 15 {
            bytes.append(UInt8(count) << 4 | type.rawValue)
        } else {
            bytes.append(0xF0 | type.rawValue)
            varint(UInt64(count))
        }
    }

    private func zigzag(_ value: Int64) -> UInt64 { UInt64(bitPattern: (value << 1) ^ (value >> 63)) }

    private mutating func varint(_ value: UInt64) { Varint.append(value, to: &bytes) }
}

/// ULEB128 varints, as Thrift's compact protocol and Parquet's RLE run headers write them.
enum Varint {
    @inline(__always)
    static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }
}
