/// What a search box's text asks for, read with the same rules as the
/// messages it searches (``SearchTokenizer``).
///
/// - Each word is a term every hit must hold.
/// - A word followed by `*`, and the query's last word when nothing follows it
///   (the user is still typing), match every word they begin: "tra" finds
///   "trail".
/// - Text in double quotes (`"` or `“ ”`) is a phrase: its words in that order,
///   next to each other. A quote left open runs to the end, its last word a
///   prefix while the user types.
/// - Chinese, Japanese, Thai, Lao, Khmer and Myanmar of two or more characters
///   are looked up as a phrase of their pairs, the last pair a prefix while the
///   user types (a Thai letter's vowel or tone mark comes after it); one such
///   character alone, quoted or not, matches every pair it begins.
/// - A word that folds to nothing (a lone accent or skin tone) is left out.
struct SearchQuery: Equatable, Sendable {
    /// One condition every hit meets.
    enum Clause: Equatable, Sendable {
        /// A term; with `prefix`, any term it begins.
        case term(String, prefix: Bool)
        /// Terms at the given places after the first's.
        case phrase([PlacedTerm])
    }

    /// A term of a phrase, and its place after the phrase's first term.
    struct PlacedTerm: Equatable, Sendable {
        /// The folded term.
        var term: String
        /// Its place after the phrase's first term: 0 for the first.
        var offset: Int
        /// Whether it matches any term it begins.
        var prefix = false
    }

    /// What every hit must meet, in the order the query gave them; none for a query with no words.
    var clauses: [Clause]

    /// Reads `text` as a search box's query.
    init(_ text: String) {
        clauses = SearchBytes.with(text) { bytes in
            var clauses = [Clause]()
            var rest = 0..<bytes.count
            while !rest.isEmpty {
                guard let open = Self.quote(in: bytes, rest) else {
                    clauses += Self.words(bytes, rest)
                    break
                }
                clauses += Self.words(bytes, rest.lowerBound..<open.lowerBound)
                let inside = open.upperBound..<rest.upperBound
                let close = Self.quote(in: bytes, inside) ?? inside.upperBound..<inside.upperBound
                    // A quote still open at the end: its last word is a prefix while the user types.
                let typing = close.isEmpty && close.lowerBound == bytes.count
                if let phrase = Self.phrase(bytes, inside.lowerBound..<close.lowerBound, typing: typing) { clauses.append(phrase) }
                rest = close.upperBound..<rest.upperBound
            }
            return clauses
        }
    }

    /// The query has nothing to look for.
    var isEmpty: Bool { clauses.isEmpty }

    /// The first double quote in `range` (`"`, `“` or `”`), as its bytes' range.
    private static func quote(in bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Range<Int>? {
        var index = range.lowerBound
        while index < range.upperBound {
            if bytes[index] == 0x22 { return index..<index + 1 }
            // U+201C and U+201D: E2 80 9C and E2 80 9D.
            if bytes[index] == 0xE2, index + 2 < range.upperBound, bytes[index + 1] == 0x80,
                bytes[index + 2] == 0x9C || bytes[index + 2] == 0x9D
            {
                return index..<index + 3
            }
            index += 1
        }
        return nil
    }

    /// The clauses of unquoted text: a term per word and emoji, a phrase per unspaced run.
    private static func words(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> [Clause] {
        SearchTokenizer.segments(of: bytes, in: range).compactMap { segment -> Clause? in
            switch segment {
            case .word(let word):
                let term = SearchFolding.fold(bytes, word)
                return term.isEmpty ? nil : .term(term, prefix: isPrefix(bytes, endingAt: word.upperBound))
            case .emoji(let emoji):
                let term = SearchFolding.foldEmoji(bytes, emoji)
                return term.isEmpty ? nil : .term(term, prefix: false)
            case .unspaced(let characters) where characters.count == 1:
                return .term(SearchFolding.fold(bytes, characters[0], keepingDiacritics: true), prefix: true)
            case .unspaced(let characters):
                var pairs = unspacedPairs(bytes, characters, from: 0)
                pairs[pairs.count - 1].prefix = isPrefix(bytes, endingAt: characters[characters.count - 1].upperBound)
                return pairs.count == 1 ? .term(pairs[0].term, prefix: pairs[0].prefix) : .phrase(pairs)
            }
        }
    }

    /// Whether a word ending at `end` matches the words it begins: `*` follows it, or nothing
    /// does (the user is still typing).
    private static func isPrefix(_ bytes: UnsafeBufferPointer<UInt8>, endingAt end: Int) -> Bool {
        end == bytes.count || bytes[end] == 0x2A  // `*`
    }

    /// A quoted phrase's clause: its terms at the places the index gives them; `nil` when it has no words.
    private static func phrase(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, typing: Bool) -> Clause? {
        var terms = [PlacedTerm]()
        var offset = 0
        for segment in SearchTokenizer.segments(of: bytes, in: range) {
            switch segment {
            case .word(let word):
                let term = SearchFolding.fold(bytes, word)
                guard !term.isEmpty else { continue }
                terms.append(PlacedTerm(term: term, offset: offset, prefix: typing && word.upperBound == range.upperBound))
                offset += 1
            case .emoji(let emoji):
                let term = SearchFolding.foldEmoji(bytes, emoji)
                guard !term.isEmpty else { continue }
                terms.append(PlacedTerm(term: term, offset: offset))
                offset += 1
            case .unspaced(let characters) where characters.count == 1:
                // One character: the pair it begins, or a run's last character.
                let term = SearchFolding.fold(bytes, characters[0], keepingDiacritics: true)
                terms.append(PlacedTerm(term: term, offset: offset, prefix: true))
                offset += 1
            case .unspaced(let characters):
                terms += unspacedPairs(bytes, characters, from: offset)
                if typing, characters[characters.count - 1].upperBound == range.upperBound { terms[terms.count - 1].prefix = true }
                // The index gives a run's last character a place of its own after its pairs.
                offset += characters.count
            }
        }
        switch terms.count {
        case 0: return nil
        case 1: return .term(terms[0].term, prefix: terms[0].prefix)
        default: return .phrase(terms)
        }
    }

    /// A run's pairs of characters, at consecutive places from `offset`.
    private static func unspacedPairs(_ bytes: UnsafeBufferPointer<UInt8>, _ characters: [Range<Int>], from offset: Int) -> [PlacedTerm] {
        SearchTokenizer.pairs(of: characters).enumerated().map { index, pair in
            PlacedTerm(term: SearchFolding.fold(bytes, pair, keepingDiacritics: true), offset: offset + index)
        }
    }
}
