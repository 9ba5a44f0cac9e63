/// The type of one column of a Parquet file, as readers see it.
package enum ParquetColumnType: Sendable, Equatable {
    /// INT64, no logical type.
    case int64
    /// INT64 milliseconds since 1970 with the logical type TIMESTAMP(isAdjustedToUTC: true, MILLIS).
    case timestampMillis
    /// INT64 holding the value times 10^scale, with the logical type DECIMAL(precision, scale); precision at most 18.
    case decimal(precision: Int, scale: Int)
    /// DOUBLE.
    case double
    /// BYTE_ARRAY with the logical type STRING (UTF-8).
    case string
}

/// One column of a Parquet file: every column is OPTIONAL (NULLs are written as definition level 0).
package struct ParquetColumn: Sendable, Equatable {
    /// The column's name.
    package var name: String
    /// Its type.
    package var type: ParquetColumnType
    /// For strings: whether to try dictionary encoding (kept per column chunk only while it pays: few distinct
    /// values). Ignored for other types.
    package var dictionary: Bool

    package init(name: String, type: ParquetColumnType, dictionary: Bool = true) {
        self.name = name
        self.type = type
        self.dictionary = dictionary
    }

    var physicalType: PhysicalType {
        switch type {
        case .int64, .timestampMillis, .decimal: return .int64
        case .double: return .double
        case .string: return .byteArray
        }
    }
}

/// Parquet's physical types (parquet.thrift `Type`).
enum PhysicalType: Int32 {
    case boolean = 0, int32 = 1, int64 = 2, int96 = 3, float = 4, double = 5, byteArray = 6, fixedLengthByteArray = 7
}

/// parquet.thrift `Encoding`.
enum Encoding: Int32 {
    case plain = 0, plainDictionary = 2, rle = 3, bitPacked = 4, rleDictionary = 8
}

/// parquet.thrift `PageType`.
enum PageType: Int32 {
    case dataPage = 0, indexPage = 1, dictionaryPage = 2, dataPageV2 = 3
}

/// parquet.thrift `CompressionCodec`: epf writes GZIP (zlib).
enum CompressionCodec: Int32 {
    case uncompressed = 0, snappy = 1, gzip = 2
}

extension ParquetColumn {
    /// The column's `SchemaElement` (parquet.thrift): type 1, repetition_type 3, name 4, converted_type 6, scale 7,
    /// precision 8, logicalType 10.
    func writeSchemaElement(_ writer: inout ThriftCompactWriter) {
        writer.i32(1, physicalType.rawValue)
        writer.i32(3, 1) // OPTIONAL
        writer.string(4, name)
        switch type {
        case .int64, .double:
            break
        case .timestampMillis:
            writer.i32(6, 9) // TIMESTAMP_MILLIS
            writer.structure(10) { logical in
                logical.structure(8) { timestamp in // TIMESTAMP
                    timestamp.bool(1, true) // isAdjustedToUTC
                    timestamp.structure(2) { $0.emptyStructure(1) } // unit: MILLIS
                }
            }
        case .decimal(let precision, let scale):
            writer.i32(6, 5) // DECIMAL
            writer.i32(7, Int32(scale))
            writer.i32(8, Int32(precision))
            writer.structure(10) { logical in
                logical.structure(5) { decimal in // DECIMAL
                    decimal.i32(1, Int32(scale))
                    decimal.i32(2, Int32(precision))
                }
            }
        case .string:
            writer.i32(6, 0) // UTF8
            writer.structure(10) { $0.emptyStructure(1) } // STRING
        }
    }
}
