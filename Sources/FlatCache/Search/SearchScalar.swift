// What each Unicode scalar is to search: part of a word, of a run in a script
// written without spaces, of an emoji, or a separator. Unicode's general
// categories decide, as SQLite FTS5's unicode61 tokenizer does, so that words
// split where an app developer expects on every platform (Foundation's word
// enumeration does not exist on Linux).

extension Unicode.Scalar {
    /// How search reads this scalar.
    enum SearchClass: Equatable {
        /// A letter, a number or a combining mark: part of a word.
        case word
        /// A scalar of a script written without spaces (Chinese, Japanese, Thai, Lao, Khmer, Myanmar).
        case unspaced
        /// A scalar that starts an emoji.
        case emoji
        /// Zero-width joiners, variation selectors and the like: they continue whatever they follow, and are not part of any term.
        case joiner
        /// Anything else: punctuation, spaces, symbols. It ends the token before it.
        case separator
    }

    /// How search reads this scalar.
    var searchClass: SearchClass {
        let value = self.value
        if value < 0x80 {
            // ASCII: letters and digits, nothing else (an apostrophe, a period and an underscore split, as in unicode61).
            switch value {
            case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return .word
            default: return .separator
            }
        }
        if value < 0x10000 { return Self.basicPlane[Int(value)].searchClass }
        if (0x1F000..<0x20000).contains(value) { return Self.emojiBlocks[Int(value - 0x1F000)].searchClass }
        return SearchTraits(self).searchClass
    }

    /// Whether this is a combining mark (general category M).
    var isMark: Bool {
        value < 0x10000 ? Self.basicPlane[Int(value)].isMark : SearchTraits(self).isMark
    }

    /// The traits of U+1F000 to U+1FFFF, where most emoji are, looked up once per process.
    private static let emojiBlocks: [SearchTraits] = (0x1F000..<0x20000).map { value in
        Unicode.Scalar(UInt32(value)).map(SearchTraits.init) ?? SearchTraits(searchClass: .separator, isMark: false)
    }

    /// The traits of every scalar of the Basic Multilingual Plane, looked up once per process, the
    /// first time search reads text (with ``SearchFolding``'s table, about 20 ms here): reading
    /// Unicode's properties scalar by scalar was most of the time spent reading a message.
    private static let basicPlane: [SearchTraits] = (0..<0x10000).map { value in
        Unicode.Scalar(UInt32(value)).map(SearchTraits.init) ?? SearchTraits(searchClass: .separator, isMark: false)
    }

    /// Whether this scalar continues an emoji it follows: a skin tone, a tag (of a flag such as
    /// 🏴󠁧󠁢󠁳󠁣󠁴󠁿), or a keycap's frame. (Joiners and variation selectors continue any token; see ``SearchClass/joiner``.)
    var continuesEmoji: Bool {
        isSkinTone || (0xE0020...0xE007F).contains(value) || value == 0x20E3
    }

    /// Whether this is one of the five skin tones, the only emoji modifiers.
    var isSkinTone: Bool { (0x1F3FB...0x1F3FF).contains(value) }

    /// Whether this starts a keycap (1️⃣, #️⃣, *️⃣) when U+20E3 follows it.
    var startsKeycap: Bool { (0x30...0x39).contains(value) || value == 0x23 || value == 0x2A }

    /// Whether this is a regional indicator, two of which make a flag.
    var isRegionalIndicator: Bool { (0x1F1E6...0x1F1FF).contains(value) }

    /// Scalars that glue others together without being text themselves: the zero-width
    /// (non-)joiner and variation selectors.
    fileprivate var isJoiner: Bool {
        switch value {
        case 0x200C, 0x200D, 0xFE00...0xFE0F, 0xE0100...0xE01EF: return true
        default: return false
        }
    }

    /// Scripts written without spaces between words: their runs are indexed as overlapping
    /// pairs of characters, since no dictionary tells where a word ends.
    fileprivate var isUnspaced: Bool {
        switch value {
        case 0x0E00...0x0EFF,  // Thai, Lao
            0x1000...0x109F, 0xA9E0...0xA9FF, 0xAA60...0xAA7F,  // Myanmar
            0x1780...0x17FF, 0x19E0...0x19FF,  // Khmer
            0x2E80...0x2FDF, 0x3005...0x3007, 0x3021...0x3029, 0x3038...0x303B,  // CJK radicals, iteration marks, Hangzhou numerals
            0x3041...0x309F, 0x30A0...0x30FF, 0x31F0...0x31FF, 0xFF66...0xFF9F,  // Hiragana, Katakana (and half-width)
            0x3400...0x4DBF, 0x4E00...0x9FFF, 0xF900...0xFAFF,  // CJK ideographs
            0x1AFF0...0x1B16F,  // Kana extended-B, supplement and extended-A
            0x20000...0x323AF:  // CJK ideographs, extensions B to H
            return true
        default:
            return false
        }
    }
}

/// What search needs to know of a scalar, from its Unicode properties.
private struct SearchTraits {
    var searchClass: Unicode.Scalar.SearchClass
    var isMark: Bool

    init(searchClass: Unicode.Scalar.SearchClass, isMark: Bool) {
        (self.searchClass, self.isMark) = (searchClass, isMark)
    }

    init(_ scalar: Unicode.Scalar) {
        let category = scalar.properties.generalCategory
        switch category {
        case .nonspacingMark, .spacingMark, .enclosingMark: isMark = true
        // Half-width katakana's voicing marks are letters, but join the kana before them as marks do.
        default: isMark = scalar.value == 0xFF9E || scalar.value == 0xFF9F
        }
        let isText: Bool
        switch category {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
            .decimalNumber, .letterNumber, .otherNumber, .nonspacingMark, .spacingMark, .enclosingMark:
            isText = true
        default:
            isText = false
        }
        if scalar.isUnspaced {
            // Punctuation and symbols of those scripts (・, ฿, ๏) split, as anywhere else.
            searchClass = isText ? .unspaced : .separator
        } else if scalar.isJoiner {
            searchClass = .joiner
        } else if isText {
            searchClass = .word
        } else {
            searchClass = scalar.properties.isEmoji ? .emoji : .separator
        }
    }
}
