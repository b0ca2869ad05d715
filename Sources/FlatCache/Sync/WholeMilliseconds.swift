/// Pages from a ``MessageSource`` that never end partway through a millisecond.
///
/// A source pages by time alone, so a full page may stop partway through the
/// messages of its farthest millisecond, and which of them it left out
/// cannot be told, nor asked for: the next page, asked from that time, would
/// start after it. So the farthest millisecond of a page that has more is
/// left out of it (the next page asks for it again, whole), and when that
/// leaves too little, the same time is asked again with a larger limit.
/// Correct for any source that keeps the contract of
/// ``MessageSource/messages(in:_:_:limit:)``: a page is the `limit` messages
/// nearest the time.
enum WholeMilliseconds {
    /// How many times a page is asked again with a doubled limit: past this,
    /// a millisecond holds more than a million times the first limit, or the
    /// source ignores the limit.
    static let maxRounds = 21

    /// A page of messages on `direction`'s side of `timestamp`, oldest first,
    /// in which every millisecond is whole: when it `hasMore`, no message of
    /// the channel at a millisecond it reaches is missing from it.
    ///
    /// - Parameters:
    ///   - channelURL: The channel; messages of others are left out.
    ///   - direction: The side of `timestamp`.
    ///   - timestamp: Messages at exactly this time are left out, as the source promises.
    ///   - limit: The limit asked first, at least 1.
    ///   - enough: Whether a page of whole milliseconds holds what the caller needs;
    ///     when not, the source is asked for a larger page.
    ///   - fetch: Asks the source for a page with the given limit.
    /// - Returns: The page: non-empty when it has more.
    /// - Throws: What `fetch` throws, or ``FlatCacheError/sourceFailed(operation:underlying:)``
    ///   with ``SplitMillisecond`` when the source never returns a whole millisecond.
    static func page<M: MessageRecord>(
        in channelURL: String, _ direction: PageDirection, _ timestamp: Int64, limit: Int,
        isolation: isolated (any Actor)? = #isolation,
        enough: ([M]) -> Bool,
        fetch: (Int) async throws(FlatCacheError) -> MessagePage<M>
    ) async throws(FlatCacheError) -> MessagePage<M> {
        var limit = max(1, limit)
        for _ in 0..<maxRounds {
            let page = try await fetch(limit)
            let ordered = CanonicalOrder.messages(page.messages.filter { message in
                message.channelURL == channelURL
                    && (direction == .before ? message.createdAt < timestamp : message.createdAt > timestamp)
            })
            guard page.hasMore else { return MessagePage(messages: ordered, hasMore: false) }
            let farthest = direction == .before ? ordered.first?.createdAt : ordered.last?.createdAt
            let whole = ordered.filter { $0.createdAt != farthest }
            // A source that returned fewer than asked will not return more: take what is whole.
            if !whole.isEmpty, enough(whole) || page.messages.count < limit {
                return MessagePage(messages: whole, hasMore: true)
            }
            if page.messages.count < limit { break }
            limit = limit > Int.max / 2 ? Int.max : limit * 2
        }
        throw .sourceFailed(
            operation: "get a page of whole milliseconds \(direction) \(timestamp)",
            underlying: SplitMillisecond(channelURL: channelURL, timestamp: timestamp, limit: limit))
    }
}

/// A source that says more messages exist but never returns a whole
/// millisecond of them, however large the limit asked: a collection cannot
/// page past that millisecond without losing messages.
struct SplitMillisecond: Error, CustomStringConvertible {
    /// The channel.
    var channelURL: String
    /// The time the pages were asked from.
    var timestamp: Int64
    /// The last limit asked.
    var limit: Int

    var description: String {
        "the source pages of \(channelURL) from \(timestamp) end inside a millisecond even with a limit of \(limit); "
            + "a MessageSource must return the `limit` messages nearest the time"
    }
}
