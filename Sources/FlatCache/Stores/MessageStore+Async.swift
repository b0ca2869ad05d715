/// The `async` message store: what an app calls, from the main actor or any task.
///
/// Loads answer from the memory tier when it holds the channel (after a
/// `stat` that shows nobody wrote its file since), else read on the
/// engine's threads; saves change the memory tier and return, and the files
/// are written within ``Configuration/writeDelay`` (``ChatCache/flush()``
/// waits for them). No call blocks the caller or a cooperative-pool thread
/// on disk I/O or another process's lock.
extension MessageStore {
    /// Upserts messages (as ``Blocking/save(_:)``) in memory and
    /// schedules the writes: returns before they are on disk.
    ///
    /// Example: `try await cache.messages.save(CollectionOfOne(incoming))`
    /// - Throws: ``FlatCacheError/readOnlyCache(_:)``, ``FlatCacheError/emptyChannelURL`` or
    ///   ``FlatCacheError/serializationFailed(recordType:underlying:)``, before anything
    ///   changes; a file-system error reading the file of a channel that expired (the save
    ///   starts it afresh, as `replace(_:in:)` does); with a ``Configuration/writeDelay`` of
    ///   zero, a file-system error writing too.
    @discardableResult
    public func save(_ messages: some Sequence<Message>) async throws(FlatCacheError) -> SaveResult {
        try storage.requireWritable(for: tier)
        let (changes, counted) = self.changes(saving: messages)
        return counted + (try await engine.add(try changes.get(), rule: appendRule, tier: tier))
    }

    /// The cached messages of a channel, oldest first; `[]` when none are cached.
    ///
    /// Example: `let messages = try await cache.messages.load(in: channelURL)`
    /// - Throws: ``FlatCacheError/emptyChannelURL`` or a file-system error.
    public func load(in channelURL: String) async throws(FlatCacheError) -> [Message] {
        try await loadIfCached(in: channelURL) ?? []
    }

    /// The cached messages of a channel, oldest first, or `nil` when it was
    /// never cached (see `loadIfCached(in:)`).
    ///
    /// - Throws: ``FlatCacheError/emptyChannelURL`` or a file-system error.
    public func loadIfCached(in channelURL: String) async throws(FlatCacheError) -> [Message]? {
        let file = try layout.messagesFile(forChannel: channelURL)
        guard used(file) else { return nil }
        let records: [Message]? = try await engine.records(file, rule: appendRule, tier: tier)
        return records.map(newest)
    }

    /// The newest `limit` cached messages of a channel, oldest first: the first screen of a chat view.
    ///
    /// Example: `let screen = try await cache.messages.loadLatest(in: channelURL, limit: 30)`
    /// - Throws: ``FlatCacheError/invalidLimit(_:)``, ``FlatCacheError/emptyChannelURL`` or a file-system error.
    public func loadLatest(in channelURL: String, limit: Int) async throws(FlatCacheError) -> [Message] {
        guard limit >= 0 else { throw .invalidLimit(limit) }
        return try await page(in: channelURL, Self.latest(limit: limit))
    }

    /// Up to `limit` cached messages created before `timestamp` (milliseconds
    /// since 1970), the nearest ones, oldest first.
    ///
    /// - Throws: ``FlatCacheError/invalidLimit(_:)``, ``FlatCacheError/emptyChannelURL`` or a file-system error.
    public func load(
        in channelURL: String, before timestamp: Int64, limit: Int, inclusive: Bool = false
    ) async throws(FlatCacheError) -> [Message] {
        guard limit >= 0 else { throw .invalidLimit(limit) }
        return try await page(in: channelURL, Self.page(before: timestamp, limit: limit, inclusive: inclusive))
    }

    /// Up to `limit` cached messages created after `timestamp` (milliseconds
    /// since 1970), the nearest ones, oldest first.
    ///
    /// - Throws: ``FlatCacheError/invalidLimit(_:)``, ``FlatCacheError/emptyChannelURL`` or a file-system error.
    public func load(
        in channelURL: String, after timestamp: Int64, limit: Int, inclusive: Bool = false
    ) async throws(FlatCacheError) -> [Message] {
        guard limit >= 0 else { throw .invalidLimit(limit) }
        return try await page(in: channelURL, Self.page(after: timestamp, limit: limit, inclusive: inclusive))
    }

    /// Up to `limit` cached messages that come before `message` in the
    /// channel's order, the nearest ones, oldest first: the page above it.
    ///
    /// - Throws: ``FlatCacheError/invalidLimit(_:)``, ``FlatCacheError/emptyChannelURL`` or a file-system error.
    public func load(in channelURL: String, before message: Message, limit: Int) async throws(FlatCacheError) -> [Message] {
        guard limit >= 0 else { throw .invalidLimit(limit) }
        return try await page(in: channelURL, Self.page(before: message, limit: limit))
    }

    /// Up to `limit` cached messages that come after `message` in the
    /// channel's order, the nearest ones, oldest first: the page below it.
    ///
    /// - Throws: ``FlatCacheError/invalidLimit(_:)``, ``FlatCacheError/emptyChannelURL`` or a file-system error.
    public func load(in channelURL: String, after message: Message, limit: Int) async throws(FlatCacheError) -> [Message] {
        guard limit >= 0 else { throw .invalidLimit(limit) }
        return try await page(in: channelURL, Self.page(after: message, limit: limit))
    }

    /// A page of a channel's messages (see `page(in:_:)`), for `async` callers.
    func page(in channelURL: String, _ select: @escaping CacheEngine.Selection<Message>) async throws(FlatCacheError) -> [Message] {
        let file = try layout.messagesFile(forChannel: channelURL)
        guard used(file) else { return [] }
        return try await engine.window(file, rule: appendRule, keeping: maxPerChannel, tier: tier, select: select)
    }

    /// Makes `messages` the whole cached content of a channel (see
    /// `replace(_:in:)`) in memory, and schedules the write.
    ///
    /// The write ends as the synchronous `replace(_:in:)` would, followed by
    /// what other writers (another `ChatCache` on the folder, another process)
    /// did to the channel before it: messages they saved after this call
    /// (new ones, or with other bytes) are kept over `messages`, and the ones
    /// they removed stay out, except ones older than every message the file
    /// then shows while it shows its full ``Configuration/maxMessagesPerChannel``
    /// (retention dropped those). When memory does not know the channel's file,
    /// it is read first, on the cache's threads, to know what it held.
    ///
    /// Example: `try await cache.messages.replace(fresh, in: channelURL)   // "cache, then replace by API"`
    /// - Throws: ``FlatCacheError/messageInWrongChannel(messageID:channelURL:expectedChannelURL:)``,
    ///   ``FlatCacheError/emptyChannelURL``, ``FlatCacheError/readOnlyCache(_:)`` or a serialization
    ///   error, before anything changes; a file-system error reading the channel's file; with a
    ///   ``Configuration/writeDelay`` of zero, one writing it too.
    @discardableResult
    public func replace(_ messages: some Sequence<Message>, in channelURL: String) async throws(FlatCacheError) -> SaveResult {
        try storage.requireWritable(for: tier)
        let file = try layout.messagesFile(forChannel: channelURL)
        var counted = SaveResult()
        let change = try replacement(try sent(messages, in: channelURL, counting: &counted))
        saved(file)
        return counted + (try await engine.add([(file, change)], rule: appendRule, tier: tier))
    }

    /// Applies a change log from the server (see
    /// `applyChangeLog(updated:deletedMessageIDs:in:)`)
    /// in memory, and schedules the write.
    ///
    /// - Throws: As `replace(_:in:)`.
    @discardableResult
    public func applyChangeLog(
        updated: some Sequence<Message>, deletedMessageIDs: some Sequence<Message.MessageID>, in channelURL: String
    ) async throws(FlatCacheError) -> SaveResult {
        try storage.requireWritable(for: tier)
        let file = try layout.messagesFile(forChannel: channelURL)
        var counted = SaveResult()
        let change = try changeLog(
            try sent(updated, in: channelURL, counting: &counted), deleted: Set(deletedMessageIDs), fresh: saved(file))
        return counted + (try await engine.add([(file, change)], rule: appendRule, tier: tier))
    }

    /// What the cache knows complete of a channel, and its change log token
    /// (see `continuity(in:)`); read on the engine's threads.
    ///
    /// Example: `let ranges = try await cache.messages.continuity(in: channelURL).completeRanges`
    /// - Throws: ``FlatCacheError/emptyChannelURL`` or a file-system error.
    public func continuity(in channelURL: String) async throws(FlatCacheError) -> ChannelContinuity {
        try await engine.writing { () throws(FlatCacheError) in try self.continuity(in: channelURL) }
    }

    /// Makes `messages` the cached content of a channel within `range` and
    /// records the range complete (see `replace(_:in:covering:)`); returns
    /// once both are on disk.
    ///
    /// - Throws: As `replace(_:in:covering:)`.
    @discardableResult
    public func replace(
        _ messages: some Sequence<Message>, in channelURL: String, covering range: ClosedRange<Int64>
    ) async throws(FlatCacheError) -> SaveResult {
        let messages = Array(messages)
        return try await engine.writing { () throws(FlatCacheError) in
            try self.replace(messages, in: channelURL, covering: range)
        }
    }

    /// Records the change log token of a channel (see `setChangeLogToken(_:in:)`); returns once it is on disk.
    ///
    /// - Throws: ``FlatCacheError/readOnlyCache(_:)``, ``FlatCacheError/emptyChannelURL`` or a file-system error.
    public func setChangeLogToken(_ token: String?, in channelURL: String) async throws(FlatCacheError) {
        try await engine.writing { () throws(FlatCacheError) in try self.setChangeLogToken(token, in: channelURL) }
    }

    /// Every cached message of every channel (see `loadAll()`).
    ///
    /// - Throws: A file-system error.
    public func loadAll() async throws(FlatCacheError) -> [Message] {
        try await engine.reading { () throws(FlatCacheError) in try self.loadAll() }
    }

    /// Removes a channel's cached messages, with changes to it not yet written; returns when it is done.
    ///
    /// - Throws: ``FlatCacheError/emptyChannelURL``, ``FlatCacheError/readOnlyCache(_:)`` or a file-system error.
    public func removeAll(in channelURL: String) async throws(FlatCacheError) {
        try await engine.writing { () throws(FlatCacheError) in try self.removeAll(in: channelURL) }
    }
}
