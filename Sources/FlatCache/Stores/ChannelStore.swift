import Foundation

/// The cached group channels, all in one file, newest last message first.
///
/// Get it from ``ChatCache/channels``. Open channels are never cached: they
/// change too often to be worth it.
///
/// ```swift
/// try await cache.channels.replace(with: fetchedChannels)   // the fresh list from the server
/// try await cache.channels.save([changedChannel])           // a "channel changed" event
/// let list = try await cache.channels.load()                // newest first
/// ```
public struct ChannelStore<Channel: ChannelRecord>: Sendable {
    let engine: CacheEngine
    let layout: CacheLayout
    /// The tiers loads and saves use (see ``using(_:)``).
    public private(set) var tier = CacheTier.memoryAndDisk

    var storage: RecordStorage { engine.storage }

    /// This store with every load and save using `tier` (see ``CacheTier``);
    /// removals always act on both tiers.
    ///
    /// Example: `try await cache.channels.using(.memory).load()`
    /// - Parameter tier: Memory and disk (the default), memory only, or disk only.
    /// - Returns: A store that shares this one's cache.
    public func using(_ tier: CacheTier) -> Self {
        var store = self
        store.tier = tier
        return store
    }

    /// The order `load(order:)` returns channels in.
    public enum Order: Sendable {
        /// Most recent last message first, as a channel list shows them.
        case newestFirst
        /// Oldest last message first.
        case oldestFirst
    }

    /// Upserts channels by URL, as real-time "channel changed" events arrive.
    /// Open channels are left out.
    ///
    /// - important: Requires disk I/O.
    /// - Throws: ``FlatCacheError/emptyChannelURL`` (before anything is written), or a
    ///   serialization or file-system error.
    @discardableResult
    func save(_ channels: some Sequence<Channel>) throws(FlatCacheError) -> SaveResult {
        var result = SaveResult()
        let groups = try groupChannels(channels, counting: &result)
        try storage.requireWritable(for: tier)
        result.count(try engine.write(try upsert(groups), to: layout.channelsFile, tier: tier).outcome)
        return result
    }

    /// Makes `channels` the whole cached channel list ("cache, then replace by
    /// API"). Open channels are left out. Cached messages are kept, even of
    /// channels no longer listed; `remove(channelURL:)` removes those.
    ///
    /// - important: Requires disk I/O.
    /// - Throws: ``FlatCacheError/emptyChannelURL`` (before anything is written), or a
    ///   serialization or file-system error.
    @discardableResult
    func replace(with channels: some Sequence<Channel>) throws(FlatCacheError) -> SaveResult {
        var result = SaveResult()
        let groups = try groupChannels(channels, counting: &result)
        try storage.requireWritable(for: tier)
        result.count(try engine.write(try replacement(groups), to: layout.channelsFile, tier: tier).outcome)
        return result
    }

    /// The cached channels; `[]` when none are cached.
    ///
    /// - Parameter order: ``Order/newestFirst`` (the default) or ``Order/oldestFirst``,
    ///   by last message time; ties go by channel URL.
    /// - important: Requires disk I/O.
    /// - Throws: A file-system error.
    func load(order: Order = .newestFirst) throws(FlatCacheError) -> [Channel] {
        let cached: [Channel]? = try engine.records(layout.channelsFile, tier: tier)
        return Self.ordered(cached ?? [], order)
    }

    /// `channels` (newest first, as cached) in `order`.
    static func ordered(_ channels: [Channel], _ order: Order) -> [Channel] {
        switch order {
        case .newestFirst:
            return channels
        case .oldestFirst:
            return channels.sorted {
                $0.lastMessageAt != $1.lastMessageAt
                    ? $0.lastMessageAt < $1.lastMessageAt
                    : RecordKey($0.channelURL) < RecordKey($1.channelURL)
            }
        }
    }

    func channel(withURL channelURL: String) throws(FlatCacheError) -> Channel? {
        let key = RecordKey(channelURL)
        return try load().first { RecordKey($0.channelURL) == key }
    }

    /// Removes a channel and its cached messages (the user left it, or it was deleted).
    ///
    /// - important: Requires disk I/O.
    /// - Throws: ``FlatCacheError/emptyChannelURL`` or a file-system error.
    func remove(channelURL: String) throws(FlatCacheError) {
        let messagesFile = try layout.messagesFile(forChannel: channelURL)
        try storage.requireWritable()
        _ = try engine.write(removal(of: channelURL), to: layout.channelsFile)
        // Messages after the channel: a crash in between leaves messages that no listed
        // channel shows (removed by the next remove or removeAll), never a broken file.
        try engine.remove(messagesFile)
    }

    /// Throws what `replace(with:)` would throw for `channels` before writing
    /// (an empty channel URL, a record that cannot be encoded), and writes nothing.
    func validate(_ channels: [Channel]) throws(FlatCacheError) {
        var ignored = SaveResult()
        _ = try storage.serialize(try groupChannels(channels, counting: &ignored))
    }

    /// The group channels among `channels`, open ones counted as left out.
    func groupChannels(
        _ channels: some Sequence<Channel>, counting result: inout SaveResult
    ) throws(FlatCacheError) -> [Channel] {
        var groups = [Channel]()
        for channel in channels {
            guard channel.isGroupChannel else {
                result.recordsLeftOut += 1
                continue
            }
            guard !channel.channelURL.isEmpty else { throw .emptyChannelURL }
            groups.append(channel)
        }
        return groups
    }

    // MARK: - Changes

    func upsert(_ groups: [Channel]) throws(FlatCacheError) -> Change<Channel> {
        let lines = try storage.serialize(groups)  // before anything changes
        var change = Change<Channel>(apply: { cached, _ in
            CanonicalOrder.channels(groups.upserted(into: cached ?? [], by: { RecordKey($0.channelURL) }))
        })
        let storage = storage
        change.makeAppendable(
            upserts: zip(groups, lines).map { (RecordKey($0.0.channelURL), $0.1) }, deletions: [],
            keys: { records in RecordKeys.of(records) { RecordKey($0.channelURL) } }, serialize: { try? storage.serialize([$0]).first })
        return change
    }

    func replacement(_ groups: [Channel]) throws(FlatCacheError) -> Change<Channel> {
        _ = try storage.serialize(groups)
        return Change(
            apply: { _, _ in CanonicalOrder.channels(groups.upserted(into: [], by: { RecordKey($0.channelURL) })) },
            replacesAll: true)
    }

    /// Takes the channel out of the list; a list never cached stays never cached.
    private func removal(of channelURL: String) -> Change<Channel> {
        let key = RecordKey(channelURL)
        var change = Change<Channel>(apply: { cached, _ in cached?.filter { RecordKey($0.channelURL) != key } })
        change.makeAppendable(
            upserts: [], deletions: [(key, Data(channelURL.utf8))], keys: { records in RecordKeys.of(records) { RecordKey($0.channelURL) } }, serialize: { _ in nil })
        return change
    }
}
