/// The (item, storefront) keys an incremental has noted so far, exactly for Apple's storefronts: per item, a
/// 256-bit map of its storefronts from `firstStorefront` on (Apple's run from 143441 to 143624). An incremental
/// lists an item's storefronts together, so a key is nearly always a bit of the item just looked up: no hash, no
/// cache miss. Keys of other storefronts, and of items past `largestItemCount`, go to a Bloom filter (`SeenKeys`),
/// which may call a key seen that was not (that key only takes the slower, exact way).
///
/// Memory: 32 bytes and a dictionary entry per item, at most about 14 MiB with the default cap (a real-scale
/// daily changes about 80,000 items), plus the filter's 43 MiB at most.
final class NotedKeys {
    /// The storefront of the first bit of an item's map.
    static let firstStorefront: Int64 = 143_441
    private static let wordsPerItem = 4

    /// The most items given a map.
    let largestItemCount: Int

    @exclusivity(unchecked) private var maps: [UInt64] = []
    /// Each item's map: its number (the map's words start at number x `wordsPerItem`). Used by one thread, so
    /// accesses to these go unchecked (see `PendingNotes`).
    @exclusivity(unchecked) private var itemMaps: [Int64: Int32] = [:]
    /// The last item looked up and where its map starts (-1: none yet, or the item has none).
    @exclusivity(unchecked) private var lastItem: Int64 = 0
    @exclusivity(unchecked) private var lastMap = -1
    private let others: SeenKeys

    init(largestItemCount: Int = 1 << 18, filter: SeenKeys = SeenKeys()) {
        self.largestItemCount = largestItemCount
        others = filter
    }

    /// The items given a map so far.
    var itemCount: Int { itemMaps.count }

    /// Adds a key; returns whether it may have been added before (false: certainly not; true: certainly, for a key
    /// of a map).
    func insert(item: Int64, storefront: Int64) -> Bool {
        let offset = storefront &- Self.firstStorefront
        guard offset >= 0, offset < 64 * Int64(Self.wordsPerItem) else {
            return others.insert(item: item, storefront: storefront)
        }
        if item != lastItem || lastMap < 0 {
            if let map = itemMaps[item] {
                lastMap = Int(map) * Self.wordsPerItem
            } else if itemMaps.count < largestItemCount {
                itemMaps[item] = Int32(itemMaps.count)
                lastMap = maps.count
                maps.append(contentsOf: repeatElement(0, count: Self.wordsPerItem))
            } else {
                lastItem = item
                lastMap = -1
                return others.insert(item: item, storefront: storefront)
            }
            lastItem = item
        }
        let word = lastMap + Int(offset >> 6)
        let bit: UInt64 = 1 << UInt64(offset & 63)
        if maps[word] & bit != 0 { return true }
        maps[word] |= bit
        return false
    }
}
