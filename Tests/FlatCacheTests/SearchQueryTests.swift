import Testing

@testable import FlatCache

/// How a search box's text becomes what a search looks for.
struct SearchQueryTests {
    private typealias Placed = SearchQuery.PlacedTerm

    @Test func theLastWordIsAPrefixWhileTheUserTypes() {
        #expect(SearchQuery("tra").clauses == [.term("tra", prefix: true)])
        #expect(SearchQuery("tra ").clauses == [.term("tra", prefix: false)])
        #expect(SearchQuery("Hello Wor").clauses == [.term("hello", prefix: false), .term("wor", prefix: true)])
    }

    @Test func aStarMakesAnyWordAPrefix() {
        #expect(SearchQuery("tra* mix ").clauses == [.term("tra", prefix: true), .term("mix", prefix: false)])
    }

    @Test func wordsAreFoldedAsMessagesAre() {
        #expect(SearchQuery("JOSÉ ").clauses == [.term("jose", prefix: false)])
        #expect(SearchQuery("don't ").clauses == [.term("don", prefix: false), .term("t", prefix: false)])
    }

    @Test func quotedTextIsAPhrase() {
        #expect(
            SearchQuery("\"Quoted phrase\" x").clauses == [
                .phrase([Placed(term: "quoted", offset: 0), Placed(term: "phrase", offset: 1)]), .term("x", prefix: true),
            ])
        #expect(SearchQuery("“curly quotes”").clauses == [.phrase([Placed(term: "curly", offset: 0), Placed(term: "quotes", offset: 1)])])
        // A quote left open runs to the end, its last word a prefix while the user types.
        #expect(SearchQuery("see \"open phrase").clauses == [
            .term("see", prefix: false), .phrase([Placed(term: "open", offset: 0), Placed(term: "phrase", offset: 1, prefix: true)]),
        ])
        #expect(SearchQuery("see \"open phrase ").clauses == [
            .term("see", prefix: false), .phrase([Placed(term: "open", offset: 0), Placed(term: "phrase", offset: 1)]),
        ])
        // One quoted word is that word, whole.
        #expect(SearchQuery("\"tra\"").clauses == [.term("tra", prefix: false)])
    }

    @Test func aQueryWithoutWordsIsEmpty() {
        #expect(SearchQuery("").isEmpty)
        #expect(SearchQuery("  ,, \"\" …").isEmpty)
    }

    @Test func unspacedScriptsAreLookedUpByTheirPairs() {
        // While the user types, the last pair is a prefix (a Thai letter's marks come after it).
        #expect(
            SearchQuery("東京タワー").clauses == [
                .phrase(["東京", "京タ", "タワ", "ワー"].enumerated().map { Placed(term: $1, offset: $0, prefix: $0 == 3) })
            ])
        #expect(
            SearchQuery("東京タワー ").clauses == [
                .phrase(["東京", "京タ", "タワ", "ワー"].enumerated().map { Placed(term: $1, offset: $0) })
            ])
        #expect(SearchQuery("東京").clauses == [.term("東京", prefix: true)])
        #expect(SearchQuery("東京 ").clauses == [.term("東京", prefix: false)])
        #expect(SearchQuery("東").clauses == [.term("東", prefix: true)])
        // One such character in quotes still matches the pairs it begins.
        #expect(SearchQuery("\"東\"").clauses == [.term("東", prefix: true)])
        #expect(
            SearchQuery("\"hello 東\"").clauses == [
                .phrase([Placed(term: "hello", offset: 0), Placed(term: "東", offset: 1, prefix: true)])
            ])
    }

    @Test func whatFoldsToNothingIsLeftOut() {
        #expect(SearchQuery("\u{301}").isEmpty)
        #expect(SearchQuery("🏽 ok").clauses == [.term("ok", prefix: true)])
    }

    /// A phrase's places are the places its words have in a message, whatever the scripts.
    @Test(arguments: [
        ("Meet at 東京タワー station tonight", "東京タワー station"),
        ("Meet at 東京 station tonight", "at 東京 station"),
        ("ok 猫 👍🏽 yes", "猫 👍 yes"),
        ("Café Zürich, 7:30 tomorrow", "zurich 7 30"),
    ])
    func aQuotedPartOfAMessageIsFoundAtItsPlaces(text: String, quoted: String) throws {
        let query = SearchQuery("\"\(quoted)\"")
        guard case .phrase(let terms) = try #require(query.clauses.first) else {
            Issue.record("not a phrase: \(query.clauses)")
            return
        }
        let tokens = SearchTokenizer.tokens(in: text)
        let starts = tokens.filter { $0.term == terms[0].term }.map(\.position)
        let found = starts.contains { start in
            terms.allSatisfy { placed in tokens.contains { $0.term == placed.term && $0.position == start + placed.offset } }
        }
        #expect(found, "\(terms) not in \(tokens.map { ($0.term, $0.position) })")
    }
}
