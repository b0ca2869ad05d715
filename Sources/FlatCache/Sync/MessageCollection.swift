/// One channel's messages for a chat view: the cache first, then the
/// server; paging back and forth, live events, change logs and gaps.
///
/// The policy is "cache, then replace by API" (Sendbird's
/// `cacheAndReplaceByApi`): ``start()`` delivers the cached page at once
/// (from memory when it is there), then syncs the channel's change log from
/// the token saved with the cache, checks how far the cache is behind, and
/// fetches the server's page, which replaces the cached range in the store
/// and what the view shows. ``loadPrevious()`` and ``loadNext()`` answer
/// from the cache where it is known complete (``ChannelContinuity``), else
/// from the ``MessageSource``, and save what it returns.
///
/// When the cache cannot be patched — the saved change log token is too old
/// (or none was saved), or more messages are missing than
/// ``hugeGapThreshold`` — the server's page becomes the channel's whole
/// cache: every older cached message and every range known complete is
/// dropped, since it may have been edited or deleted since, or is not
/// continuous with the new page. Paging back then asks the server again.
///
/// ```swift
/// let collection = try MessageCollection(channelURL: channelURL, store: cache.messages, source: server)
/// Task { for await event in collection.events { print(event) } }   // update the view
/// try await collection.start()
/// let older = try await collection.loadPrevious()
/// await collection.dispose()
/// ```
///
/// Every call runs one at a time, in the order made: no message is
/// delivered twice, and ``messages`` is always in chronological order
/// (creation time, then id). Messages that share a millisecond, however
/// many, are paged through in that order and never skipped (see the
/// contract of ``MessageSource/messages(in:_:_:limit:)``). A failing source throws
/// ``FlatCacheError/sourceFailed(operation:underlying:)`` and leaves the
/// cache intact; call ``sync()`` when the connection is back. A call whose
/// task is cancelled while the source answers throws `CancellationError`.
///
/// The collection follows its channel in the store too: messages other code
/// saves, changes or removes there (through any ``ChatCache`` on the folder
/// in this process) reach ``messages`` and ``events`` as ordinary
/// ``MessageCollectionEvent/added(_:)``, ``MessageCollectionEvent/updated(_:)``
/// and ``MessageCollectionEvent/deleted(_:)`` events, within what the view
/// spans (new messages after the newest shown when the view reaches the newest);
/// messages retention drops from the cache stay shown.
public actor MessageCollection<Message: MessageRecord>: TakesTurns {
    /// The starting point that shows the newest messages first.
    public static var now: Int64 { .max }

    /// The channel's URL.
    public nonisolated let channelURL: String
    /// Where the view opens: milliseconds since 1970, or ``now``.
    public nonisolated let startingPoint: Int64
    /// How many messages a page holds.
    public nonisolated let pageSize: Int
    /// The most missing messages the collection fetches after the newest it
    /// shows, when it starts or syncs; more is a ``MessageCollectionEvent/hugeGap``
    /// (then the server's newest page replaces the view and the channel's cache).
    ///
    /// Missing means on the server, not shown, and after the oldest shown in
    /// the collection's order (time, then id): a message new in the newest
    /// shown one's millisecond counts (and is added in its place) even when
    /// its id sorts before the newest shown's. Ties count like any message:
    /// one more than the threshold is a huge gap, and a range is recorded
    /// complete only when every message in it was fetched.
    public nonisolated let hugeGapThreshold: Int
    /// What happens to the view, in order, until ``dispose()`` finishes the stream.
    ///
    /// Each access is a new listener that gets every event from then on, so
    /// any number of loops may follow one collection. The first listener also
    /// gets the events that came before it, so a loop a task starts just
    /// before ``start()`` misses none, however late the task runs:
    ///
    /// ```swift
    /// let collection = try MessageCollection(channelURL: channelURL, store: cache.messages, source: server)
    /// Task { for await event in collection.events { print(event) } }
    /// try await collection.start()
    /// ```
    public nonisolated var events: AsyncStream<MessageCollectionEvent<Message>> { broadcast.subscribe() }

    /// What the view shows, oldest first.
    public private(set) var messages = [Message]()
    /// Whether older messages may exist than the oldest shown.
    public private(set) var hasPrevious = true
    /// Whether newer messages may exist than the newest shown (false once
    /// the view reaches the newest: then live messages are added as they come).
    public private(set) var hasNext: Bool
    /// Whether ``dispose()`` was called.
    public private(set) var isDisposed = false
    /// The channel's messages still in the ``Outbox`` (pending, sending or
    /// failed), in the order queued: shown after the newest message, until
    /// the server's copy arrives (see ``MessageCollectionEvent/outboxConfirmed(_:_:)``).
    /// Always empty without an outbox. A huge gap or a reload leaves them.
    public internal(set) var pending = [OutboxEntry<Message>]()

    let store: MessageStore<Message>
    private let source: any MessageSource<Message>
    let outbox: Outbox<Message>?
    private let broadcast = Broadcast<MessageCollectionEvent<Message>>(keepingEarlyElements: true)
    private(set) var shown = Set<Message.MessageID>()
    private var started = false
    private(set) var hugeGapFound = false
    private var liveEvents: Task<Void, Never>?
    var outboxEvents: Task<Void, Never>?
    /// Follows the channel in the store (see ``followStore()``).
    var storeChanges: Task<Void, Never>?
    /// The oldest message the store held when the view last followed it:
    /// shown messages older than it were dropped by retention, not deleted.
    var storeOldest: Message?
    /// Calls waiting for the one running (see ``TakesTurns``).
    var turns = Turns()

    /// A collection of the channel's messages; nothing happens until ``start()``.
    ///
    /// - Parameters:
    ///   - channelURL: The channel's URL.
    ///   - store: The message store it caches in (`cache.messages`).
    ///   - source: The chat server: any ``MessageSource`` of these messages
    ///     (a concrete one, or `any MessageSource<Message>`).
    ///   - startingPoint: Milliseconds since 1970: the view opens on the
    ///     messages created at or before it; ``now`` (the default) opens on the newest.
    ///   - pageSize: Messages per page, at least 1; 30 by default.
    ///   - hugeGapThreshold: At least 0; 300 by default.
    ///   - outbox: The messages not sent yet (`cache.outbox`): the channel's
    ///     entries are shown as ``pending``, and a server's copy arriving by
    ///     any path confirms its entry. `nil` shows none.
    /// - Throws: ``FlatCacheError/emptyChannelURL``, ``FlatCacheError/invalidLimit(_:)`` for a
    ///   page size under 1, ``FlatCacheError/invalidConfiguration(reason:)`` for a negative threshold.
    public init(
        channelURL: String, store: MessageStore<Message>, source: any MessageSource<Message>, startingPoint: Int64 = now,
        pageSize: Int = 30, hugeGapThreshold: Int = 300, outbox: Outbox<Message>? = nil
    ) throws(FlatCacheError) {
        guard !channelURL.isEmpty else { throw .emptyChannelURL }
        guard pageSize >= 1 else { throw .invalidLimit(pageSize) }
        guard hugeGapThreshold >= 0 else {
            throw .invalidConfiguration(reason: "hugeGapThreshold is \(hugeGapThreshold); it must be 0 or more")
        }
        self.channelURL = channelURL
        self.store = store
        self.source = source
        self.startingPoint = startingPoint
        self.pageSize = pageSize
        self.hugeGapThreshold = hugeGapThreshold
        self.outbox = outbox
        hasNext = startingPoint != .max
    }

    /// A collection let go without ``dispose()`` stops listening too.
    deinit {
        liveEvents?.cancel()
        outboxEvents?.cancel()
        storeChanges?.cancel()
        broadcast.finish()
    }

    // MARK: - What an app calls

    /// Delivers the cached page (``MessageCollectionEvent/cachedPage(_:)``),
    /// opens the source's live events, then brings the channel up to date
    /// with the server (see the type's description). A second call does nothing.
    ///
    /// It asks the server for anything only once ``MessageSource/liveEvents()``
    /// has returned (the subscription is open), so a message sent at any time
    /// around the call reaches the view: before the subscription opened, by
    /// the sync that follows; after, live (shown once if both).
    ///
    /// When it returns, its last event was the server's page
    /// (``MessageCollectionEvent/replaced(_:)``, after a
    /// ``MessageCollectionEvent/hugeGap`` when there was one). When the
    /// server fails, the cached page stays shown and this throws; call
    /// ``sync()`` when the connection is back.
    /// - Throws: ``FlatCacheError/sourceFailed(operation:underlying:)``,
    ///   ``FlatCacheError/collectionDisposed``, or an error of the store; `CancellationError`
    ///   when the task was cancelled while the source answered (hence untyped `throws`).
    public func start() async throws {
        try await exclusivelyCancellable { () async throws(FlatCacheError) in
            guard !started else { return }
            started = true
            let cached: [Message] =
                startingPoint == .max
                ? try await store.loadLatest(in: channelURL, limit: pageSize)
                : try await store.load(in: channelURL, before: startingPoint, limit: pageSize, inclusive: true)
            show(cached)
            emit(.cachedPage(cached))
            followStore()
            try await showOutbox()
            // Subscribe first: what happens before it opens, the sync below finds; after, the stream brings.
            let stream = await source.liveEvents()
            guard !isDisposed else { throw .collectionDisposed }
            listen(to: stream)
            try await synchronize(replacingPage: true)
        }
    }

    /// Catches up with the server, as on reconnecting: applies the channel's
    /// change log since the saved token, then fetches the messages missing
    /// after the newest shown. Past the threshold that is a
    /// ``MessageCollectionEvent/hugeGap``, and the server's newest page
    /// replaces what is shown. When the token is too old, or none was saved,
    /// the server's page at the starting point replaces what is shown. Either
    /// replacement is also the channel's whole cache (see the type's description).
    ///
    /// - Throws: ``FlatCacheError/sourceFailed(operation:underlying:)``,
    ///   ``FlatCacheError/collectionDisposed``, or an error of the store; `CancellationError`
    ///   when the task was cancelled while the source answered (hence untyped `throws`).
    public func sync() async throws {
        try await exclusivelyCancellable { () async throws(FlatCacheError) in
            try await synchronize(replacingPage: false)
        }
    }

    /// The page before the oldest message shown, oldest first, added to
    /// ``messages`` and told as ``MessageCollectionEvent/prepended(_:)``
    /// (a message of it that sorts among those shown, one not shown that
    /// shares a shown one's millisecond, as ``MessageCollectionEvent/added(_:)``
    /// just before): from the cache when it is known complete there, else from the server
    /// (then saved). `[]` (and no event) when ``hasPrevious`` is false.
    ///
    /// - Throws: ``FlatCacheError/sourceFailed(operation:underlying:)``,
    ///   ``FlatCacheError/collectionDisposed``, or an error of the store; `CancellationError`
    ///   when the task was cancelled while the source answered (hence untyped `throws`).
    @discardableResult
    public func loadPrevious() async throws -> [Message] {
        try await exclusivelyCancellable { () async throws(FlatCacheError) -> [Message] in
            guard hasPrevious else { return [] }
            let page = try await previousPage()
            hasPrevious = page.hasMore
            let fresh = page.messages.filter { !shown.contains($0.messageID) }
            let oldest = messages.first
            let (before, among) = split(fresh) { message in oldest.map { CanonicalOrder.precedes(message, $0) } ?? true }
            show(fresh + messages)
            if !among.isEmpty { emit(.added(among)) }
            if !before.isEmpty { emit(.prepended(before)) }
            return fresh
        }
    }

    /// The page after the newest message shown, oldest first, added to
    /// ``messages`` and told as ``MessageCollectionEvent/appended(_:)``
    /// (a message of it that sorts among those shown, one not shown that
    /// shares a shown one's millisecond, as ``MessageCollectionEvent/added(_:)``
    /// just before): from the cache when it is known complete there, else from the server
    /// (then saved). `[]` (and no event) when ``hasNext`` is false.
    ///
    /// - Throws: ``FlatCacheError/sourceFailed(operation:underlying:)``,
    ///   ``FlatCacheError/collectionDisposed``, or an error of the store; `CancellationError`
    ///   when the task was cancelled while the source answered (hence untyped `throws`).
    @discardableResult
    public func loadNext() async throws -> [Message] {
        try await exclusivelyCancellable { () async throws(FlatCacheError) -> [Message] in
            guard hasNext, !hugeGapFound else { return [] }
            let page = try await nextPage()
            hasNext = page.hasMore
            let fresh = page.messages.filter { !shown.contains($0.messageID) }
            let newest = messages.last
            let (after, among) = split(fresh) { message in newest.map { CanonicalOrder.precedes($0, message) } ?? true }
            show(messages + fresh)
            if !among.isEmpty { emit(.added(among)) }
            if !after.isEmpty { emit(.appended(after)) }
            return fresh
        }
    }

    /// Stops the collection: live events stop, the event stream finishes,
    /// a call under way ends with ``FlatCacheError/collectionDisposed``
    /// after its current step, and no event comes after this.
    public func dispose() {
        guard !isDisposed else { return }
        isDisposed = true
        liveEvents?.cancel()
        liveEvents = nil
        outboxEvents?.cancel()
        outboxEvents = nil
        storeChanges?.cancel()
        storeChanges = nil
        broadcast.finish()
        turns.releaseAll()
    }

    // MARK: - Syncing

    /// The change log, then the gap or the server's page (see ``start()`` and ``sync()``).
    private func synchronize(replacingPage: Bool) async throws(FlatCacheError) {
        var token = try await store.continuity(in: channelURL).changeLogToken
        if let saved = token { token = try await applyChangeLogs(since: saved) }
        guard let token else {
            // Too old, or none saved: nothing cached is known to match the server now.
            try await reload(newest: false)
            return
        }
        if !hasNext, !hugeGapFound {
            guard try await fillGap(addingToView: !replacingPage) else {
                hugeGapFound = true
                // Should the reload fail, the next sync (or collection) reloads: the cache is not patched across the gap.
                try await store.setChangeLogToken(nil, in: channelURL)
                emit(.hugeGap)
                try await reload(newest: true)
                return
            }
        }
        if replacingPage { try await replaceWithServerPage() }
        try await store.setChangeLogToken(token, in: channelURL)
    }

    /// The server's page (at the starting point, or the `newest`) becomes
    /// the channel's whole cache, with a fresh change log token: after a
    /// token too old (or none saved) the cache may hold messages deleted or
    /// edited since, anywhere; after a huge gap its older messages are not
    /// continuous with the new page. Either way they and every range known
    /// complete go; older pages come from the server again.
    private func reload(newest: Bool) async throws(FlatCacheError) {
        let fresh = try await ask("get a change log token") { [source, channelURL] in
            try await source.changeLogToken(in: channelURL)
        }
        try await replaceWithServerPage(newest: newest, wholeCache: true)
        try await store.setChangeLogToken(fresh, in: channelURL)
    }

    /// Applies the change log since `token` to the cache, a page at a time,
    /// and tells the view of shown messages changed or deleted. Returns the
    /// next token, or `nil` when the token was too old.
    ///
    /// Only messages the cache holds are updated: a message new since the
    /// token is the gap's to fetch (and count), not the change log's to save.
    private func applyChangeLogs(since token: String) async throws(FlatCacheError) -> String? {
        var token = token
        let known = shown.union(try await store.load(in: channelURL).map(\.messageID))
        // Bounded: a server that always says "more" cannot keep the collection here.
        for _ in 0..<10_000 {
            let since = token
            let log = try await ask("get the change log") { [source, channelURL] in
                try await source.changeLog(in: channelURL, since: since)
            }
            guard case .changes(let updated, let deleted, let next, let hasMore) = log else { return nil }
            let mine = updated.filter { $0.channelURL == channelURL && known.contains($0.messageID) }
            try await store.applyChangeLog(updated: mine, deletedMessageIDs: deleted, in: channelURL)
            let changedShown = mine.filter { shown.contains($0.messageID) }
            if !changedShown.isEmpty {
                replaceShown(changedShown)
                emit(.updated(changedShown))
            }
            let deletedShown = deleted.filter { shown.contains($0) }
            if !deletedShown.isEmpty {
                removeShown(Set(deletedShown))
                emit(.deleted(deletedShown))
            }
            token = next
            if !hasMore { return token }
        }
        return token
    }

    /// Fetches the messages after the newest shown, a page at a time, and
    /// saves them with their range known complete; `false` when more than
    /// ``hugeGapThreshold`` are missing (then this step saves and shows nothing).
    ///
    /// Missing means not shown and after the oldest shown in the collection's
    /// order (time, then id): a new message that shares the newest shown's
    /// millisecond but sorts before it is missing too, and goes in its place.
    private func fillGap(addingToView: Bool) async throws(FlatCacheError) -> Bool {
        let oldest = messages.first
        let newest = messages.last
        let lowest = newest?.createdAt ?? ChannelContinuity.channelStart
        // From the newest shown's millisecond on: others may share it.
        var after = newest.map { $0.createdAt &- 1 } ?? ChannelContinuity.channelStart
        var tied = messages.reversed().prefix { $0.createdAt == newest?.createdAt }.count
        var missing = [Message]()
        var returned = [Message.MessageID: Message]()  // every message of the range, shown ones too: the store keeps them
        var seen = shown
        var highest = lowest
        let pageLimit = max(pageSize, 100)
        // Each round finds a missing message, or the end: bounded by the threshold plus one.
        for _ in 0...(hugeGapThreshold + 1) {
            let wanted = min(pageLimit, hugeGapThreshold + 1 - missing.count)
            let isMissing: @Sendable (Message) -> Bool = { [seen] message in
                !seen.contains(message.messageID) && oldest.map { !CanonicalOrder.precedes(message, $0) } ?? true
            }
            let from = after
            // Pages end on whole milliseconds, so no unseen message of a millisecond is stepped past.
            let page = try await WholeMilliseconds.page(
                in: channelURL, .after, from, limit: wanted + tied + 1,
                enough: { $0.count { isMissing($0) } >= wanted }
            ) { (limit: Int) async throws(FlatCacheError) in
                try await ask("get the messages after the newest shown") { [source, channelURL] in
                    try await source.messages(in: channelURL, .after, from, limit: limit)
                }
            }
            let fresh = page.messages.filter(isMissing)
            missing += fresh
            seen.formUnion(fresh.map(\.messageID))
            if missing.count > hugeGapThreshold { return false }
            for message in page.messages { returned[message.messageID] = message }
            guard let last = page.messages.last else { break }
            highest = max(highest, last.createdAt)
            guard page.hasMore else { break }
            after = last.createdAt
            tied = 0
        }
        // Every millisecond up to the highest returned was returned whole.
        if lowest <= highest {
            try await store.replace(Array(returned.values), in: channelURL, covering: lowest...highest)
        }
        if addingToView {
            let ordered = CanonicalOrder.messages(missing)
            show(messages + ordered)
            if !ordered.isEmpty { emit(.added(ordered)) }
        }
        return true
    }

    /// Fetches the server's page at the starting point (or the newest),
    /// saves it over the cached range (or as the `wholeCache`), and shows it
    /// (``MessageCollectionEvent/replaced(_:)``).
    private func replaceWithServerPage(newest: Bool = false, wholeCache: Bool = false) async throws(FlatCacheError) {
        let point = newest ? Int64.max : startingPoint
        let before = point == .max ? Int64.max : point &+ 1
        let limit = pageSize
        let page = try await ask("get the page at the starting point") { [source, channelURL] in
            try await source.messages(in: channelURL, .before, before, limit: limit)
        }
        let fresh = CanonicalOrder.messages(page.messages.filter { $0.channelURL == channelURL && $0.createdAt < before })
        let lower = page.hasMore ? (fresh.first.map { $0.createdAt &+ 1 } ?? before) : ChannelContinuity.channelStart
        let upper = point == .max ? (fresh.last?.createdAt ?? lower) : point
        // Messages and ranges of the old content go first (the whole replace drops the continuity file).
        if wholeCache { try await store.replace(fresh, in: channelURL) }
        // An empty channel at "now" says nothing about any time.
        if lower <= upper, !(fresh.isEmpty && point == .max) {
            try await store.replace(fresh.filter { (lower...upper).contains($0.createdAt) }, in: channelURL, covering: lower...upper)
        }
        // The page's oldest millisecond is not known complete, but its messages are the server's.
        let outside = fresh.filter { !(lower...max(lower, upper)).contains($0.createdAt) }
        if !outside.isEmpty { try await store.save(outside) }
        hasPrevious = page.hasMore
        hasNext = point != .max
        hugeGapFound = false  // the view is the server's now: no hole left before the newest
        show(fresh)
        emit(.replaced(fresh))
    }

    // MARK: - Paging

    /// The page before the oldest shown: cached when the cache is complete there.
    ///
    /// From the server, pages are asked from the oldest shown's millisecond
    /// (others may share it) and end on whole milliseconds (``WholeMilliseconds``);
    /// the page is the `pageSize` messages not shown that come before the
    /// newest shown in the collection's order, nearest first.
    private func previousPage() async throws(FlatCacheError) -> MessagePage<Message> {
        if let oldest = messages.first,
            let range = try await store.continuity(in: channelURL).completeRange(containing: oldest.createdAt)
        {
            let cached = try await store.load(in: channelURL, before: oldest, limit: pageSize)
            if cached.count == pageSize, let first = cached.first, first.createdAt >= range.lowerBound {
                return MessagePage(messages: cached, hasMore: true)
            }
            if range.lowerBound == ChannelContinuity.channelStart {
                return MessagePage(messages: cached, hasMore: false)
            }
        }
        let oldest = messages.first
        let newest = messages.last
        let before = oldest.map { $0.createdAt &+ 1 } ?? (startingPoint == .max ? .max : startingPoint &+ 1)
        let tied = messages.prefix { $0.createdAt == oldest?.createdAt }.count
        let isWanted: @Sendable (Message) -> Bool = { [shown] message in
            !shown.contains(message.messageID) && newest.map { !CanonicalOrder.precedes($0, message) } ?? true
        }
        let page = try await WholeMilliseconds.page(
            in: channelURL, .before, before, limit: pageSize + tied + 1,
            enough: { $0.count { isWanted($0) } >= pageSize }
        ) { (limit: Int) async throws(FlatCacheError) in
            try await ask("get the page before the oldest shown") { [source, channelURL] in
                try await source.messages(in: channelURL, .before, before, limit: limit)
            }
        }
        // Its oldest millisecond is whole: complete from there (from the channel's start at its end).
        let lower = page.hasMore ? (page.messages.first?.createdAt ?? before) : ChannelContinuity.channelStart
        // Nothing shown at "now": complete only up to the newest returned, not into the future.
        let upper = oldest != nil || startingPoint != .max ? before &- 1 : page.messages.last?.createdAt
        if let upper, lower <= upper {
            try await store.replace(page.messages, in: channelURL, covering: lower...upper)
        } else if !page.messages.isEmpty {
            try await store.save(page.messages)
        }
        let wanted = page.messages.filter(isWanted)
        return MessagePage(messages: Array(wanted.suffix(pageSize)), hasMore: page.hasMore || wanted.count > pageSize)
    }

    /// The page after the newest shown: cached when the cache is complete there.
    ///
    /// Both ways, it starts at the newest shown's millisecond, so that a
    /// message not shown that shares it (and sorts before the newest shown)
    /// is not passed over; from the server, pages end on whole milliseconds
    /// (``WholeMilliseconds``), so a millisecond with more messages than a
    /// page is paged through, not stepped over.
    private func nextPage() async throws(FlatCacheError) -> MessagePage<Message> {
        let oldest = messages.first
        let newest = messages.last
        let tied = messages.reversed().prefix { $0.createdAt == newest?.createdAt }.count
        let isWanted: @Sendable (Message) -> Bool = { [shown] message in
            !shown.contains(message.messageID) && oldest.map { !CanonicalOrder.precedes(message, $0) } ?? true
        }
        if let newest, let range = try await store.continuity(in: channelURL).completeRange(containing: newest.createdAt) {
            let cached = try await store.load(in: channelURL, after: newest.createdAt, limit: pageSize + tied, inclusive: true)
            let wanted = cached.filter(isWanted)
            if wanted.count == pageSize, let last = wanted.last, last.createdAt <= range.upperBound {
                return MessagePage(messages: wanted, hasMore: true)
            }
        }
        let after = newest.map { $0.createdAt &- 1 } ?? startingPoint
        let page = try await WholeMilliseconds.page(
            in: channelURL, .after, after, limit: pageSize + tied + 1,
            enough: { $0.count { isWanted($0) } >= pageSize }
        ) { (limit: Int) async throws(FlatCacheError) in
            try await ask("get the page after the newest shown") { [source, channelURL] in
                try await source.messages(in: channelURL, .after, after, limit: limit)
            }
        }
        // Every millisecond the page reaches is whole: complete up to its newest.
        let lower = after &+ 1
        let upper = page.messages.last?.createdAt ?? lower
        if lower <= upper {
            try await store.replace(page.messages, in: channelURL, covering: lower...upper)
        }
        let wanted = page.messages.filter(isWanted)
        return MessagePage(messages: Array(wanted.prefix(pageSize)), hasMore: page.hasMore || wanted.count > pageSize)
    }

    // MARK: - Live events

    /// Starts handling the source's live events, one at a time, in order.
    private func listen(to stream: AsyncStream<LiveEvent<Message>>) {
        liveEvents = Task { [weak self] in
            for await event in stream {
                guard let self, !Task.isCancelled else { return }
                await self.handle(event)
            }
        }
    }

    /// Applies a live event to the cache and the view; a failure is an event.
    private func handle(_ event: LiveEvent<Message>) async {
        do {
            try await exclusively { () async throws(FlatCacheError) in try await apply(event) }
        } catch .collectionDisposed {
            return
        } catch {
            emit(.failed(error))
        }
    }

    private func apply(_ event: LiveEvent<Message>) async throws(FlatCacheError) {
        switch event {
        case .messageAdded(let message) where message.channelURL == channelURL:
            try await store.save(CollectionOfOne(message))
            // Shown only when the view reaches the newest and has no hole before it.
            guard !hasNext, !hugeGapFound, !shown.contains(message.messageID) else { return }
            show(messages + [message])
            emit(.added([message]))
        case .messageUpdated(let message) where message.channelURL == channelURL:
            try await store.save(CollectionOfOne(message))
            guard shown.contains(message.messageID) else { return }
            replaceShown([message])
            emit(.updated([message]))
        case .messageDeleted(let id, let url) where url == channelURL:
            try await store.applyChangeLog(updated: [], deletedMessageIDs: CollectionOfOne(id), in: channelURL)
            guard shown.contains(id) else { return }
            removeShown([id])
            emit(.deleted([id]))
        case .channelUpdated(let url) where url == channelURL:
            emit(.channelUpdated)
        case .channelDeleted(let url) where url == channelURL:
            try await store.removeAll(in: channelURL)
            show([])
            hasPrevious = false
            hasNext = false
            emit(.channelDeleted)
        default:
            return
        }
    }

    // MARK: - The view

    /// Makes `list` what the view shows, in chronological order, each id once.
    func show(_ list: [Message]) {
        var seen = Set<Message.MessageID>()
        messages = CanonicalOrder.messages(list.filter { seen.insert($0.messageID).inserted })
        shown = seen
    }

    func replaceShown(_ changed: [Message]) {
        let byID = Dictionary(changed.map { ($0.messageID, $0) }, uniquingKeysWith: { _, last in last })
        show(messages.map { byID[$0.messageID] ?? $0 })
    }

    func removeShown(_ ids: Set<Message.MessageID>) {
        show(messages.filter { !ids.contains($0.messageID) })
    }

    /// `page` as the messages beyond every one shown (`isBeyond`) and those
    /// that fall among them (one not shown that shares a shown one's
    /// millisecond): told as ``MessageCollectionEvent/prepended(_:)`` or
    /// ``MessageCollectionEvent/appended(_:)``, and as ``MessageCollectionEvent/added(_:)``.
    private func split(_ page: [Message], isBeyond: (Message) -> Bool) -> (beyond: [Message], among: [Message]) {
        var (beyond, among) = ([Message](), [Message]())
        for message in page { if isBeyond(message) { beyond.append(message) } else { among.append(message) } }
        return (beyond, among)
    }

    func emit(_ event: MessageCollectionEvent<Message>) {
        guard !isDisposed else { return }
        broadcast.yield(event)
        if !pending.isEmpty { confirmEchoes(event.messagesShown) }
    }
}
