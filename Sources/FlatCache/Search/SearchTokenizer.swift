/// One word of a text as search sees it: the term it is indexed under, its
/// place among the text's tokens (phrases need consecutive places), and where
/// it stands in the text (to highlight it).
struct SearchToken: Hashable, Sendable {
    /// The folded form the token is indexed and looked up under (``SearchFolding``).
    var term: String
    /// The token's place in its text: 0 for the first, consecutive for neighbours.
    var position: Int
    /// Where the token stands in the text it was read from.
    var range: Range<String.Index>
}

/// A stretch of text that makes tokens, as offsets into the text's UTF-8: a word,
/// an emoji, or a run of a script written without spaces, as its characters (a
/// base and its marks).
enum SearchSegment: Equatable {
    /// Letters, numbers and marks (and joiners between them).
    case word(Range<Int>)
    /// One emoji, with its skin tone, variation selector, tags or joined emoji.
    case emoji(Range<Int>)
    /// A run of Chinese, Japanese, Thai, Lao, Khmer or Myanmar: its characters, in order.
    case unspaced([Range<Int>])
}

/// Splits text into search tokens, the same way for messages and queries, on every platform.
///
/// - Words are runs of letters, numbers and combining marks (Unicode general
///   categories L, N and M), as SQLite FTS5's unicode61 tokenizer reads them:
///   punctuation, spaces and symbols split, so "don't" is "don" and "t", and
///   "example.com/trail" is "example", "com" and "trail". Each is folded
///   (``SearchFolding``).
/// - Scripts written without spaces (Chinese, Japanese, Thai, Lao, Khmer,
///   Myanmar) have no word boundaries to find without a dictionary. A run of
///   them is indexed as its overlapping pairs of characters ("東京タワー" is
///   "東京", "京タ", "タワ", "ワー"), then its last character alone, each at
///   the next place. A query of two or more characters looks up its pairs as
///   a phrase; a query of one character looks up the pairs and characters it
///   begins.
/// - Each emoji is a token of its own, without its skin tone or variation
///   selector; so is each keycap (1️⃣).
///
/// It reads the text's UTF-8 bytes directly: a message is read in about as
/// long as SQLite FTS5 takes to index it.
enum SearchTokenizer {
    /// The tokens `text` is indexed under, in order.
    static func tokens(in text: String) -> [SearchToken] {
        SearchBytes.with(text) { bytes in
            var tokens = [SearchToken]()
            func add(_ term: String, _ position: Int, _ range: Range<Int>) {
                let lower = text.utf8.index(text.startIndex, offsetBy: range.lowerBound)
                let upper = text.utf8.index(lower, offsetBy: range.count)
                tokens.append(SearchToken(term: term, position: position, range: lower..<upper))
            }
            forEachTerm(in: bytes, add)
            return tokens
        }
    }

    /// Calls `body` with each term of the text `bytes` hold, its place and its UTF-8 range, in order.
    static func forEachTerm(in bytes: UnsafeBufferPointer<UInt8>, _ body: (String, Int, Range<Int>) -> Void) {
        var position = 0
        for segment in segments(of: bytes, in: 0..<bytes.count) {
            switch segment {
            case .word(let range):
                // A word of accents alone (a lone U+0301) folds to nothing: no term, and no place.
                let term = SearchFolding.fold(bytes, range)
                guard !term.isEmpty else { continue }
                body(term, position, range)
                position += 1
            case .emoji(let range):
                let term = SearchFolding.foldEmoji(bytes, range)
                guard !term.isEmpty else { continue }
                body(term, position, range)
                position += 1
            case .unspaced(let characters):
                for (offset, pair) in pairs(of: characters).enumerated() {
                    body(SearchFolding.fold(bytes, pair, keepingDiacritics: true), position + offset, pair)
                }
                let last = characters[characters.count - 1]
                body(SearchFolding.fold(bytes, last, keepingDiacritics: true), position + characters.count - 1, last)
                position += characters.count
            }
        }
    }

    /// The ranges of each two neighbouring characters of a run.
    static func pairs(of characters: [Range<Int>]) -> [Range<Int>] {
        guard characters.count > 1 else { return [] }
        return (1..<characters.count).map { characters[$0 - 1].lowerBound..<characters[$0].upperBound }
    }

    /// The words, emoji and runs of unspaced scripts of the UTF-8 text `bytes` hold in `range`, in order.
    static func segments(of bytes: UnsafeBufferPointer<UInt8>, in range: Range<Int>) -> [SearchSegment] {
        var segments = [SearchSegment]()
        var index = range.lowerBound
        let end = range.upperBound
        while index < end {
            let start = index
            let scalar = SearchBytes.scalar(in: bytes, at: &index)
            if scalar.startsKeycap, let keycap = keycapEnd(bytes, after: index, before: end) {
                segments.append(.emoji(start..<keycap))
                index = keycap
                continue
            }
            switch scalar.searchClass {
            case .word:
                var next = index
                while next < end, SearchBytes.scalar(in: bytes, at: &next).continuesWord { index = next }
                segments.append(.word(start..<index))
            case .emoji:
                var flag = scalar.isRegionalIndicator
                while index < end {
                    var after = index
                    let next = SearchBytes.scalar(in: bytes, at: &after)
                    if next.continuesEmoji || next.searchClass == .joiner {
                        index = after
                        // A zero-width joiner takes the emoji after it into this one (👩‍💻).
                        if next.value == 0x200D, index < end {
                            var joined = index
                            if SearchBytes.scalar(in: bytes, at: &joined).searchClass == .emoji { index = joined }
                        }
                    } else if flag, next.isRegionalIndicator {
                        // Two regional indicators are one flag; a third starts the next.
                        flag = false
                        index = after
                    } else {
                        break
                    }
                }
                segments.append(.emoji(start..<index))
            case .unspaced:
                var characters = [Range<Int>]()
                var characterStart = start
                while index < end {
                    var after = index
                    let next = SearchBytes.scalar(in: bytes, at: &after)
                    if next.searchClass == .joiner || next.isMark {
                        index = after  // a mark belongs to the character before it
                    } else if next.searchClass == .unspaced {
                        characters.append(characterStart..<index)
                        characterStart = index
                        index = after
                    } else {
                        break
                    }
                }
                characters.append(characterStart..<index)
                segments.append(.unspaced(characters))
            case .joiner, .separator:
                continue
            }
        }
        return segments
    }

    /// Where a keycap (1️⃣: a digit, `#` or `*`, perhaps U+FE0F, then U+20E3) ends, when the scalars from `index` finish one.
    private static func keycapEnd(_ bytes: UnsafeBufferPointer<UInt8>, after index: Int, before end: Int) -> Int? {
        var next = index
        guard next < end else { return nil }
        var scalar = SearchBytes.scalar(in: bytes, at: &next)
        if scalar.value == 0xFE0F, next < end { scalar = SearchBytes.scalar(in: bytes, at: &next) }
        return scalar.value == 0x20E3 ? next : nil
    }
}

extension Unicode.Scalar {
    /// Whether this scalar, after a word's, is more of that word.
    fileprivate var continuesWord: Bool {
        switch searchClass {
        case .word, .joiner: return true
        case .unspaced, .emoji, .separator: return false
        }
    }
}
