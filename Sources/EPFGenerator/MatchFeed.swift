/// The match feed: UPCs, ISRCs and AMG ids of the music and video catalogue (`collection_match`, `song_match`,
/// `artist_match`, `video_match`), written only when `GeneratorOptions.match` is set or a table is named.
///
/// Every value is a pure function of the item's index, so tests know which key names which item.
package enum MatchIDs {
    /// The UPC of collection `index`: 12 digits.
    package static func collectionUPC(_ index: Int) -> String { String(720_000_000_000 + Int64(index) * 7) }
    /// The AMG album id of collection `index`; every tenth collection has none.
    package static func amgAlbumID(_ index: Int) -> Int64? { index % 10 == 9 ? nil : 10_000 + Int64(index) }
    /// The ISRC of song `index`: `US`, a 3-character registrant, year `26`, 5 digits.
    package static func songISRC(_ index: Int) -> String { isrc("US", index) }
    /// The AMG artist id of artist `index` (music artists only have match rows).
    package static func amgArtistID(_ index: Int) -> Int64 { 400_000 + Int64(index) }
    /// The UPC of video `index`.
    package static func videoUPC(_ index: Int) -> String { String(880_000_000_000 + Int64(index) * 3) }
    /// The ISRC of video `index`.
    package static func videoISRC(_ index: Int) -> String { isrc("GB", index) }
    /// The AMG video id of video `index`.
    package static func amgVideoID(_ index: Int) -> Int64 { 17_000 + Int64(index) }

    static func isrc(_ country: String, _ index: Int) -> String {
        let digits = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ")
        var registrant = ""
        var value = index / 100_000
        for _ in 0..<3 {
            registrant = String(digits[value % 36]) + registrant
            value /= 36
        }
        let serial = String(index % 100_000)
        return country + registrant + "26" + String(repeating: "0", count: 5 - serial.count) + serial
    }
}

extension TableEmitter {
    /// The rows of one match table (full exports only: the match feed has no incrementals here).
    func matchRows() throws {
        guard full else { return }
        switch schema.name {
        case "artist_match":
            for index in plan.softwareArtists..<(plan.softwareArtists + plan.musicArtists) {
                w.int(exportDate)
                w.int(plan.artistID(index))
                w.int(MatchIDs.amgArtistID(index))
                try w.endRecord()
            }
        case "collection_match":
            for index in 0..<plan.collections {
                w.int(exportDate)
                w.int(plan.collectionID(index))
                w.text(Array(MatchIDs.collectionUPC(index).utf8))
                w.null()
                if let amg = MatchIDs.amgAlbumID(index) { w.int(amg) } else { w.null() }
                try w.endRecord()
            }
        case "song_match":
            for index in 0..<plan.songs {
                w.int(exportDate)
                w.int(plan.songID(index))
                w.text(Array(MatchIDs.songISRC(index).utf8))
                w.null()
                try w.endRecord()
            }
        case "video_match":
            for index in 0..<plan.videos {
                w.int(exportDate)
                w.int(plan.videoID(index))
                w.text(Array(MatchIDs.videoUPC(index).utf8))
                w.text(Array(MatchIDs.videoISRC(index).utf8))
                w.int(MatchIDs.amgVideoID(index))
                try w.endRecord()
            }
        default:
            throw GeneratorError.unknownTable(schema.name)
        }
    }
}
