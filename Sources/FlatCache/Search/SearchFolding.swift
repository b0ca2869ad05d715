import Foundation

/// The form a word is indexed and looked up under, so that "José", "JOSE" and
/// "jose" are one word, and "Ｔｏｋｙｏ" is "tokyo".
///
/// Each scalar folds on its own, from tables Foundation's
/// `folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive])`
/// (then the standard library's `lowercased()`) fills once per process: calling
/// Foundation per word cost more than the rest of reading a message. A combining
/// accent (U+0300–U+036F) is dropped, so that a letter followed by one folds as
/// the letter with it does; so are Hebrew points and Arabic vowel signs. Every term ends in Unicode's composed form (NFC):
/// lookups compare bytes, so text typed decomposed (as macOS file names are, or
/// Korean jamo) makes the same term as the same text composed.
enum SearchFolding {
    /// The word the UTF-8 `bytes` hold in `range`, in lower case, without diacritics ("é" is "e",
    /// "ß" is "ss", "ø" is "o"), full-width and half-width forms made plain, joiners and
    /// variation selectors dropped, composed. Empty when nothing is left (a lone accent).
    ///
    /// - Parameter keepingDiacritics: keep every mark and fold width alone: for scripts
    ///   written without spaces, where a mark is part of the letter (Thai vowels and tone
    ///   marks, Japanese voicing), and which have no case.
    static func fold(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, keepingDiacritics: Bool = false) -> String {
        if !bytes[range].contains(where: { $0 >= 0x80 }) {
            // ASCII, most words of most chats: lower case by byte.
            return String(unsafeUninitializedCapacity: range.count) { out in
                for (offset, byte) in bytes[range].enumerated() { out[offset] = (0x41...0x5A).contains(byte) ? byte | 0x20 : byte }
                return range.count
            }
        }
        var folded = String.UnicodeScalarView()
        var index = range.lowerBound
        while index < range.upperBound {
            let scalar = SearchBytes.scalar(in: bytes, at: &index)
            let value = scalar.value
            if value < 0x80 {
                folded.append((0x41...0x5A).contains(value) ? Unicode.Scalar(UInt8(value) | 0x20) : scalar)
            } else if scalar.searchClass == .joiner || (!keepingDiacritics && scalar.isDroppedMark) {
                continue
            } else if let mapped = Self.mapped(scalar, keepingDiacritics: keepingDiacritics) {
                folded.append(contentsOf: mapped.unicodeScalars)
            } else {
                folded.append(scalar)
            }
        }
        return composed(String(folded))
    }

    /// The emoji the UTF-8 `bytes` hold in `range` without its skin tone, joiners and
    /// variation selectors, so that "👍🏽" is found as "👍" and "❤️" as "❤" (a flag's tags,
    /// and a keycap's digit and frame, stay).
    static func foldEmoji(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        var scalars = String.UnicodeScalarView()
        var index = range.lowerBound
        while index < range.upperBound {
            let scalar = SearchBytes.scalar(in: bytes, at: &index)
            if scalar.searchClass != .joiner && !scalar.isSkinTone { scalars.append(scalar) }
        }
        return String(scalars)
    }

    /// `text` in Unicode's composed form (NFC), from the standard library's normalizer, when it may
    /// not be in it already.
    private static func composed(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: \.mayChangeInNFC) else { return text }
        return String(decoding: text._nfcCodeUnits, as: UTF8.self)
    }

    /// What `scalar` folds to, when that is not itself.
    private static func mapped(_ scalar: Unicode.Scalar, keepingDiacritics: Bool) -> String? {
        let value = scalar.value
        if (formsStart..<formsEnd).contains(value) {
            let forms = formsTable[Int(value - formsStart)]
            return keepingDiacritics ? forms.width : forms.full
        }
        // Scripts without spaces have no case or accents to fold, past the forms above.
        if keepingDiacritics { return nil }
        if value < tableEnd { return table[Int(value - 0x80)] }
        if (extendedStart..<extendedEnd).contains(value) { return extendedTable[Int(value - extendedStart)] }
        // The cased scripts past the table (Deseret, Osage, Adlam and the like): rare enough to ask Foundation.
        if (0x10400...0x1E95F).contains(value) { return foundationFold(scalar) }
        return nil
    }

    /// Scalars from U+0080 below this are folded through ``table``; they hold every cased script but a few rare ones.
    private static let tableEnd: UInt32 = 0x3000

    /// What each scalar from U+0080 to ``tableEnd`` folds to, `nil` where it folds to itself.
    private static let table: [String?] = (UInt32(0x80)..<tableEnd).map { value in
        Unicode.Scalar(value).flatMap(foundationFold)
    }

    /// Cased letters past ``tableEnd`` in the Basic Multilingual Plane: Cyrillic Extended-B,
    /// Latin Extended-D and -E, Cherokee's small letters (U+A640 to U+ABFF).
    private static let (extendedStart, extendedEnd): (UInt32, UInt32) = (0xA640, 0xAC00)

    /// What each scalar from ``extendedStart`` to ``extendedEnd`` folds to, `nil` where it folds to itself.
    private static let extendedTable: [String?] = (extendedStart..<extendedEnd).map { value in
        Unicode.Scalar(value).flatMap(foundationFold)
    }

    /// Ligatures, and full-width and half-width forms: U+FB00 to U+FFEF.
    private static let (formsStart, formsEnd): (UInt32, UInt32) = (0xFB00, 0xFFF0)

    /// What each scalar of the forms block folds to: fully (`full`), and in width alone (`width`,
    /// for scripts whose marks stay); `nil` where it folds to itself.
    private static let formsTable: [(full: String?, width: String?)] = (formsStart..<formsEnd).map { value in
        guard let scalar = Unicode.Scalar(value) else { return (nil, nil) }
        let width = String(scalar).folding(options: [.caseInsensitive, .widthInsensitive], locale: nil)
        return (foundationFold(scalar), width == String(scalar) ? nil : width)
    }

    /// Foundation's fold of `scalar`, in lower case, with letters that have a stroke or bar as their
    /// base letter (they have no canonical decomposition, so Foundation keeps them); `nil` when that is `scalar` itself.
    private static func foundationFold(_ scalar: Unicode.Scalar) -> String? {
        let text = String(scalar)
        // Foundation's case tables are older than the standard library's: lower case again.
        let folded = text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil).lowercased()
        let result = String(String.UnicodeScalarView(folded.unicodeScalars.map { strokes[$0] ?? $0 }))
        return result == text ? nil : result
    }

    /// Letters with a stroke or bar, which have no canonical decomposition, and their base letter (lower case).
    private static let strokes: [Unicode.Scalar: Unicode.Scalar] = [
        "ø": "o", "ł": "l", "đ": "d", "ħ": "h", "ŧ": "t", "ƀ": "b", "ɨ": "i", "ı": "i", "ƶ": "z", "ǥ": "g",
    ]
}

extension Unicode.Scalar {
    /// Whether folding drops this mark: Latin, Greek and Cyrillic accents (U+0300–U+036F), Hebrew
    /// points and cantillation, and Arabic vowel signs and Quranic marks, which readers leave out
    /// when they type ("محمد" finds "مُحَمَّد", "שלום" finds "שָׁלוֹם").
    fileprivate var isDroppedMark: Bool {
        switch value {
        case 0x0300...0x036F: return true
        case 0x0591...0x05C7, 0x0610...0x061A, 0x064B...0x065F, 0x0670, 0x06D6...0x06ED: return isMark
        default: return false
        }
    }

    /// Whether text holding this scalar may read otherwise in NFC: `false` only for letters that
    /// are composed already and never the second half of a composition, in the scripts most
    /// chats use (Latin, Greek, Cyrillic, Armenian, Hebrew and Arabic letters, Thai, Lao, Khmer,
    /// Devanagari, kana, CJK ideographs, Hangul syllables). Marks that combine reorder in NFC,
    /// so any of them (a combining class other than 0) says `true`; so does every other script.
    /// Calling the normalizer on every term cost a third of the time spent reading a message.
    fileprivate var mayChangeInNFC: Bool {
        let value = self.value
        switch value {
        case 0..<0x300,
            0x3041...0x3096, 0x309D...0x309F, 0x30A1...0x30FA, 0x30FC...0x30FF,  // kana, but the voicing marks
            0x3400...0x4DBF, 0x4E00...0x9FFF, 0x20000...0x2A6DF, 0x2A700...0x2EBEF, 0x30000...0x323AF,  // CJK ideographs
            0xAC00...0xD7A3:  // Hangul syllables
            // No combining marks in these ranges.
            return false
        case 0x0370...0x0373, 0x0375...0x037D, 0x037F...0x0386, 0x0388...0x03FF,  // Greek, but its three singletons
            0x0400...0x052F, 0x0531...0x0587, 0x05D0...0x05EA, 0x0620...0x064A,  // Cyrillic, Armenian, Hebrew, Arabic letters
            0x0900...0x0957, 0x0960...0x097F,  // Devanagari, but 0958–095F, which NFC decomposes
            0x0E00...0x0EFF, 0x1780...0x17FF:  // Thai, Lao, Khmer
            return properties.canonicalCombiningClass.rawValue != 0
        default:
            return true
        }
    }
}
