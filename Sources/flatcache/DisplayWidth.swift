/// How many terminal columns text takes, so that table columns line up with
/// CJK and emoji: each grapheme cluster (`Character`) takes 2 columns when it
/// is East Asian wide or full-width or shown as emoji, 0 when it is only a
/// control or zero-width character, and 1 otherwise (as `wcwidth` does, per
/// cluster rather than per code point, so a family emoji or a flag is one
/// wide character, not several).
enum DisplayWidth {
    /// The columns `text` takes.
    static func of(_ text: String) -> Int {
        text.reduce(0) { $0 + of($1) }
    }

    /// The columns one grapheme cluster takes.
    static func of(_ character: Character) -> Int {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        // A variation selector 16 asks for emoji presentation (e.g. "☺️"); 15 asks for text.
        if scalars.contains("\u{FE0F}") { return 2 }
        if scalars.contains(where: isWide) { return 2 }
        if scalars.count == 1, isZeroWidth(first) { return 0 }
        return 1
    }

    /// Scalars shown two columns wide: emoji presentation, and East Asian
    /// Wide (W) and Fullwidth (F) per Unicode's EastAsianWidth.txt.
    private static func isWide(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.properties.isEmojiPresentation { return true }
        return wideRanges.contains { $0.contains(scalar.value) }
    }

    /// Controls, combining marks and other characters that take no column alone.
    private static func isZeroWidth(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .nonspacingMark, .enclosingMark: true
        default: false
        }
    }

    /// East Asian Wide and Fullwidth blocks (the ranges `wcwidth`
    /// implementations use; emoji are found by their property instead).
    private static let wideRanges: [ClosedRange<UInt32>] = [
        0x1100...0x115F,  // Hangul Jamo initial consonants
        0x231A...0x231B, 0x2329...0x232A,
        0x2E80...0x303E,  // CJK radicals, Kangxi, CJK symbols and punctuation
        0x3041...0x33FF,  // Hiragana, Katakana, Bopomofo, Hangul compatibility Jamo, CJK compatibility
        0x3400...0x4DBF,  // CJK extension A
        0x4E00...0x9FFF,  // CJK unified ideographs
        0xA000...0xA4CF,  // Yi
        0xA960...0xA97F,  // Hangul Jamo extended A
        0xAC00...0xD7A3,  // Hangul syllables
        0xF900...0xFAFF,  // CJK compatibility ideographs
        0xFE10...0xFE19,  // vertical forms
        0xFE30...0xFE6F,  // CJK compatibility forms, small form variants
        0xFF00...0xFF60,  // full-width forms
        0xFFE0...0xFFE6,
        0x16FE0...0x18AFF,  // Tangut and ideographic symbols
        0x1B000...0x1B2FF,  // Kana supplement, Nushu
        0x1F200...0x1F2FF,  // enclosed ideographic supplement
        0x20000...0x2FFFD,  // CJK extensions B to F
        0x30000...0x3FFFD,  // CJK extension G and beyond
    ]
}
