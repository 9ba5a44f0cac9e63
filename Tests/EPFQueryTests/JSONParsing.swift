import Foundation

/// Parses JSON bytes with Foundation, as clients would.
func parseJSON(_ bytes: [UInt8]) throws -> Any {
    try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
}
