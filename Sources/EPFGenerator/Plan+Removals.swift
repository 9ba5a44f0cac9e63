/// Apps leaving the store: which app is removed when. Removals take effect at weekly full exports (days 7, 14,
/// ...), so incrementals of days 1 ... 6 hold every app; each later week removes about 1 % of the apps.
extension Plan {
    /// Percent of the apps removed at each weekly full export.
    static let removalPercent: UInt64 = 1

    /// The day app `index` was added: 0 for the first full's apps, else its incremental day.
    func addedDay(_ index: Int) -> Int { index < apps ? 0 : (index - apps) / newAppsPerDay + 1 }

    /// The day app `index` leaves the store (a multiple of 7, after the day it was added); nil for the fixed apps
    /// 0 ... 7, which never leave. A pure function of `(seed, index)`.
    func removalDay(_ index: Int) -> Int? {
        guard index >= FixedApp.all.count else { return nil }
        let weeks = SplitMix64.hash(seed, Salt.removal, index) % (100 / Plan.removalPercent)
        return 7 * (addedDay(index) / 7 + 1 + Int(weeks))
    }

    /// Whether app `index` is in the store on `day` (days after the first full): added by then, not yet removed.
    func isPresent(_ index: Int, atDay day: Int) -> Bool {
        guard index < apps + newAppsPerDay * day else { return false }
        guard let removal = removalDay(index) else { return true }
        return removal > day
    }
}

extension Salt {
    /// The week an app leaves the store.
    static let removal: UInt64 = 0x52_45_4D
}
