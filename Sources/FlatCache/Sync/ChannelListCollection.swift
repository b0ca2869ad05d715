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
/// A channel missing from a whole-list load is gone only when the server
/// says so, never because the list moved while it loaded (a channel moved up
/// by a new message between two pages is in neither). The collection takes
/// the change log token before the first page and asks the change log since
/// it after the last: when the log lists no change, the load is the whole
/// list and every cached channel missing from it is gone; when it lists
/// changes, they are applied on top (channels updated are kept, channels
/// removed go) and the list is loaded again, up to three loads in all. If no
/// load held still, or the change log could not answer, cached channels
/// missing from the loads stay with their messages, the list is cached
/// without a change log token, and the next ``sync()`` loads it whole again.
///
/// The list follows the channel store too: channels other code saves,
/// changes or removes there (through any ``ChatCache`` on the folder in this
/// process) reach ``channels`` and ``events`` as ordinary events. A call whose
/// task is cancelled while the source answers throws `CancellationError`.
///
/// ```swift
/// let list = try ChannelListCollection(store: cache.channels, source: server)
/// Task { for await event in list.events { print(event) } }   // update the view
/// try await list.start()
/// ```
public actor ChannelListCollection<Channel: ChannelRecord>: TakesTurns {
    /// Channels per page when the whole list is loaded.
    public nonisolated let pageSize: Int
    /// The most pages a whole-list load reads; a list longer than this is cut there.
    public nonisolated let maxPages: Int
    /// What happens to the view, in order, until ``dispose()`` finishes the stream.
    ///
    /// Each access is a new listener that gets every event from then on, so
    /// any number of loops may follow one list; the first listener also gets
    /// the events that came before it (see ``MessageCollection/events``).
    public nonisolated var events: AsyncStream<ChannelListEvent<Channel>> { broadcast.subscribe() }

    /// What the view shows: most recent last message first.
    public internal(set) var channels = [Channel]()
    /// Whether ``dispose()`` was called.
    public private(set) var isDisposed = false

    let store: ChannelStore<Channel>
    let source: any ChannelSource<Channel>
    private let broadcast = Broadcast<ChannelListEvent<Channel>>(keepingEarlyElements: true)
    private var started = false
    private var liveEvents: Task<Void, Never>?
    /// Follows the list in the store (see ``followStore()``).
    var storeChanges: Task<Void, Never>?
    /// Calls waiting for the one running (see ``TakesTurns``).
    var turns = Turns()

    /// A collection of the user's channels; nothing happens until ``start()``.
    ///
    /// - Parameters:
    ///   - store: The channel store it caches in (`cache.channels`).
    ///   - source: The chat server: any ``ChannelSource`` of these channels
    ///     (a concrete one, or `any ChannelSource<Channel>`).
    ///   - pageSize: Channels per page, at least 1; 50 by default.
    ///   - maxPages: At least 1; 100 by default.
    /// - Throws: ``FlatCacheError/invalidLimit(_:)`` for a page size or page count under 1.
    public init(store: ChannelStore<Channel>, source: any ChannelSource<Channel>, pageSize: Int = 50, maxPages: Int = 100) throws(FlatCacheError) {
        guard pageSize >= 1 else { throw .invalidLimit(pageSize) }
        guard maxPages >= 1 else { throw .invalidLimit(maxPages) }
        self.store = store
        self.source = source
        self.pageSize = pageSize
        self.maxPages = maxPages
    }

    /// A collection let go without ``dispose()`` stops listening too.
    deinit {
        liveEvents?.cancel()
        storeChanges?.cancel()
        broadcast.finish()
    }

    /// Delivers the cached list (``ChannelListEvent/cachedList(_:)``),
    /// opens the source's live changes, then syncs with the server. A
    /// second call does nothing.
    ///
    /// It asks the server for anything only once ``ChannelSource/channelEvents()``
    /// has returned (the subscription is open), so a change at any time
    /// around the call reaches the list: before the subscription opened, by
    /// the sync that follows; after, live. When the server fails, the cached list
    /// stays shown and this throws; call ``sync()`` when the connection is back.
    ///
    /// - Throws: ``FlatCacheError/sourceFailed(operation:underlying:)``,
    ///   ``FlatCacheError/collectionDisposed``, or an error of the store; `CancellationError`
    ///   when the task was cancelled while the source answered (hence untyped `throws`).
    public func start() async throws {
        try await exclusivelyCancellable { () async throws(FlatCacheError) in
            guard !started else { return }
            started = true
            let cached = try await store.load()
            channels = cached
            emit(.cachedList(cached))
            followStore()
            // Subscribe first: what happens before it opens, the sync below finds; after, the stream brings.
            let stream = await source.channelEvents()
            guard !isDisposed else { throw .collectionDisposed }
            listen(to: stream)
            try await synchronize()
        }
    }

    /// Catches up with the server, as on reconnecting (see the type's description).
    ///
    /// - Throws: ``FlatCacheError/sourceFailed(operation:underlying:)``,
    ///   ``FlatCacheError/collectionDisposed``, or an error of the store; `CancellationError`
    ///   when the task was cancelled while the source answered (hence untyped `throws`).
    public func sync() async throws {
        try await exclusivelyCancellable { () async throws(FlatCacheError) in try await synchronize() }
    }

    /// Stops the collection: live changes stop, the event stream finishes,
    /// and no event comes after this.
    public func dispose() {
        guard !isDisposed else { return }
        isDisposed = true
        liveEvents?.cancel()
        liveEvents = nil
        storeChanges?.cancel()
        storeChanges = nil
        broadcast.finish()
        turns.releaseAll()
    }

    // MARK: - Syncing

    private func synchronize() async throws(FlatCacheError) {
        if let saved = try await store.changeLogToken(), let next = try await applyChangeLogs(since: saved) {
            try await store.setChangeLogToken(next)
            return
        }
        let whole = try await loadWholeList(cached: try await store.load())
        try await store.replace(with: whole.channels)
        // The list first: a crash in between leaves messages no channel shows, never a channel without its messages' file.
        for url in whole.gone { try await store.remove(channelURL: url) }
        let shown = try await store.load()
        channels = shown
        emit(.replaced(shown))
        if let token = whole.token { try await store.setChangeLogToken(token) }
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

    private func listen(to stream: AsyncStream<ChannelEvent<Channel>>) {
        liveEvents = Task { [weak self] in
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
            try await store.save(CollectionOfOne(channel))
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

    func emit(_ event: ChannelListEvent<Channel>) {
        guard !isDisposed else { return }
        broadcast.yield(event)
    }
}
