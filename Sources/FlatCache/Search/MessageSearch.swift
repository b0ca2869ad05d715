/// Finds cached messages by their words, in every channel, offline: get it
/// from ``ChatCache/search``.
///
/// ```swift
/// let page = try await cache.search.messages(matching: "tra")   // finds "trail", "Trafalgar"
/// for hit in page.hits {
///     print(hit.channelURL, hit.text, hit.highlights.map { hit.text[$0] })
/// }
/// if let next = page.next {
///     let more = try await cache.search.messages(after: next)
///     print(more.hits.count)
/// }
/// ```
///
/// What a query asks:
/// - each word must be in the message, in any case, with or without its
///   accents and in any width ("jose" finds "José", "ｔｏｋｙｏ" finds "Tokyo");
/// - the last word, and a word followed by `*`, is a prefix: the user is still typing;
/// - words in double quotes are a phrase, in that order ("see you th" finds
///   "see you there"; a quote left open runs to the end);
/// - Chinese, Japanese, Thai and other scripts written without spaces are
///   matched by their characters in sequence ("東京" finds "東京駅で").
///
/// The index lives in memory. It is built in the background the first time
/// search is used (``prepare()`` starts it early and waits for it); until it
/// is complete, searches answer from the channels indexed so far
/// (``SearchPage/progress``). Then it follows every change this cache makes
/// (saves, replaces, change logs, removals, retention, expiry, eviction,
/// ``ChatCache/removeAll()``), and finds another instance's or process's
/// writes by their files' stamps: every search that starts a second or more
/// after such a write sees it (when more than 64 channels changed since
/// search last looked, they are indexed in the background, with
/// ``SearchProgress/isComplete`` `false` until then). A hit is always the message as a load returns
/// it now: a deleted message is never found, an edited one only by its new
/// words. The index is saved in the cache folder (`search.lines`, sealed in
/// an encrypted cache like every file) so that the next launch reads it and
/// indexes only the channels written since.
///
/// Messages are found by ``MessageRecord/searchableText`` (a ``ChatMessage``'s
/// text); a record type that does not give one is not searched.
public struct MessageSearch<Message: MessageRecord>: Sendable {
    let service: SearchService<Message>

    /// The hits of `text` among the cached messages: the first page of at most `limit`.
    ///
    /// A query with no words (empty, or only spaces and punctuation) finds nothing.
    /// Runs away from the caller's thread; cancelling the task stops it with `CancellationError`.
    /// - Parameters:
    ///   - text: What the user typed (see ``MessageSearch`` for what it asks).
    ///   - filter: The channels, senders and times to look among; all by default.
    ///   - order: Best match first (the default), or newest first.
    ///   - limit: The page size, at least 1; 20 by default.
    /// - Throws: ``FlatCacheError/invalidLimit(_:)``, a file-system error, or `CancellationError`.
    public func messages(
        matching text: String, filter: SearchFilter = SearchFilter(), order: SearchOrder = .relevance, limit: Int = 20
    ) async throws -> SearchPage<Message> {
        guard limit > 0 else { throw FlatCacheError.invalidLimit(limit) }
        return try await page(SearchRequest(text: text, filter: filter, order: order, limit: limit), after: nil)
    }

    /// The page that follows the one `cursor` came with: the same query, filter, order and size.
    ///
    /// - Throws: A file-system error, or `CancellationError`.
    public func messages(after cursor: SearchCursor<Message>) async throws -> SearchPage<Message> {
        try await page(cursor.request, after: cursor.position)
    }

    /// How far the index is; starts building it when nothing has yet.
    ///
    /// - Throws: A file-system error (the cache folder cannot be listed).
    public func progress() async throws(FlatCacheError) -> SearchProgress {
        let service = service
        return try await service.run { _ throws(FlatCacheError) in
            try service.startIfNeeded()
            return service.progress
        }
    }

    /// Builds the index if it is not built, and waits until every message
    /// cached when it was called is in it (this cache's changes since too;
    /// another process's, as a search finds them): call it at launch to have
    /// search ready, or before a search that must see everything.
    ///
    /// - Returns: The progress then (complete).
    /// - Throws: A file-system error, or `CancellationError` as soon as the
    ///   task is cancelled (the build goes on in the background).
    @discardableResult
    public func prepare() async throws -> SearchProgress {
        try await service.waitUntilComplete()
    }

    private func page(_ request: SearchRequest, after position: SearchIndex<Message.MessageID>.PageCursor?) async throws
        -> SearchPage<Message>
    {
        let service = service
        let answer = try await service.run { cancelled throws(FlatCacheError) in
            try service.search(request, after: position, isCancelled: { cancelled.isSet })
        }
        guard let answer else { throw CancellationError() }
        return SearchPage(answer, request: request)
    }
}

extension SearchPage {
    /// The page of a service's answer to `request`.
    init(_ answer: SearchService<Message>.Answer, request: SearchRequest) {
        self.init(
            hits: answer.hits, next: answer.next.map { SearchCursor(request: request, position: $0) }, progress: answer.progress)
    }
}
