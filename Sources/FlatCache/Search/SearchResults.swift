/// Which messages a search looks among: every cached message unless narrowed.
///
/// Example: `SearchFilter(channelURLs: [channelURL], createdSince: lastWeek)`
public struct SearchFilter: Sendable, Hashable {
    /// Only messages of these channels; `nil`: every channel.
    public var channelURLs: Set<String>?
    /// Only messages these users sent (``MessageRecord/senderID``); `nil`: anyone's.
    public var senderIDs: Set<String>?
    /// Only messages created at or after this time (milliseconds since 1970); `nil`: no bound.
    public var createdSince: Int64?
    /// Only messages created before this time (milliseconds since 1970); `nil`: no bound.
    public var createdBefore: Int64?

    /// A filter; each bound left `nil` does not narrow the search.
    public init(
        channelURLs: Set<String>? = nil, senderIDs: Set<String>? = nil, createdSince: Int64? = nil, createdBefore: Int64? = nil
    ) {
        self.channelURLs = channelURLs
        self.senderIDs = senderIDs
        self.createdSince = createdSince
        self.createdBefore = createdBefore
    }
}

/// The order of a search's hits.
public enum SearchOrder: Sendable, Hashable {
    /// Best match first, by BM25 (as SQLite FTS5 ranks): rarer words, and
    /// shorter messages holding them, count more. Ties: newest first.
    case relevance
    /// Newest message first.
    case newestFirst
}

/// One message a search found.
public struct SearchHit<Message: MessageRecord>: Sendable {
    /// The message, as a load returns it now.
    public let message: Message
    /// The channel it is in.
    public let channelURL: String
    /// The text that was searched (``MessageRecord/searchableText``): what ``highlights`` point into.
    public let text: String
    /// Where ``text`` meets the query, to show in bold: sorted, not
    /// overlapping; a quoted phrase as one range, the spaces inside it included.
    public let highlights: [Range<String.Index>]
    /// Its BM25 score: higher is a better match. Compare scores of one search only.
    public let score: Double
}

extension SearchHit {
    /// ``text`` with each highlight between `open` and `close`: brackets for a
    /// log or a test, escape codes for a terminal.
    ///
    /// Example: `hit.markedText(open: "[", close: "]")` is `"Meet at the [trail] head"`.
    public func markedText(open: String, close: String) -> String {
        var marked = ""
        var rest = text.startIndex
        for range in highlights where range.lowerBound >= rest {
            marked += text[rest..<range.lowerBound] + open + text[range] + close
            rest = range.upperBound
        }
        return marked + text[rest...]
    }
}

extension SearchHit: Equatable where Message: Equatable {}

/// Where a search's next page starts: ``SearchPage/next``, given to
/// ``MessageSearch/messages(after:)``. It holds the query, filter, order
/// and page size, and the first page's weights, so that each page goes on
/// where the last ended (no hit twice, none skipped) while messages come and go.
public struct SearchCursor<Message: MessageRecord>: Sendable, Hashable {
    let request: SearchRequest
    let position: SearchIndex<Message.MessageID>.PageCursor
}

/// A page of hits.
public struct SearchPage<Message: MessageRecord>: Sendable {
    /// At most the page size of hits, in the search's order.
    public let hits: [SearchHit<Message>]
    /// Where the next page starts; `nil` when this page is the last.
    public let next: SearchCursor<Message>?
    /// How far the index was when the search ran: while it is still being
    /// built, the hits come from the channels indexed so far.
    public let progress: SearchProgress
}

/// How far the search index is: it is built in the background the first
/// time search is used (``MessageSearch/prepare()`` starts it early), then follows every change.
public struct SearchProgress: Sendable, Hashable {
    /// Channels indexed.
    public let indexedChannels: Int
    /// Channels the cache holds, as far as the index knows.
    public let channelCount: Int
    /// Messages in the index (those with text: ``MessageRecord/searchableText``).
    public let indexedMessages: Int
    /// Whether every cached channel is indexed: a search then finds every cached message.
    public let isComplete: Bool

    /// ``indexedChannels`` as a fraction of ``channelCount``, from 0 to 1 (1 when complete).
    public var fractionCompleted: Double {
        isComplete || channelCount == 0 ? 1 : Double(indexedChannels) / Double(channelCount)
    }
}

/// What one search asks: kept in its cursor, so that the next page asks the same.
struct SearchRequest: Sendable, Hashable {
    var text: String
    var filter: SearchFilter
    var order: SearchOrder
    var limit: Int
}
