/// One query of the search rows: what the user means, and how each system
/// is asked it so that both look for the same thing.
///
/// FlatCache reads a search box: its last word is a prefix while the user
/// types, so a query that means whole words ends with a space (which ends the
/// word). FTS5 gets its own syntax: each word quoted, `"tra"*` for a prefix,
/// a quoted phrase, and the `trigram` table for Chinese, Japanese and Thai.
package struct SearchBenchQuery: Sendable, Hashable {
    /// The shapes of query the latency row covers, and those it cannot compare.
    package enum Kind: String, Sendable, CaseIterable {
        case word = "1 word"
        case words = "2 words"
        case prefix
        case phrase
        case unspaced = "CJK/Thai, 3+ characters"
        case shortUnspaced = "CJK, 2 characters"
        case emoji
    }

    /// Which of FTS5's two tables a query goes to.
    package enum FTS5Table: String, Sendable {
        /// `unicode61 remove_diacritics 2`: every message.
        case words = "message_fts"
        /// `trigram`: the messages with Chinese, Japanese, Thai (and the other scripts written without spaces).
        case trigram = "message_tri"
    }

    /// How FTS5 is asked.
    package enum FTS5Form: Sendable, Hashable {
        /// A `MATCH` on one of its tables, ranked by `bm25()`.
        case match(String, FTS5Table)
        /// No `MATCH` can find it (FTS5's `trigram` needs three characters, `unicode61`
        /// drops emoji): a scan of the messages' text with `instr()`, newest first, unranked.
        case scan(String)
    }

    package let kind: Kind
    /// What the report shows.
    package let label: String
    /// The text given to `cache.search.messages(matching:)`.
    package let flatCacheText: String
    package let fts5: FTS5Form

    /// Whether both systems answer it from their index, ranked: the queries the latency row and the relevance check take.
    package var isCompared: Bool {
        if case .match = fts5 { return true }
        return false
    }

    /// Whole words, all of them in every hit.
    package static func words(_ text: String) -> SearchBenchQuery {
        let words = text.split(separator: " ")
        return SearchBenchQuery(
            kind: words.count == 1 ? .word : .words, label: text, flatCacheText: text + " ",
            fts5: .match(words.map { "\"\($0)\"" }.joined(separator: " "), .words))
    }

    /// Every word `text` begins.
    package static func prefix(_ text: String) -> SearchBenchQuery {
        SearchBenchQuery(kind: .prefix, label: text + "…", flatCacheText: text, fts5: .match("\"\(text)\"*", .words))
    }

    /// The words in this order, next to each other.
    package static func phrase(_ text: String) -> SearchBenchQuery {
        SearchBenchQuery(kind: .phrase, label: "\"\(text)\"", flatCacheText: "\"\(text)\"", fts5: .match("\"\(text)\"", .words))
    }

    /// Characters of a script written without spaces, in this order anywhere in a message.
    package static func unspaced(_ text: String) -> SearchBenchQuery {
        text.count >= 3
            ? SearchBenchQuery(kind: .unspaced, label: text, flatCacheText: text + " ", fts5: .match("\"\(text)\"", .trigram))
            : SearchBenchQuery(kind: .shortUnspaced, label: text, flatCacheText: text + " ", fts5: .scan(text))
    }

    /// One emoji.
    package static func emoji(_ text: String) -> SearchBenchQuery {
        SearchBenchQuery(kind: .emoji, label: text, flatCacheText: text + " ", fts5: .scan(text))
    }

    /// The fixed set: each shape with common and rare words, accents typed
    /// without them, Cyrillic, Japanese, Chinese and Thai; then the queries
    /// FTS5 cannot answer from its index (timed and shown, not compared).
    package static let standard: [SearchBenchQuery] = [
        .words("trail"), .words("meeting"), .words("cafe"), .words("jose"), .words("спасибо"),
        .words(SearchText.tailWords[40]),
        .words("coffee tomorrow"), .words("meeting notes"), .words("train late"),
        .prefix("tra"), .prefix("mee"), .prefix("caf"), .prefix("при"),
        .phrase("see you there"), .phrase("design review"), .phrase("let me know"),
        .unspaced("ありがとう"), .unspaced("会議室"), .unspaced("下周见"), .unspaced("สวัสดี"),
        .unspaced("東京"), .unspaced("明天"), .emoji("🚀"),
    ]
}
