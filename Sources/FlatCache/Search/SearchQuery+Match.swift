extension SearchQuery {
    /// Where `text` meets every clause of the query, as the ranges to highlight
    /// (sorted, overlaps merged); `nil` when it misses one, or the query is empty.
    ///
    /// This reads the whole text: it is how a hit's highlights are found, and
    /// the reference any index must agree with.
    func match(in text: String) -> [Range<String.Index>]? {
        guard !isEmpty else { return nil }
        let tokens = SearchTokenizer.tokens(in: text)
        var ranges = [Range<String.Index>]()
        for clause in clauses {
            let found = Self.matches(of: clause, in: tokens)
            guard !found.isEmpty else { return nil }
            ranges += found
        }
        return Self.merged(ranges)
    }

    /// The ranges of the tokens that meet `clause`, a phrase's as one range.
    private static func matches(of clause: Clause, in tokens: [SearchToken]) -> [Range<String.Index>] {
        switch clause {
        case .term(let term, let prefix):
            return tokens.filter { Self.meets($0.term, term, prefix: prefix) }.map(\.range)
        case .phrase(let terms):
            // A token's place is its index in `tokens` (each token has its own, from 0), so a
            // phrase's term at `offset` is looked up directly.
            var ranges = [Range<String.Index>]()
            for start in tokens where Self.meets(start.term, terms[0].term, prefix: terms[0].prefix) {
                let found = terms.compactMap { placed -> Range<String.Index>? in
                    let position = start.position + placed.offset
                    guard position < tokens.count, Self.meets(tokens[position].term, placed.term, prefix: placed.prefix) else { return nil }
                    return tokens[position].range
                }
                // A phrase is highlighted whole, the spaces between its words too.
                if found.count == terms.count { ranges.append(found.map(\.lowerBound).min()!..<found.map(\.upperBound).max()!) }
            }
            return ranges
        }
    }

    /// Whether a text's `term` is the query's `wanted`, or begins with it for a prefix. Bytes are
    /// compared, as the index compares them: terms are composed (NFC), so equal text is equal bytes.
    private static func meets(_ term: String, _ wanted: String, prefix: Bool) -> Bool {
        prefix ? term.utf8.starts(with: wanted.utf8) : term.utf8.elementsEqual(wanted.utf8)
    }

    /// `ranges` sorted, with those that overlap or touch made one.
    private static func merged(_ ranges: [Range<String.Index>]) -> [Range<String.Index>] {
        var merged = [Range<String.Index>]()
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = merged.last, range.lowerBound <= last.upperBound {
                merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        return merged
    }
}
