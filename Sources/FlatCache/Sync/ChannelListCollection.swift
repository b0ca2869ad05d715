/// The user's channel list for a channel list view: the cached list at
/// once, then the server's, kept up to date by the list's change log and
/// live events, ordered by last message.
///
/// ``start()`` delivers the cached list, then syncs: with a change log
/// token saved with the cache, it applies the changes since (channels
/// updated, left or deleted); without one, or when it is too old, it loads
/// the server's whole list a page at a time and replaces the cached one.
/// A channel that goes takes its cached messages with it.
///
/// ```swift
/// let list = try ChannelListCollection(store: cache.channels, source: server)
/// Task { for await event in list.events { print(event) } }   // update the view
/// try await list.start()
/// ```
public actor ChannelListCollection<Source: ChannelSource>: TakesTurns {
    /// The record type of the channels.
    public typealias Channel = Source.Channel

    /// Channels per page when the whole list is loaded.
    public nonisolated let pageSize: Int
    /// The most pages a whole-list load reads; a list longer than this is cut there.
    public nonisolated let maxPages: Int
    /// What happens to the view, in order, until ``dispose()`` finishes the stream.
    public nonisolated let events: AsyncStream<ChannelListEvent<Channel>>

    /// What the view shows: most recent last message first.
    public private(set) var channels = [Channel]()
    /// Whether ``dispose()`` was called.
    public private(set) var isDisposed = false

    private let store: ChannelStore<Channel>
    private let source: Source
    private let continuation: AsyncStream<ChannelListEvent<Channel>>.Continuation
    private var started = false
    private var liveEvents: Task<Void, Never>?
    /// Calls waiting for the one running (see ``TakesTurns``).
    var turns = Turns()

    /// A collection of the user's channels; nothing happens until ``start()``.
    ///
    /// - Parameters:
    ///   - store: The channel store it caches in (`cache.channels`).
    ///   - source: The chat server.
    ///   - pageSize: Channels per page, at least 1; 50 by default.
    ///   - maxPages: At least 1; 100 by default.
    /// - Throws: ``FlatCacheError/invalidLimit(_:)`` for a page size or page count under 1.
    public init(store: ChannelStore<Channel>, source: Source, pageSize: Int = 50, maxPages: Int = 100) throws(FlatCacheError) {
        guard pageSize >= 1 else { throw .invalidLimit(pageSize) }
        guard maxPages >= 1 else { throw .invalidLimit(maxPages) }
        self.store = store
        self.source = source
        self.pageSize = pageSize
        self.maxPages = maxPages
        (events, continuation) = AsyncStream.makeStream(of: ChannelListEvent<Channel>.self)
    }

    /// A collection let go without ``dispose()`` stops listening too.
    deinit {
        liveEvents?.cancel()
        continuation.finish()
    }

    /// Delivers the cached list (``ChannelListEvent/cachedList(_:)``),
    /// starts listening to live changes, then syncs with the server. A
    /// second call does nothing. When the server fails, the cached list
    /// stays shown and this throws; call ``sync()`` when the connection is back.
    ///
    /// - Throws: ``FlatCacheError/sourceFailed(operation:underlying:)``,
    ///   ``FlatCacheError/collectionDisposed``, or an error of the store.
    public func start() async throws(FlatCacheError) {
        try await exclusively { () async throws(FlatCacheError) in
            guard !started else { return }
            started = true
            let cached = try await store.load()
            channels = cached
            emit(.cachedList(cached))
            listen()
            try await synchronize()
        }
    }

    /// Catches up with the server, as on reconnecting (see the type's description).
    ///
    /// - Throws: ``FlatCacheError/sourceFailed(operation:underlying:)``,
    ///   ``FlatCacheError/collectionDisposed``, or an error of the store.
    public func sync() async throws(FlatCacheError) {
        try await exclusively { () async throws(FlatCacheError) in try await synchronize() }
    }

    /// Stops the collection: live changes stop, the event stream finishes,
    /// and no event comes after this.
    public func dispose() {
        guard !isDisposed else { return }
        isDisposed = true
        liveEvents?.cancel()
        liveEvents = nil
        continuation.finish()
        turns.releaseAll()
    }

    // MARK: - Syncing

    private func synchronize() async throws(FlatCacheError) {
        if let saved = try await store.changeLogToken(), let next = try await applyChangeLogs(since: saved) {
            try await store.setChangeLogToken(next)
            return
        }
        let token = try await ask("get the channel list's change log token") { [source] in
            try await source.channelChangeLogToken()
        }
        var list = [Channel]()
        var cursor: String?
        for _ in 0..<maxPages {
            let from = cursor
            let limit = pageSize
            let page = try await ask("get a page of channels") { [source] in try await source.channels(from: from, limit: limit) }
            list += page.channels
            cursor = page.next
            if cursor == nil { break }
        }
        let kept = Set(list.map { RecordKey($0.channelURL) })
        let gone = try await store.load().filter { !kept.contains(RecordKey($0.channelURL)) }
        try await store.replace(with: list)
        // The list first: a crash in between leaves messages no channel shows, never a channel without its messages' file.
        for channel in gone { try await store.remove(channelURL: channel.channelURL) }
        let shown = try await store.load()
        channels = shown
        emit(.replaced(shown))
        try await store.setChangeLogToken(token)
    }

    /// Applies the list's change log since `token`, a page at a time; the
    /// next token, or `nil` when the token was too old.
    private func applyChangeLogs(since token: String) async throws(FlatCacheError) -> String? {
        var token = token
        for _ in 0..<10_000 {
            let since = token
            let log = try await ask("get the channel list's change log") { [source] in
                try await source.channelChangeLog(since: since)
            }
            guard case .changes(let updated, let removed, let next, let hasMore) = log else { return nil }
            for channel in updated { try await apply(.updated(channel)) }
            for url in removed { try await apply(.removed(channelURL: url)) }
            token = next
            if !hasMore { return token }
        }
        return token
    }

    // MARK: - Live changes

    private func listen() {
        let source = source
        liveEvents = Task { [weak self] in
            let stream = await source.channelEvents()
            for await event in stream {
                guard let self, !Task.isCancelled else { return }
                await self.handle(event)
            }
        }
    }

    private func handle(_ event: ChannelEvent<Channel>) async {
        do {
            try await exclusively { () async throws(FlatCacheError) in try await apply(event) }
        } catch .collectionDisposed {
            return
        } catch {
            emit(.failed(error))
        }
    }

    /// Applies one change to the cache and the view, with its event.
    private func apply(_ event: ChannelEvent<Channel>) async throws(FlatCacheError) {
        switch event {
        case .updated(let channel):
            guard channel.isGroupChannel else { return }
            let _: Void = try await store.save(CollectionOfOne(channel))
            let key = RecordKey(channel.channelURL)
            let before = channels.firstIndex { RecordKey($0.channelURL) == key }
            let moved = before.map { channels[$0].lastMessageAt != channel.lastMessageAt } ?? false
            channels = CanonicalOrder.channels(channels.filter { RecordKey($0.channelURL) != key } + [channel])
            emit(before == nil ? .added(channel) : moved ? .moved(channel) : .updated(channel))
        case .removed(let url):
            let key = RecordKey(url)
            try await store.remove(channelURL: url)
            guard channels.contains(where: { RecordKey($0.channelURL) == key }) else { return }
            channels.removeAll { RecordKey($0.channelURL) == key }
            emit(.removed(channelURL: url))
        }
    }

    // MARK: - The view

    private func emit(_ event: ChannelListEvent<Channel>) {
        guard !isDisposed else { return }
        continuation.yield(event)
    }
}
