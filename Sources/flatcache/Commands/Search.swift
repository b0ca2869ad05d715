import ArgumentParser
import FlatCache
import Foundation

/// `flatcache search <dir> "query"`: the cached messages that hold the query's words, in every channel.
struct Search: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Find cached messages by their words, in every channel: best match first, or newest first.",
        discussion: HelpText.paragraphs(
            """
            Each word must be in the message, in any case, with or without accents ("jose" finds \
            the name with an accent on its e); the last word may be the start of one ("tra" finds \
            "trail"), as while typing, as may a word followed by *; words in "double quotes" are a \
            phrase, in that order; Chinese, Japanese and Thai match by their characters in \
            sequence. Best match first; --newest-first for newest first. --channel URL and \
            --sender ID (each repeatable) narrow it, and --limit N (20) caps it.
            """,
            """
            Prints one hit per line: channel URL, time (UTC), the sender's user id ("-" for none) \
            and the text on one line, the matched words in [brackets] (in bold on a terminal, \
            unless NO_COLOR is set); then a line saying how many were shown and whether more match \
            (raise --limit to see them). --json prints one object: "query", "hits" and "more"; each \
            hit has channelURL, messageID, createdAt, senderID (null for none), text and \
            highlights, each highlight being {"utf8Start", "utf8End", "text"} in UTF-8 byte offsets \
            into the hit's text, end excluded.
            """,
            """
            It reads the saved search index (search.lines) when there is one and indexes what it \
            lacks in memory (on a terminal, standard error shows "indexing channels N/TOTAL" while \
            a large cache takes long), and writes nothing. A folder written with other record \
            types cannot be searched: that is an error.
            """,
            HelpText.keyRequired,
            HelpText.readsOnly,
            HelpText.readExitStatus,
            HelpText.examples(
                "flatcache search ~/.cache/flatcache-demo \"trail\"",
                "flatcache search Chat.cache \"ca marc\" --sender jose --json",
                "flatcache search Chat.cache '\"the trail\" 12' --newest-first --limit 5",
                "flatcache search Chat.cache trail --channel sendbird_group_channel_hiking")))

    @OptionGroup var options: CacheOptions

    @Argument(help: "What to search for: words, or a \"phrase\" in double quotes.")
    var query: String

    @Option(
        name: .customLong("channel"),
        help: ArgumentHelp("Only messages of this channel; repeat it for several.", valueName: "url"))
    var channelURLs: [String] = []

    @Option(
        name: .customLong("sender"),
        help: ArgumentHelp("Only messages this user sent; repeat it for several.", valueName: "user-id"))
    var senderIDs: [String] = []

    @Option(help: "At most this many hits, at least 1.")
    var limit = 20

    @Flag(help: "Newest message first, instead of best match first.")
    var newestFirst = false

    func validate() throws {
        if query.allSatisfy(\.isWhitespace) { throw ValidationError("Please give words to search for.") }
        if limit < 1 { throw ValidationError("Please give --limit a number of 1 or more.") }
        if channelURLs.contains("") { throw ValidationError("Please give --channel a channel URL.") }
        if senderIDs.contains("") { throw ValidationError("Please give --sender a user id.") }
    }

    /// The filter the options ask for.
    var filter: SearchFilter {
        SearchFilter(
            channelURLs: channelURLs.isEmpty ? nil : Set(channelURLs), senderIDs: senderIDs.isEmpty ? nil : Set(senderIDs))
    }

    func run() throws {
        try options.read({ cache in
            let search = cache.search.blocking
            try IndexingProgress.prepare(search)
            let page = try search.messages(
                matching: query, filter: filter, order: newestFirst ? .newestFirst : .relevance, limit: limit)
            if options.json {
                return try Output.json(Report(query: query, hits: page.hits.map(Hit.init), more: page.next != nil))
            }
            show(page)
        }, otherTypes: { summary in
            throw ToolError(
                "\(options.directory) holds \(summary.recordTypes.map { "\($0)" } ?? "unknown record types"); "
                    + "search reads the built-in record types only.")
        })
    }

    /// One line per hit, then how many were shown and whether more match.
    private func show(_ page: SearchPage<ChatMessage>) {
        let highlighting = Highlighting.forStandardOutput
        Output.table(page.hits.map { hit in
            [hit.channelURL, Output.time(hit.message.createdAt), hit.message.senderID ?? "-",
             highlighting.mark(hit)]
        })
        let shown = plural(page.hits.count, "hit")
        switch (page.hits.isEmpty, page.next != nil) {
        case (true, _): print("No cached message matches \"\(query)\".")
        case (false, false): print("\(shown), no more.")
        case (false, true): print("\(shown) shown; more match (raise --limit to see them).")
        }
    }

    /// What `--json` prints.
    struct Report: Encodable {
        var query: String
        var hits: [Hit]
        /// Whether more messages match than --limit showed.
        var more: Bool
    }

    /// One hit, as `--json` prints it.
    struct Hit: Encodable {
        var channelURL: String
        var messageID: Int64
        var createdAt: Int64
        /// `null` for a message with no sender (an admin message).
        var senderID: String?
        var text: String
        var highlights: [Highlight]

        init(_ hit: SearchHit<ChatMessage>) {
            channelURL = hit.channelURL
            messageID = hit.message.messageID
            createdAt = hit.message.createdAt
            senderID = hit.message.senderID
            text = hit.text
            highlights = hit.highlights.map { Highlight($0, in: hit.text) }
        }

        private enum CodingKeys: String, CodingKey {
            case channelURL, messageID, createdAt, senderID, text, highlights
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(channelURL, forKey: .channelURL)
            try container.encode(messageID, forKey: .messageID)
            try container.encode(createdAt, forKey: .createdAt)
            // Always present, `null` when unknown: every hit has the same keys.
            try container.encode(senderID, forKey: .senderID)
            try container.encode(text, forKey: .text)
            try container.encode(highlights, forKey: .highlights)
        }
    }

    /// Where a hit's text meets the query, in UTF-8 bytes (the one unit every language can count in).
    struct Highlight: Encodable {
        /// The offset of its first byte in the hit's text.
        var utf8Start: Int
        /// The offset just past its last byte.
        var utf8End: Int
        /// The highlighted text itself.
        var text: String

        init(_ range: Range<String.Index>, in text: String) {
            utf8Start = text.utf8.distance(from: text.startIndex, to: range.lowerBound)
            utf8End = text.utf8.distance(from: text.startIndex, to: range.upperBound)
            self.text = String(text[range])
        }
    }
}
