/// The `async` channel store: loads from memory or the engine's threads,
/// saves to memory with the write scheduled (see ``Configuration/writeDelay``).
extension ChannelStore {
    /// Upserts group channels (see `save(_:)`) in memory and schedules the write.
    ///
    /// Example: `try await cache.channels.save([updated])`
    /// - Throws: ``FlatCacheError/emptyChannelURL``, ``FlatCacheError/readOnlyCache(_:)`` or a
    ///   serialization error, before anything changes; with a ``Configuration/writeDelay``
    ///   of zero, a file-system error too.
    @discardableResult
    public func save(_ channels: some Sequence<Channel>) async throws(FlatCacheError) -> SaveResult {
        try storage.requireWritable(for: tier)
        var counted = SaveResult()
        let change = try upsert(try groupChannels(channels, counting: &counted))
        return counted + (try await engine.add([(layout.channelsFile, change)], tier: tier))
    }

    /// Makes `channels` the whole cached list (see `replace(with:)`)
    /// in memory and schedules the write.
    ///
    /// Unlike a message replace, it is written as given: channels another
    /// `ChatCache` or process saved to the list after it was made and before
    /// its write are not kept (the synchronous `replace(with:)`, written at
    /// once, leaves their later saves in place). Use the synchronous call, or
    /// `writeDelay: .zero`, when another writer shares the folder.
    ///
    /// - Throws: As `save(_:)`.
    @discardableResult
    public func replace(with channels: some Sequence<Channel>) async throws(FlatCacheError) -> SaveResult {
        try storage.requireWritable(for: tier)
        var counted = SaveResult()
        let change = try replacement(try groupChannels(channels, counting: &counted))
        return counted + (try await engine.add([(layout.channelsFile, change)], tier: tier))
    }

    /// The cached group channels, newest first by default.
    ///
    /// Example: `let list = try await cache.channels.load()`
    /// - Throws: A file-system error.
    public func load(order: Order = .newestFirst) async throws(FlatCacheError) -> [Channel] {
        let cached: [Channel]? = try await engine.records(layout.channelsFile, tier: tier)
        return Self.ordered(cached ?? [], order)
    }

    /// The cached channel with this URL, or `nil`.
    ///
    /// - Throws: A file-system error.
    public func channel(withURL channelURL: String) async throws(FlatCacheError) -> Channel? {
        let key = RecordKey(channelURL)
        return try await load().first { RecordKey($0.channelURL) == key }
    }

    /// Removes a channel from the list and its cached messages; returns when both are done.
    ///
    /// - Throws: ``FlatCacheError/emptyChannelURL``, ``FlatCacheError/readOnlyCache(_:)`` or a file-system error.
    public func remove(channelURL: String) async throws(FlatCacheError) {
        try await engine.writing { () throws(FlatCacheError) in try self.remove(channelURL: channelURL) }
    }

    /// The change log token the cached channel list is in sync with (see `changeLogToken()`).
    ///
    /// - Throws: A file-system error.
    public func changeLogToken() async throws(FlatCacheError) -> String? {
        try await engine.writing { () throws(FlatCacheError) in try self.changeLogToken() }
    }

    /// Records the channel list's change log token (see `setChangeLogToken(_:)`); returns once it is on disk.
    ///
    /// - Throws: ``FlatCacheError/readOnlyCache(_:)`` or a file-system error.
    public func setChangeLogToken(_ token: String?) async throws(FlatCacheError) {
        try await engine.writing { () throws(FlatCacheError) in try self.setChangeLogToken(token) }
    }
}
