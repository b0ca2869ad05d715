import Testing

@testable import FlatCache

/// How message text becomes search terms: words, folding, scripts without spaces, emoji.
struct SearchTokenizerTests {
    private func terms(_ text: String) -> [String] { SearchTokenizer.tokens(in: text).map(\.term) }

    @Test func wordsAreLettersAndNumbersAndEverythingElseSplits() {
        #expect(terms("Hiking the trail, at 7:30!") == ["hiking", "the", "trail", "at", "7", "30"])
        #expect(terms("don't example.com/trail snake_case 3.14") == ["don", "t", "example", "com", "trail", "snake", "case", "3", "14"])
        #expect(terms("") == [])
        #expect(terms(" ,.;!? — … ") == [])
    }

    @Test func eachTokenKnowsItsPlaceAndWhereItStands() {
        let text = "Meet  me at Café-Zürich"
        let tokens = SearchTokenizer.tokens(in: text)
        #expect(tokens.map(\.position) == [0, 1, 2, 3, 4])
        #expect(tokens.map { String(text[$0.range]) } == ["Meet", "me", "at", "Café", "Zürich"])
    }

    @Test func caseDiacriticsAndWidthFoldAway() {
        #expect(terms("José CAFÉ Straße Øre Łódź ＴＯＫＹＯ") == ["jose", "cafe", "strasse", "ore", "lodz", "tokyo"])
        #expect(terms("ｶﾀｶﾅ") == terms("カタカナ"))
        // A letter and a combining accent read as the letter with the accent.
        #expect(terms("Jose\u{301} cafe\u{301}") == ["jose", "cafe"])
        #expect(terms("Ελληνικά Привет Ёлка") == ["ελληνικα", "привет", "елка"])
    }

    @Test func textTypedDecomposedMakesTheSameTermsAsComposed() {
        // Korean typed as jamo, kana with a separate voicing mark, half-width katakana with its own.
        #expect(terms("\u{1112}\u{1161}\u{11AB}\u{1100}\u{116E}\u{11A8}") == terms("한국"))
        #expect(terms("か\u{3099}き") == terms("がき"))
        #expect(terms("ｶﾞｽ") == terms("ガス"))
        #expect(terms("ｶﾞｽ") == ["ガス", "ス"])
        // A lone accent or skin tone is no term, and takes no place.
        #expect(terms("\u{301} ok") == ["ok"])
        #expect(SearchTokenizer.tokens(in: "🏽 ok").map(\.position) == [0])
    }

    @Test func scriptsWithSpacesAreWords() {
        #expect(terms("안녕하세요 세계") == ["안녕하세요", "세계"])
        // Vowel signs of the scripts of India are letters, not accents: they stay.
        #expect(terms("नमस्ते दुनिया") == ["नमस्ते", "दुनिया"])
        #expect(terms("مرحبا بالعالم") == ["مرحبا", "بالعالم"])
        #expect(terms("Tiếng Việt") == ["tieng", "viet"])
    }

    @Test func chineseAndJapaneseRunsArePairsThenTheirLastCharacter() {
        let text = "東京タワーに行く"
        let tokens = SearchTokenizer.tokens(in: text)
        #expect(tokens.map(\.term) == ["東京", "京タ", "タワ", "ワー", "ーに", "に行", "行く", "く"])
        #expect(tokens.map(\.position) == Array(0..<8))
        #expect(tokens.map { String(text[$0.range]) } == tokens.map(\.term))
        #expect(terms("猫") == ["猫"])
        // Japanese voicing marks stay: か and が are different letters.
        #expect(terms("がか") == ["がか", "か"])
    }

    @Test func aThaiMarkStaysWithItsLetter() {
        // ส วั ส ดี ค รั บ: the vowel and tone marks belong to the letter before them.
        #expect(terms("สวัสดีครับ") == ["สวั", "วัส", "สดี", "ดีค", "ครั", "รับ", "บ"])
    }

    @Test func mixedScriptsTakeConsecutivePlaces() {
        let tokens = SearchTokenizer.tokens(in: "Meet at 東京 station")
        #expect(tokens.map(\.term) == ["meet", "at", "東京", "京", "station"])
        #expect(tokens.map(\.position) == [0, 1, 2, 3, 4])
    }

    @Test func eachEmojiIsATokenWithoutItsSkinToneOrVariation() {
        let text = "👍🏽great ❤️ 🇫🇷🇩🇪 👩‍💻"
        let tokens = SearchTokenizer.tokens(in: text)
        #expect(tokens.map(\.term) == ["👍", "great", "❤", "🇫🇷", "🇩🇪", "👩💻"])
        #expect(tokens.map { String(text[$0.range]) } == ["👍🏽", "great", "❤️", "🇫🇷", "🇩🇪", "👩‍💻"])
        // The same emoji typed without a skin tone or variation selector is the same term.
        #expect(terms("👍 ❤") == ["👍", "❤"])
        // A flag of tags keeps them: Scotland is not England, nor a black flag.
        let scotland = "\u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}"
        let england = "\u{1F3F4}\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}"
        #expect(Set([terms(scotland), terms(england), terms("🏴")]).count == 3)
        // A keycap is an emoji of its own, not the digit.
        #expect(terms("1️⃣ #️⃣ *️⃣ 1").count == 4)
        #expect(Set(terms("1️⃣ #️⃣ *️⃣ 1")).count == 4)
    }

    @Test func punctuationOfUnspacedScriptsSplits() {
        #expect(terms("ジョン・スミス") == terms("ジョン スミス"))
        #expect(terms("ราคา฿100") == ["ราคา", "100"].flatMap { terms($0) })
    }
}
