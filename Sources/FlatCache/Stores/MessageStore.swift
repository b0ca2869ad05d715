/// The cached messages, one file per channel holding its most recent ones.
///
/// Get it from ``ChatCache/messages``. Every call is safe from any thread;
/// two writes to one channel never interleave. ``observe(in:)`` follows a
/// channel as it changes (see <doc:ObservingChanges>).
///
/// ```swift
/// try await cache.messages.save(fetched)                                    // upsert
/// let page = try await cache.messages.loadLatest(in: channelURL, limit: 30)  // newest 30, oldest first
/// if let oldest = page.first {
///     let older = try await cache.messages.load(in: channelURL, before: oldest, limit: 30)
///     print(older.count)
/// }
/// ```
public struct MessageStore<Message: MessageRecord>: Sendable {
    let engine: CacheEngine
    let layout: CacheLayout
    let maxPerChannel: Int
    /// The tiers loads and saves use (see ``using(_:)``).
    public private(set) var tier = CacheTier.memoryAndDisk

    var storage: RecordStorage { engine.storage }

    /// This store with every load and save using `tier` (see ``CacheTier``);
    /// removals always act on both tiers.
    ///
    /// Example: `try await cache.messages.using(.memory).loadIfCached(in: channelURL)`
    /// - Parameter tier: Memory and disk (the default), memory only, or disk only.
    /// - Returns: A store that shares this one's cache.
    public func using(_ tier: CacheTier) -> Self {
        var store = self
        store.tier = tier
        return store
    }

    /// How many lines past ``Configuration/maxMessagesPerChannel`` a channel's
    /// file may hold before a write compacts it: a quarter of the limit, at
    /// least 8. New messages are appended to the file until then, so that a
    /// channel at its limit is not rewritten for every message.
    static func slack(forLimit limit: Int) -> Int { max(8, limit / 4) }

    /// Upserts messages: each replaces the cached one with its id or is added,
    /// grouped by channel; each channel then keeps its most recent
    /// ``Configuration/maxMessagesPerChannel``. Unsent messages (id 0) and
    /// messages of open channels are left out.
    ///
    /// A channel whose file would not change is not written.
    /// - important: Requires disk I/O.
    /// - Parameter messages: Messages of any channels, in any order.
    /// - Returns: Files written or unchanged (one per channel), records left out and dropped.
    /// - Throws: ``FlatCacheError/emptyChannelURL`` or
    ///   ``FlatCacheError/serializationFailed(recordType:underlying:)`` (both before
    ///   anything is written), or a file-system error.
    @discardableResult
    func save(_ messages: some Sequence<Message>) throws(FlatCacheError) -> SaveResult {
        try storage.requireWritable(for: tier)  // even a save with nothing to write: the rule is per call
        var (changes, result) = self.changes(saving: messages)
        for (file, change) in try changes.get() {
            let written = try engine.write(change, to: file, rule: appendRule, tier: tier)
            result.count(written.outcome)
            result.recordsDropped += written.dropped
        }
        return result
    }

    /// The cached messages of a channel, oldest first; `[]` when none are cached.
    ///
    /// A file that fails its check is moved aside, logged, and read as `[]`.
    /// - important: Requires disk I/O.
    /// - Throws: ``FlatCacheError/emptyChannelURL`` or a file-system error.
    func load(in channelURL: String) throws(FlatCacheError) -> [Message] {
        try loadIfCached(in: channelURL) ?? []
    }

    /// The cached messages of a channel, oldest first, or `nil` when the
    /// channel was never cached: tells "show a spinner" (`nil`) from "no
    /// messages yet" (`[]`: after `replace(_:in:)` of an empty list, or a
    /// change log that deleted every cached message). A change log, or a save
    /// that leaves every message out, does not make a channel never cached
    /// into one cached as empty.
    ///
    /// ```swift
    /// switch try await cache.messages.loadIfCached(in: channelURL) {
    /// case nil: showSpinner()
    /// case let messages?: show(messages)            // may be empty: "no messages yet"
    /// }
    /// ```
    /// A damaged file is reported, moved aside and read as `nil`, like a
    /// channel never cached: the cache does not know its messages.
    /// - important: Requires disk I/O.
    /// - Parameter channelURL: The channel's URL.
    /// - Returns: The messages, or `nil` when none were ever cached for the channel.
    /// - Throws: ``FlatCacheError/emptyChannelURL`` or a file-system error.
    func loadIfCached(in channelURL: String) throws(FlatCacheError) -> [Message]? {
        let file = try layout.messagesFile(forChannel: channelURL)
        guard used(file) else { return nil }
        let records: [Message]? = try engine.records(file, rule: appendRule, tier: tier)
        return records.map(newest)
    }

    /// Makes `messages` the whole cached content of a channel ("cache, then
    /// replace by API"), keeping the most recent ones and leaving out id 0
    /// and open channels' messages.
    ///
    /// An empty list leaves the channel cached as empty.
    /// - important: Requires disk I/O.
    /// - Throws: ``FlatCacheError/messageInWrongChannel(messageID:channelURL:expectedChannelURL:)``
    ///   (before anything is written), ``FlatCacheError/emptyChannelURL``, or a serialization
    ///   or file-system error.
    @discardableResult
    func replace(_ messages: some Sequence<Message>, in channelURL: String) throws(FlatCacheError) -> SaveResult {
        let file = try layout.messagesFile(forChannel: channelURL)
        var result = SaveResult()
        let fresh = try sent(messages, in: channelURL, counting: &result)
        try storage.requireWritable(for: tier)
        let change = try replacement(fresh)
        saved(file)
        let written = try engine.write(change, to: file, rule: appendRule, tier: tier)
        result.count(written.outcome)
        result.recordsDropped += written.dropped
        return result
    }

    /// Applies a change log from the server: `updated` messages are upserted
    /// (as by `save(_:)`), messages with ids in `deletedMessageIDs` removed.
    ///
    /// - important: Requires disk I/O.
    /// - Throws: ``FlatCacheError/messageInWrongChannel(messageID:channelURL:expectedChannelURL:)``
    ///   (before anything is written), ``FlatCacheError/emptyChannelURL``, or a serialization
    ///   or file-system error.
    @discardableResult
    func applyChangeLog(
        updated: some Sequence<Message>, deletedMessageIDs: some Sequence<Message.MessageID>, in channelURL: String
    ) throws(FlatCacheError) -> SaveResult {
        let file = try layout.messagesFile(forChannel: channelURL)
        var result = SaveResult()
        let changed = try sent(updated, in: channelURL, counting: &result)
        try storage.requireWritable(for: tier)
        let change = try changeLog(changed, deleted: Set(deletedMessageIDs), fresh: saved(file))
        let written = try engine.write(change, to: file, rule: appendRule, tier: tier)
        result.count(written.outcome)
        result.recordsDropped += written.dropped
        return result
    }

    /// Every cached message of every channel, one channel after another (in
    /// the order of their file names), each channel oldest first: for
    /// preloading a whole cache, or exporting it.
    ///
    /// Reads message files whose channel is no longer in the channel list too.
    /// - important: Requires disk I/O; reads every message file.
    /// - Throws: A file-system error.
    func loadAll() throws(FlatCacheError) -> [Message] {
        var all = [Message]()
        for file in try layout.messageFiles() where !policy.isExpired(file) {
            let records: [Message]? = try engine.records(file, rule: appendRule, tier: tier)
            all += newest(records ?? [])
        }
        return all
    }


    /// Removes a channel's cached messages; a channel with none is fine.
    ///
    /// - important: Requires disk I/O.
    /// - Throws: ``FlatCacheError/emptyChannelURL`` or a file-system error.
    func removeAll(in channelURL: String) throws(FlatCacheError) {
        try storage.requireWritable()
        try engine.remove(try layout.messagesFile(forChannel: channelURL))
    }

    // MARK: - Rules

    /// Throws what `save(_:)` would throw for `messages` before writing (an
    /// empty channel URL, a record that cannot be encoded), and writes nothing.
    func validate(_ messages: [Message]) throws(FlatCacheError) {
        for message in messages where message.isSent && message.isInGroupChannel {
            guard !message.channelURL.isEmpty else { throw .emptyChannelURL }
        }
        _ = try storage.serialize(messages)
    }

    /// The messages that may be cached for `channelURL`: all must belong to it;
    /// messages not sent yet and open channels' messages are left out.
    func sent(
        _ messages: some Sequence<Message>, in channelURL: String, counting result: inout SaveResult
    ) throws(FlatCacheError) -> [Message] {
        let messages = Array(messages)
        // Usually all are kept: the array is then returned as it is, not rebuilt message by message.
        let (leftOut, misplaced) = Self.leftOut(messages, in: channelURL)
        if let misplaced {
            let message = messages[misplaced]
            if let id = message.messageID as? Int64 {
                throw .messageInWrongChannel(messageID: id, channelURL: message.channelURL, expectedChannelURL: channelURL)
            }
            throw .misplacedMessage(
                messageID: "\(message.messageID)", channelURL: message.channelURL, expectedChannelURL: channelURL)
        }
        guard !leftOut.isEmpty else { return messages }
        result.recordsLeftOut += leftOut.count
        var kept = [Message]()
        kept.reserveCapacity(messages.count - leftOut.count)
        var next = 0
        for index in messages.indices {
            if next < leftOut.count, leftOut[next] == index {
                next += 1
            } else {
                kept.append(messages[index])
            }
        }
        return kept
    }

    /// The positions of the messages `sent(_:in:counting:)` leaves out (not
    /// sent yet, or of an open channel), unless one belongs to another
    /// channel than `channelURL`: then the first such (`misplaced`).
    /// Specialized for ``ChatMessage`` and read through a buffer pointer:
    /// then checking a message copies none of it (an array's subscript, even
    /// specialized, copied each one whole). Not throwing: the compiler fails
    /// to specialize a function with typed throws.
    @_specialize(where Message == ChatMessage)
    static func leftOut(_ messages: [Message], in channelURL: String) -> (leftOut: [Int], misplaced: Int?) {
        let key = RecordKey(channelURL)
        return messages.withUnsafeBufferPointer { buffer in
            var leftOut = [Int]()
            for index in buffer.indices {
                // Bytes, not String equality (which equates canonically equivalent URLs).
                guard RecordKey(buffer[index].channelURL) == key else { return (leftOut, index) }
                if !buffer[index].isSent || !buffer[index].isInGroupChannel { leftOut.append(index) }
            }
            return (leftOut, nil)
        }
    }

    /// `existing` with each incoming message put in place of the one with its
    /// id, or added; among several with one id, the last wins.
    ///
    /// Specialized for the built-in ``ChatMessage`` (generic dictionary code
    /// was 4x slower here), and no dictionary at all when nothing is cached
    /// and the ids are unique.
    @_specialize(where Message == ChatMessage)
    static func upserting(_ incoming: [Message], into existing: [Message]) -> [Message] {
        if existing.isEmpty {
            var ids = incoming.map { $0.messageID }
            ids.sort()
            var index = 1
            while index < ids.count, ids[index] != ids[index - 1] { index += 1 }
            if index >= ids.count { return incoming }
        }
        // The last incoming message of each id, then where the existing ones with those ids are (the
        // last, should an id repeat): the existing messages' ids read in place, none copied, so that an
        // edit of 5 messages in a channel of 700 costs a pass over their ids, not a copy of each.
        var last = [Message.MessageID: Int](minimumCapacity: incoming.count)
        for position in incoming.indices { last[incoming[position].messageID] = position }
        var found = [Message.MessageID: Int](minimumCapacity: incoming.count)
        existing.withUnsafeBufferPointer { buffer in
            for position in buffer.indices where last[buffer[position].messageID] != nil {
                found[buffer[position].messageID] = position
            }
        }
        var merged = existing
        for (id, position) in found { merged[position] = incoming[last[id]!] }
        // The others added in the order given, each once, as its last version.
        for position in incoming.indices {
            let id = incoming[position].messageID
            guard found[id] == nil, let newest = last.removeValue(forKey: id) else { continue }
            merged.append(incoming[newest])
        }
        return merged
    }

    /// `messages` without those whose ids are in `deleted`, in place: their
    /// positions found with the ids read through a buffer pointer, then each
    /// removed (a filter, or `removeAll(where:)` in generic code, copies or
    /// swaps every message kept).
    @_specialize(where Message == ChatMessage)
    static func remove(_ deleted: Set<Message.MessageID>, from messages: inout [Message]) {
        guard !deleted.isEmpty else { return }
        let positions = messages.withUnsafeBufferPointer { buffer in
            buffer.indices.filter { deleted.contains(buffer[$0].messageID) }
        }
        for position in positions.reversed() { messages.remove(at: position) }
    }

    /// Canonical order, and only the most recent `limit`.
    static func retained(_ messages: [Message], limit: Int, dropped: inout Int) -> [Message] {
        let ordered = CanonicalOrder.messages(messages)
        dropped += max(0, ordered.count - limit)
        return ordered.count <= limit ? ordered : Array(ordered.suffix(limit))
    }

    /// The messages a file's records show, which every change starts from:
    /// the newest `limit`. A file may hold more until its next compaction
    /// (appends within the slack); those were dropped by retention already,
    /// and a change that removes messages must not bring them back. They
    /// count into `dropped`, so that the write that compacts the file counts
    /// them, as docs/format.md says.
    static func shown(_ records: [Message], limit: Int, dropped: inout Int) -> [Message] {
        guard records.count > limit else { return records }
        dropped += records.count - limit
        return Array(records.suffix(limit))
    }

    /// What a load returns of a file's records: the newest `maxPerChannel`
    /// (a file may hold a few more until its next compaction).
    func newest(_ records: [Message]) -> [Message] {
        records.count <= maxPerChannel ? records : Array(records.suffix(maxPerChannel))
    }
}
