import EPFTestSupport

/// One dimension of `--storefronts` / `--languages` as an import gives it.
enum GivenSelection<Value: Equatable>: Equatable {
    case all
    case only(Value)

    var kept: Value? {
        if case .only(let value) = self { return value }
        return nil
    }
}

/// What one export's `epf import` is given of `--storefronts` and `--languages`; nil where the option is left out
/// (the database's selection stays).
struct SelectionRequest {
    var storefronts: GivenSelection<Set<Int64>>?
    /// Lower-case codes, as docs/import.md compares them.
    var languages: GivenSelection<Set<String>>?
    /// Whether `--history` records prices, and ranks; both nil when the option is not given, both set when it is
    /// (`--history prices,ranks`, `prices`, `ranks` or `none`).
    var history: Bool?
    var ranks: Bool?
    /// The options as written on the command line.
    var arguments: [String] = []
}

/// A seeded planner of the selections a sequence's imports give: a third of the sequences keep some storefronts,
/// a third some languages. The first import gives them; a later one gives them again or leaves them out (the
/// database remembers), and now and then asks for another selection, which must be refused once the database
/// holds tables. Codes are written as EPF ids, ISO alpha-2 or alpha-3, in any case.
///
/// Its own generator (from the sequence's seed), so that adding it left every sequence's exports as they were.
struct SelectionPlanner {
    private var random: SeededGenerator
    /// The rank history's plan, drawn apart so that the other options stayed as they were when it came.
    private var rankRandom: SeededGenerator

    /// The matrix's storefronts (`ExportPlanner.storefronts`) with their ISO codes.
    static let codes: [Int64: (String, String)] = [
        143441: ("us", "usa"), 143444: ("gb", "gbr"), 143462: ("jp", "jpn"), 143455: ("ca", "can"),
        143460: ("au", "aus"),
    ]

    init(seed: UInt64) {
        random = SeededGenerator(seed: seed ^ 0x5E1E_C7ED_0000_0000)
        rankRandom = SeededGenerator(seed: seed ^ 0x4A4B_5000_0000_0000)
    }

    /// One request per export of a sequence of `count`.
    mutating func requests(count: Int) -> [SelectionRequest] {
        let storefronts = chance(0.33) ? subset(ExportPlanner.storefronts) : nil
        let languages = chance(0.33) ? Set(subset(ExportPlanner.languages).map { $0.lowercased() }) : nil
        // Two sequences of three record price history: from the first import, or from a later one (over a
        // database that existed before), sometimes turned off and on again.
        let historyFrom = chance(0.67) ? (chance(0.6) ? 0 : random.below(max(1, count))) : count
        var recording = false
        // Two sequences of three record ranks (`--history ranks`, with prices when those are on): from the first import
        // or a later one, sometimes turned off and on again.
        let ranksFrom = rankRandom.below(3) < 2 ? (rankRandom.below(10) < 6 ? 0 : rankRandom.below(max(1, count)))
            : count
        var ranking = false
        return (0..<count).map { number in
            var request = SelectionRequest()
            if number == historyFrom {
                request.history = true
                recording = true
            } else if number > historyFrom && chance(0.12) {
                recording.toggle()
                request.history = recording
            } else if recording && chance(0.3) {
                request.history = true
            }
            if number == ranksFrom {
                request.ranks = true
                ranking = true
            } else if number > ranksFrom && rankRandom.below(100) < 12 {
                ranking.toggle()
                request.ranks = ranking
            } else if ranking && rankRandom.below(100) < 30 {
                request.ranks = true
            }
            // `--history` names both kinds (the one not asked about as it is drawn): it adds to what the database
            // records, and `none` stops both (the model settles it).
            if request.history != nil || request.ranks != nil {
                request.history = request.history ?? recording
                request.ranks = request.ranks ?? ranking
            }
            if number > 0 && chance(0.08) {
                // Another selection than the database's: refused unless the database holds no table yet.
                if chance(0.5) {
                    request.storefronts = chance(0.3) ? .all : .only(subset(ExportPlanner.storefronts))
                } else {
                    request.languages = chance(0.3)
                        ? .all : .only(Set(subset(ExportPlanner.languages).map { $0.lowercased() }))
                }
            } else if number == 0 || chance(0.5) {
                request.storefronts = storefronts.map { .only($0) }
                request.languages = languages.map { .only($0) }
            }
            request.arguments = arguments(request)
            return request
        }
    }

    private mutating func arguments(_ request: SelectionRequest) -> [String] {
        var arguments: [String] = []
        switch request.storefronts {
        case .all?:
            arguments += ["--storefronts", "all"]
        case .only(let ids)?:
            let written = ids.sorted().map { id -> String in
                let (alpha2, alpha3) = Self.codes[id] ?? ("\(id)", "\(id)")
                switch random.below(4) {
                case 0: return "\(id)"
                case 1: return alpha2
                case 2: return alpha3.uppercased()
                default: return alpha2.uppercased()
                }
            }
            arguments += ["--storefronts", written.joined(separator: ",")]
        case nil:
            break
        }
        switch request.languages {
        case .all?:
            arguments += ["--languages", "ALL"]
        case .only(let codes)?:
            arguments += ["--languages", codes.sorted().map { chance(0.5) ? $0.uppercased() : $0 }
                .joined(separator: ",")]
        case nil:
            break
        }
        if let history = request.history, let ranks = request.ranks {
            let words = (history ? ["prices"] : []) + (ranks ? ["ranks"] : [])
            arguments += ["--history", words.isEmpty ? "none" : words.joined(separator: ",")]
        }
        return arguments
    }

    private mutating func subset<T: Hashable>(_ values: [T]) -> Set<T> {
        var pool = values
        var picked: Set<T> = []
        for _ in 0..<(1 + random.below(3)) { picked.insert(pool.remove(at: random.below(pool.count))) }
        return picked
    }

    private mutating func chance(_ probability: Double) -> Bool {
        Double(random.below(1_000_000)) < probability * 1_000_000
    }
}
