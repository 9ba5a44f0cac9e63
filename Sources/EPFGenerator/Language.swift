/// A language of generated text: title words, description phrases and how words are joined.
struct Language: Sendable {
    /// The `application_detail.language_code`, e.g. "EN".
    let code: String
    /// Words titles are made of.
    let words: [[UInt8]]
    /// ASCII slug of each word (empty for words in non-Latin scripts).
    let slugs: [[UInt8]]
    /// Whole sentences descriptions are made of.
    let phrases: [String]
    /// Whether words are separated by spaces (not for Japanese and Chinese).
    let spaced: Bool
    /// Company name suffixes.
    let companySuffixes: [String]
    /// Out of 100 apps, how many have this primary language.
    let weight: Int

    init(_ code: String, weight: Int, spaced: Bool = true, words: [String], phrases: [String], companies: [String]) {
        self.code = code
        self.weight = weight
        self.spaced = spaced
        self.words = words.map { Array($0.utf8) }
        slugs = words.map { Language.slug($0) }
        self.phrases = phrases
        companySuffixes = companies
    }

    /// Lower-case ASCII letters and digits of `word`, with Latin diacritics folded.
    static func slug(_ word: String) -> [UInt8] {
        let folds: [Character: String] = [
            "ß": "ss", "œ": "oe", "æ": "ae", "ø": "o", "å": "a", "ä": "a", "ö": "o", "ü": "u", "à": "a", "á": "a",
            "â": "a", "é": "e", "è": "e", "ê": "e", "ë": "e", "í": "i", "î": "i", "ï": "i", "ó": "o", "ô": "o",
            "ú": "u", "û": "u", "ù": "u", "ñ": "n", "ç": "c",
        ]
        var result: [UInt8] = []
        for character in word.lowercased() {
            if let folded = folds[character] {
                result += Array(folded.utf8)
            } else if character.isASCII, let ascii = character.asciiValue,
                      (ascii >= 97 && ascii <= 122) || (ascii >= 48 && ascii <= 57) {
                result.append(ascii)
            }
        }
        return result
    }

    /// Every language the generator writes, English first.
    static let all: [Language] = [
        Language("EN", weight: 55, words: [
            "Photo", "Editor", "Weather", "Puzzle", "Quest", "Fitness", "Tracker", "Budget", "Music", "Maker",
            "Chess", "Racing", "Garden", "Recipe", "Notes", "Scanner", "Travel", "Guide", "Battle", "Kingdom",
            "Word", "Coach", "Sleep", "Timer", "Radio", "Camera", "Map", "Money", "Pocket", "Daily", "Super",
            "Smart", "Magic", "Cloud", "Pixel", "Ninja", "Dragon", "Space", "Ocean", "City", "Zen", "Habit",
        ], phrases: [
            "The best way to organise your day.", "Track your progress with beautiful charts and widgets.",
            "Works offline \u{2014} no account needed.", "Share photos with friends & family in one tap.",
            "Now with dark mode, iCloud sync and Apple Watch support.", "Over 10,000 puzzles, from easy to fiendish!",
            "Subscriptions renew automatically unless cancelled at least 24 hours before the end of the period.",
            "Questions? Write to us at support@example.com.", "NEW: widgets for your Home Screen \u{1F389}",
            "Fast, private and free of ads.", "\u{2022} Unlimited projects\n\u{2022} Export to PDF",
            "\u{201C}Simply the best app of its kind.\u{201D} \u{2605}\u{2605}\u{2605}\u{2605}\u{2605}",
            "Terms of use: https://www.example.com/terms", "Made with \u{2764}\u{FE0F} in Portland.",
        ], companies: ["Inc.", "LLC", "Ltd", "Studios", "Labs", "Games", "Software"]),
        Language("DE", weight: 7, words: [
            "Über", "Fußball", "Wetter", "Rätsel", "Küche", "Bücher", "Straße", "Spiel", "Reise", "Schön",
            "Grün", "Bär", "Lösung", "Zeitung", "Rechner", "Größe", "Märchen", "Brötchen", "Bahn", "Stadtplan",
        ], phrases: [
            "Über 500 Rätsel für die ganze Familie.", "Die schönste Wetter-App für Straßen, Städte und Berge.",
            "Größere Schrift, bessere Übersicht \u{2013} jetzt mit Widgets.", "Fußball-Ergebnisse in Echtzeit.",
            "Datenschutz ist uns wichtig: keine Anmeldung nötig.", "Für iPhone, iPad und Apple Watch optimiert.",
            "Fragen? Schreib uns an hilfe@example.de.",
        ], companies: ["GmbH", "AG", "UG (haftungsbeschränkt)", "GmbH & Co. KG"]),
        Language("FR", weight: 7, words: [
            "Café", "Crème", "Pâtisserie", "Météo", "Élève", "Jeu", "Château", "Forêt", "Cuisine", "Noël",
            "Garçon", "Bibliothèque", "Numérique", "Écran", "Fête", "Hôtel", "Théâtre", "Cœur", "Olé",
        ], phrases: [
            "Café, crème et pâtisserie : toutes les recettes de grand-mère.",
            "Une météo précise à l\u{2019}heure près, même hors ligne.", "Élu meilleur jeu de l\u{2019}année !",
            "Synchronisation iCloud et thème sombre inclus.", "Où que vous soyez, gardez vos notes à portée de main.",
            "« Indispensable » \u{2014} Le Monde numérique",
        ], companies: ["SAS", "SARL", "S.A.", "Studio"]),
        Language("ES", weight: 7, words: [
            "Fútbol", "Música", "Niño", "Año", "Cocina", "Viaje", "Camión", "Mañana", "Señal", "Fácil",
            "Árbol", "Canción", "Jardín", "Lección", "Diseño", "Olé",
        ], phrases: [
            "El mejor juego de fútbol del año.", "Recetas fáciles para cada día de la semana, ¡con vídeo!",
            "Música sin anuncios y sin conexión.", "¿Preguntas? Escríbenos a soporte@example.com.",
            "Diseñado para niños y niñas de 3 a 8 años.",
        ], companies: ["S.L.", "S.A.", "Estudio"]),
        Language("JA", weight: 8, spaced: false, words: [
            "日本語の", "ゲーム", "天気", "写真", "パズル", "料理", "音楽", "地図", "辞書", "カメラ", "忍者", "桜",
            "家計簿", "漫画", "将棋", "ラジオ",
        ], phrases: [
            "日本語のゲームです。", "毎日の天気を分かりやすく表示します。", "写真を美しく編集できます。",
            "広告なしで快適にご利用いただけます。", "新機能：ウィジェットに対応しました！",
            "iPhoneとiPadの両方に対応しています。", "お問い合わせはsupport@example.jpまで。",
        ], companies: ["株式会社", "合同会社"]),
        Language("ZH", weight: 8, spaced: false, words: [
            "中文", "应用", "天气", "相机", "音乐", "游戏", "地图", "新闻", "购物", "学习", "健康", "视频", "小说",
            "计算器",
        ], phrases: [
            "这是一个中文应用。", "每天学习十分钟，轻松掌握新单词。", "支持 iCloud 同步和深色模式。",
            "免费下载，无广告。", "全新设计，更快更流畅！", "𠀋𡈽𡌛 生僻字也能正确显示。",
        ], companies: ["有限公司", "科技有限公司"]),
        Language("AR", weight: 3, words: [
            "الطقس", "تطبيق", "ألعاب", "موسيقى", "صور", "أخبار", "القرآن", "خريطة", "مطبخ", "كتب",
        ], phrases: [
            "تطبيق الطقس الأكثر دقة في المنطقة.", "استمع إلى القرآن الكريم بدون إنترنت.",
            "صمم خصيصاً لجهاز iPhone و iPad.", "مجاني بالكامل وبدون إعلانات!", "شارك صورك مع الأصدقاء والعائلة.",
        ], companies: ["ش.م.م", "للبرمجيات"]),
        Language("RU", weight: 3, words: [
            "Погода", "Плюс", "Игра", "Музыка", "Фото", "Новости", "Карта", "Шахматы", "Книги", "Калькулятор",
            "Такси",
        ], phrases: [
            "Самый точный прогноз погоды.", "Играйте в шахматы с друзьями онлайн.",
            "Новости, музыка и фото в одном приложении.", "Без рекламы и регистрации.",
            "Поддержка тёмной темы и виджетов.",
        ], companies: ["ООО", "АО"]),
        Language("KO", weight: 2, words: [
            "날씨", "게임", "음악", "사진", "지도", "뉴스", "쇼핑", "요리", "퍼즐",
        ], phrases: [
            "가장 정확한 날씨 앱입니다.", "친구와 함께 게임을 즐기세요!", "광고 없이 음악을 들을 수 있습니다.",
            "아이폰과 아이패드를 모두 지원합니다.",
        ], companies: ["주식회사", "(주)"]),
    ]

    /// Title decorations, including multi-scalar emoji (ZWJ family, flag, variation selector).
    static let emoji: [[UInt8]] = [
        "🚀", "🎮", "⭐️", "🔥", "📷", "🎵", "☀️", "🌈", "👨‍👩‍👧", "🇯🇵", "🐱", "💰",
    ].map { Array($0.utf8) }

    /// Title suffixes in any language.
    static let titleSuffixes: [[UInt8]] = [
        " Lite", " Pro", " HD", " Plus", " 2", " 3D", " Free", " Deluxe", " for iPad", " \u{2013} Daily Planner",
        ": Match 3", " (Classic)",
    ].map { Array($0.utf8) }

    /// Picks a primary language index by weight from a uniform value in 0..<100.
    static func pick(_ roll: Int) -> Int {
        var remaining = roll
        for (index, language) in all.enumerated() {
            if remaining < language.weight { return index }
            remaining -= language.weight
        }
        return 0
    }
}

/// A long run of text per language that descriptions and release notes are cut from: one `memcpy` per value.
///
/// Built once from the phrases with a fixed seed (independent of the feed seed), with paragraphs separated by
/// `\n`, `\n\n`, `\r\n` and `\r\n\r\n`, bullets and emoji. Never contains 0x01 or 0x02.
final class Corpus: Sendable {
    /// The text bytes.
    let bytes: [UInt8]
    /// Offsets where sentences start.
    let starts: [Int]

    static let size = 200_000

    init(language: Language, salt: Int) {
        var generator = SplitMix64(0xC0FF_EE00, 0x77, salt)
        var text: [UInt8] = []
        var starts: [Int] = []
        text.reserveCapacity(Corpus.size + 512)
        let breaks: [[UInt8]] = [[32], [32], [32], [10], [10, 10], [13, 10], [13, 10, 13, 10]]
        let phrases = language.phrases.map { Array($0.utf8) }
        while text.count < Corpus.size {
            starts.append(text.count)
            text += phrases[generator.below(phrases.count)]
            if generator.chance(3) { text += Language.emoji[generator.below(Language.emoji.count)] }
            text += breaks[generator.below(breaks.count)]
        }
        bytes = text
        self.starts = starts
    }

    /// One corpus per language, in `Language.all` order.
    static let all: [Corpus] = Language.all.enumerated().map { Corpus(language: $0.element, salt: $0.offset) }

    /// Appends about `length` bytes starting at a sentence, cut at a character boundary, without a trailing
    /// line break or space.
    func append(to writer: RecordWriter, length: Int, using generator: inout SplitMix64) {
        let wanted = max(1, min(length, bytes.count - 1))
        // Binary search for the last sentence start that leaves room for `wanted` bytes.
        var low = 0
        var high = starts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if starts[middle] + wanted <= bytes.count { low = middle } else { high = middle - 1 }
        }
        let start = starts[generator.below(low + 1)]
        var end = start + wanted
        // Back off continuation bytes so the cut never splits a UTF-8 sequence.
        while end > start + 1, bytes[end] & 0xC0 == 0x80 { end -= 1 }
        while end > start + 1, bytes[end - 1] == 10 || bytes[end - 1] == 13 || bytes[end - 1] == 32 { end -= 1 }
        bytes.withUnsafeBytes { raw in
            writer.raw(UnsafeRawBufferPointer(rebasing: raw[start..<end]))
        }
    }
}
