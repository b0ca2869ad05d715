import Foundation

/// Chat messages' text for the search rows, made from a seed: the same
/// text on every run and for every system.
///
/// The benchmark's usual text (``Workload``) draws 49 words uniformly and
/// mixes six scripts in every message: no word is rare, every message has
/// Chinese in it. Search cares about what real chats have instead:
/// - words with Zipf-like frequencies (a few everywhere, most rare): 330
///   English words and, for one word in fourteen, a tail of 3,000 made-up
///   names and jargon, a twentieth of them accented;
/// - phrases a chat repeats ("see you there", "let me know");
/// - accented words (café, José, Ødegaard) and other languages: of 1,000
///   messages, 720 English, 80 Spanish, French, German or Portuguese, 50
///   Russian, 60 Japanese, 50 Chinese, 20 Thai and 20 emoji only;
/// - emoji after one message in seven; now and then a Japanese or Chinese
///   place name in an English message;
/// - lengths of chat: most messages a few words, a few long ones
///   (about 9 words on average, at most 60).
package struct SearchText {
    private var random: SplitMix64
    private let english: [String]
    private let tail: [String]
    private let englishRanks: ZipfSampler
    private let tailRanks: ZipfSampler
    private let phraseRanks: ZipfSampler
    private let europeanRanks: ZipfSampler
    private let russianRanks: ZipfSampler
    private let japaneseRanks: ZipfSampler
    private let chineseRanks: ZipfSampler
    private let thaiRanks: ZipfSampler
    private let emojiRanks: ZipfSampler

    /// The made-up words of the tail, most frequent first (the same for every seed).
    package static let tailWords: [String] = makeTail(count: 3_000)

    package init(seed: UInt64 = 0x5EA2_C4E5) {
        random = SplitMix64(seed: seed)
        english = Self.unique(SearchVocabulary.english)
        tail = Self.tailWords
        englishRanks = ZipfSampler(count: english.count)
        tailRanks = ZipfSampler(count: tail.count)
        phraseRanks = ZipfSampler(count: SearchVocabulary.englishPhrases.count)
        europeanRanks = ZipfSampler(count: SearchVocabulary.european.count)
        russianRanks = ZipfSampler(count: SearchVocabulary.russian.count)
        japaneseRanks = ZipfSampler(count: SearchVocabulary.japanese.count)
        chineseRanks = ZipfSampler(count: SearchVocabulary.chinese.count)
        thaiRanks = ZipfSampler(count: SearchVocabulary.thai.count)
        emojiRanks = ZipfSampler(count: SearchVocabulary.emoji.count)
    }

    /// The next message's text.
    package mutating func next() -> String {
        let kind = random.next(below: 1_000)
        var text: String
        switch kind {
        case ..<720: text = englishMessage()
        case ..<800: text = spaced(SearchVocabulary.european, europeanRanks, mixingEnglish: 0.3)
        case ..<850: text = spaced(SearchVocabulary.russian, russianRanks, mixingEnglish: 0.05)
        case ..<910: text = unspaced(SearchVocabulary.japanese, japaneseRanks, comma: "、", stops: ["。", "！"])
        case ..<960: text = unspaced(SearchVocabulary.chinese, chineseRanks, comma: "，", stops: ["。", "！"])
        case ..<980: text = unspaced(SearchVocabulary.thai, thaiRanks, comma: " ", stops: [""])
        default: return (0..<(1 + random.next(below: 3))).map { _ in emoji() }.joined()
        }
        if random.happens(0.15) { text += " " + (0..<(1 + random.next(below: 2))).map { _ in emoji() }.joined() }
        return text
    }

    /// A chat message's word count: mostly a few, now and then many (mean about 9).
    private mutating func wordCount() -> Int {
        min(60, 1 + Int(-log(1 - random.nextUnit()) * 8))
    }

    private mutating func emoji() -> String {
        SearchVocabulary.emoji[emojiRanks.next(&random)]
    }

    private mutating func englishMessage() -> String {
        let count = wordCount()
        var words = [String]()
        while words.count < count {
            if random.happens(0.12) {
                words += SearchVocabulary.englishPhrases[phraseRanks.next(&random)].split(separator: " ").map(String.init)
            } else if random.happens(0.07) {
                words.append(tail[tailRanks.next(&random)])
            } else if random.happens(0.01) {
                words.append(["東京", "新宿", "北京", "上海", "渋谷"][random.next(below: 5)])
            } else {
                words.append(english[englishRanks.next(&random)])
            }
            if random.happens(0.03) { words.append(emoji()) }
        }
        return sentence(words)
    }

    /// Words from `vocabulary` with spaces between them, some English among them.
    private mutating func spaced(_ vocabulary: [String], _ ranks: ZipfSampler, mixingEnglish: Double) -> String {
        let count = wordCount()
        var words = [String]()
        while words.count < count {
            words.append(random.happens(mixingEnglish) ? english[englishRanks.next(&random)] : vocabulary[ranks.next(&random)])
        }
        return sentence(words)
    }

    /// `words` as a typed sentence: a capital now and then, commas, an ending.
    private mutating func sentence(_ words: [String]) -> String {
        var text = ""
        for (index, word) in words.enumerated() {
            if index > 0 { text += random.happens(0.05) ? ", " : " " }
            text += index == 0 && random.happens(0.5) ? word.prefix(1).uppercased() + word.dropFirst() : word
        }
        let ending = random.next(below: 100)
        return text + (ending < 20 ? "." : ending < 35 ? "?" : ending < 45 ? "!" : "")
    }

    /// Words from `vocabulary` one after another, as Japanese, Chinese and Thai are written.
    private mutating func unspaced(_ vocabulary: [String], _ ranks: ZipfSampler, comma: String, stops: [String]) -> String {
        let count = min(14, 1 + Int(-log(1 - random.nextUnit()) * 3))
        var text = ""
        for index in 0..<count {
            if index > 0, random.happens(0.12) { text += comma }
            text += vocabulary[ranks.next(&random)]
        }
        return text + (random.happens(0.5) ? stops[random.next(below: stops.count)] : "")
    }

    /// `words` without repeats, in their first order.
    private static func unique(_ words: [String]) -> [String] {
        var seen = Set<String>()
        return words.filter { seen.insert($0).inserted }
    }

    /// Pronounceable made-up words (2 or 3 syllables), a twentieth with an accented vowel.
    private static func makeTail(count: Int) -> [String] {
        var random = SplitMix64(seed: 0x7A11)
        let onsets = ["b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "st", "tr", "sh", "ch", "kl"]
        let vowels = ["a", "e", "i", "o", "u", "ai", "ou"]
        let accented = ["é", "á", "ö", "ü", "ñ", "è", "ø"]
        let codas = ["", "", "", "n", "r", "s", "l", "k"]
        var words = [String]()
        var seen = Set(SearchVocabulary.english)
        while words.count < count {
            var word = ""
            for _ in 0..<(2 + random.next(below: 2)) {
                word += onsets[random.next(below: onsets.count)] + vowels[random.next(below: vowels.count)]
            }
            word += codas[random.next(below: codas.count)]
            if random.happens(0.05), let vowel = word.lastIndex(where: { "aeiou".contains($0) }) {
                word.replaceSubrange(vowel...vowel, with: accented[random.next(below: accented.count)])
            }
            if seen.insert(word).inserted { words.append(word) }
        }
        return words
    }
}
