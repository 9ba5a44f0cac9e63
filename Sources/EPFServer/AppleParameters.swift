import EPFQuery
import HTTPTransport

/// A request to `/lookup` or `/search` Apple would refuse: an `errorMessage` naming the keys, as Apple's
/// service names them (`itunesId` for `id`, `resultEntity` for `entity`, ...), or a message of its own.
struct AppleError: Error {
    let status: Int
    let errorMessage: String

    /// Apple's answer to bad values: "Invalid value(s) for key(s): [resultEntity]".
    static func invalid(_ parameter: String) -> AppleError {
        AppleError(status: 400, errorMessage: "Invalid value(s) for key(s): [\(appleKey(parameter))]")
    }

    /// The key Apple's error message uses for a parameter.
    static func appleKey(_ parameter: String) -> String {
        switch parameter {
        case "id": return "itunesId"
        case "entity": return "resultEntity"
        case "media": return "mediaType"
        case "attribute": return "attributeType"
        case "lang": return "language"
        default: return parameter
        }
    }
}

/// Parsing and checking of Apple's parameters: each bad value throws `AppleError.invalid` naming it.
enum AppleParameters {
    /// Apple's default and largest `limit` (search results, or related items per item looked up).
    static let defaultLimit = 50
    static let maximumLimit = 200
    /// The longest search term accepted, in bytes.
    static let maximumTermBytes = 500
    /// The longest JSONP callback name accepted.
    static let maximumCallbackBytes = 128

    /// The JSONP callback name, nil without one. Only JavaScript identifiers joined by dots (`cb`,
    /// `jQuery1234_5678`, `app.handlers.done`) are accepted: anything else could inject script into the page.
    static func callback(_ request: HTTPRequest) throws -> String? {
        guard let name = request.parameter("callback") else { return nil }
        guard isCallbackName(name) else { throw AppleError.invalid("callback") }
        return name
    }

    static func isCallbackName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count <= maximumCallbackBytes else { return false }
        var atStart = true
        for byte in bytes {
            let letter = (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F
                || byte == 0x24
            let digit = byte >= 0x30 && byte <= 0x39
            if byte == UInt8(ascii: ".") {
                if atStart { return false }
                atStart = true
            } else if letter || (digit && !atStart) {
                atStart = false
            } else {
                return false
            }
        }
        return !atStart
    }

    /// `country`: an ISO 3166 alpha-2 code in any case, lowercased; nil when absent (Apple's default, US).
    static func country(_ request: HTTPRequest) throws -> String? {
        guard let value = request.parameter("country") else { return nil }
        guard CountryCodes.isAlpha2(value) else { throw AppleError.invalid("country") }
        // Most clients send lowercase codes: keep their string rather than make a new one.
        return value.utf8.allSatisfy({ $0 >= UInt8(ascii: "a") }) ? value : value.lowercased()
    }

    /// `lang`: `en_us`, `ja_jp`, `ja`, `pt-BR`, lowercased; nil when absent or English (the default texts).
    static func language(_ request: HTTPRequest) throws -> String? {
        guard let value = request.parameter("lang") else { return nil }
        let lower = value.lowercased()
        let parts = lower.split(separator: "_", omittingEmptySubsequences: false)
            .flatMap { $0.split(separator: "-", omittingEmptySubsequences: false) }
        let letter: (UInt8) -> Bool = { $0 >= 0x61 && $0 <= 0x7A }
        let alphanumeric: (Substring) -> Bool = { $0.utf8.allSatisfy { letter($0) || ($0 >= 0x30 && $0 <= 0x39) } }
        guard let first = parts.first, (2...3).contains(first.count), first.utf8.allSatisfy(letter), parts.count <= 3,
              parts.dropFirst().allSatisfy({ (2...8).contains($0.count) && alphanumeric($0) }) else {
            throw AppleError.invalid("lang")
        }
        return first == "en" ? nil : lower
    }

    /// `limit`: a whole number of at least 1; above Apple's maximum it is the maximum, as Apple does.
    static func limit(_ request: HTTPRequest) throws -> Int {
        guard let value = request.parameter("limit") else { return defaultLimit }
        guard value.utf8.count <= 10, let number = Int(value), number >= 1 else { throw AppleError.invalid("limit") }
        return min(number, maximumLimit)
    }

    /// `media`: one of Apple's media types, with the entities it allows; nil when absent.
    static func media(_ request: HTTPRequest) throws -> (name: String, entities: [String])? {
        guard let value = request.parameter("media") else { return nil }
        guard let entities = AppleVocabulary.entitiesByMedia[value] else { throw AppleError.invalid("media") }
        return (value, entities)
    }

    /// `entity`: one of Apple's entities, and one of the media's when a media other than `all` is given.
    static func entity(_ request: HTTPRequest, media: (name: String, entities: [String])?) throws -> AppleEntity? {
        guard let value = request.parameter("entity") else { return nil }
        guard let entity = AppleVocabulary.entity(value) else { throw AppleError.invalid("entity") }
        if let media, media.name != "all", !media.entities.contains(value) { throw AppleError.invalid("entity") }
        return entity
    }

    /// The values of a comma-separated parameter, spaces removed, empty pieces dropped.
    static func list(_ value: String) -> [String] {
        // The common case, one value: no splitting.
        if !value.isEmpty, everyByte(of: value, { $0 != UInt8(ascii: ",") && $0 != UInt8(ascii: " ") }) {
            return [value]
        }
        return value.split(separator: ",").map { piece in
            piece.utf8.contains(0x20) ? piece.filter { $0 != " " } : String(piece)
        }.filter { !$0.isEmpty }
    }

    /// Whether a key's value has the form Apple accepts: digits for ids, UPCs and AMG ids (an id above 0), twelve
    /// letters and digits for an ISRC.
    static func isValid(_ value: String, for key: AppleLookupRequest.Key) -> Bool {
        let digits = everyByte(of: value) { $0 >= 0x30 && $0 <= 0x39 }
        switch key {
        case .id: return digits && (1...19).contains(value.utf8.count) && (Int64(value) ?? 0) > 0
        case .upc: return digits && (6...14).contains(value.utf8.count)
        case .isrc:
            return value.utf8.count == 12 && value.utf8.allSatisfy {
                ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A)
            }
        case .amgArtistId, .amgAlbumId, .amgVideoId: return digits && (1...12).contains(value.utf8.count)
        }
    }

    /// Whether every UTF-8 byte of `text` passes `test`, read from the string's own storage where it has one (every
    /// native string, short ones included): ids are checked on every lookup.
    @inline(__always)
    static func everyByte(of text: String, _ test: (UInt8) -> Bool) -> Bool {
        let answer = text.utf8.withContiguousStorageIfAvailable { bytes in
            for byte in bytes where !test(byte) { return false }
            return true
        }
        return answer ?? text.utf8.allSatisfy(test)
    }
}
