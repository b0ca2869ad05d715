/// The blocking message store, for code that may wait on the disk: a
/// command-line tool, a script, a background thread of its own.
extension MessageStore {
    /// The same calls, each returning only once its work is on disk (or read
    /// from it), on the caller's thread.
    ///
    /// ```swift
    /// let result = try cache.messages.blocking.save(fetched)   // on disk when it returns
    /// ```
    public var blocking: Blocking { Blocking(store: self) }

    /// The message store's blocking calls: the twins of its `async` calls,
    /// with the same names, arguments and results, that do the disk I/O on
    /// the caller's thread.
    ///
    /// Each call blocks the calling thread on disk I/O and on other
    /// processes' file locks. An app calls the `async` forms
    /// (`try await cache.messages.save(…)`); these are for a tool's `main`,
    /// a script or a thread of its own.
    public struct Blocking: Sendable {
        let store: MessageStore

        /// Upserts messages and writes them before it returns: each replaces
        /// the cached one with its id or is added, grouped by channel; each
        /// channel then keeps its most recent ``Configuration/maxMessagesPerChannel``.
        /// Unsent messages (id 0) and messages of open channels are left out.
        /// A channel whose file would not change is not written.
        ///
        /// - important: Blocks the calling thread on disk I/O and other processes' locks: never call it from the main actor or a task.
        /// - Parameter messages: Messages of any channels, in any order.
        /// - Returns: Files written or unchanged (one per channel), records left out and dropped.
        /// - Throws: ``FlatCacheError/emptyChannelURL``, ``FlatCacheError/readOnlyCache(_:)`` or
        ///   ``FlatCacheError/serializationFailed(recordType:underlying:)`` (before
        ///   anything is written), or a file-system error.
        @discardableResult
        public func save(_ messages: some Sequence<Message>) throws(FlatCacheError) -> SaveResult {
            try store.save(messages)
        }

        /// The cached messages of a channel, oldest first; `[]` when none are
        /// cached. A file that fails its check is moved aside, logged, and read as `[]`.
        ///
        /// - important: Blocks the calling thread on disk I/O and other processes' locks: never call it from the main actor or a task.
        /// - Parameter channelURL: The channel's URL.
        /// - Returns: The messages.
        /// - Throws: ``FlatCacheError/emptyChannelURL`` or a file-system error.
        public func load(in channelURL: String) throws(FlatCacheError) -> [Message] {
            try store.load(in: channelURL)
        }

        /// The cached messages of a channel, oldest first, or `nil` when the
        /// channel was never cached (see ``MessageStore/loadIfCached(in:)``).
        ///
        /// - important: Blocks the calling thread on disk I/O and other processes' locks: never call it from the main actor or a task.
        /// - Parameter channelURL: The channel's URL.
        /// - Returns: The messages, or `nil` when none were ever cached for the channel.
        /// - Throws: ``FlatCacheError/emptyChannelURL`` or a file-system error.
        public func loadIfCached(in channelURL: String) throws(FlatCacheError) -> [Message]? {
            try store.loadIfCached(in: channelURL)
        }

        /// The newest `limit` cached messages of a channel, oldest first.
        ///
        /// - important: Blocks the calling thread on disk I/O and other processes' locks: never call it from the main actor or a task.
        /// - Parameters:
        ///   - channelURL: The channel's URL.
        ///   - limit: The most messages to return.
        /// - Returns: The messages.
        /// - Throws: ``FlatCacheError/invalidLimit(_:)``, ``FlatCacheError/emptyChannelURL`` or a file-system error.
        public func loadLatest(in channelURL: String, limit: Int) throws(FlatCacheError) -> [Message] {
            try store.loadLatest(in: channelURL, limit: limit)
        }

        /// Up to `limit` cached messages created before `timestamp`
        /// (milliseconds since 1970), the nearest ones, oldest first.
        ///
        /// - important: Blocks the calling thread on disk I/O and other processes' locks: never call it from the main actor or a task.
        /// - Parameters:
        ///   - channelURL: The channel's URL.
        ///   - timestamp: Milliseconds since 1970.
        ///   - limit: The most messages to return.
        ///   - inclusive: Whether messages created at `timestamp` count.
        /// - Returns: The messages.
        /// - Throws: ``FlatCacheError/invalidLimit(_:)``, ``FlatCacheError/emptyChannelURL`` or a file-system error.
        public func load(
            in channelURL: String, before timestamp: Int64, limit: Int, inclusive: Bool = false
        ) throws(FlatCacheError) -> [Message] {
            try store.load(in: channelURL, before: timestamp, limit: limit, inclusive: inclusive)
        }

        /// Up to `limit` cached messages created after `timestamp`
        /// (milliseconds since 1970), the nearest ones, oldest first.
        ///
        /// - important: Blocks the calling thread on disk I/O and other processes' locks: never call it from the main actor or a task.
        /// - Parameters:
        ///   - channelURL: The channel's URL.
        ///   - timestamp: Milliseconds since 1970.
        ///   - limit: The most messages to return.
        ///   - inclusive: Whether messages created at `timestamp` count.
        /// - Returns: The messages.
        /// - Throws: ``FlatCacheError/invalidLimit(_:)``, ``FlatCacheError/emptyChannelURL`` or a file-system error.
        public func load(
            in channelURL: String, after timestamp: Int64, limit: Int, inclusive: Bool = false
        ) throws(FlatCacheError) -> [Message] {
            try store.load(in: channelURL, after: timestamp, limit: limit, inclusive: inclusive)
        }

        /// Up to `limit` cached messages that come before `message` in the
        /// channel's order, the nearest ones, oldest first.
        ///
        /// - important: Blocks the calling thread on disk I/O and other processes' locks: never call it from the main actor or a task.
        /// - Parameters:
        ///   - channelURL: The channel's URL.
        ///   - message: The message the page ends before.
        ///   - limit: The most messages to return.
        /// - Returns: The messages.
        /// - Throws: ``FlatCacheError/invalidLimit(_:)``, ``FlatCacheError/emptyChannelURL`` or a file-system error.
        public func load(in channelURL: String, before message: Message, limit: Int) throws(FlatCacheError) -> [Message] {
            try store.load(in: channelURL, before: message, limit: limit)
        }

        /// Up to `limit` cached messages that come after `message` in the
        /// channel's order, the nearest ones, oldest first.
        ///
        /// - important: Blocks the calling thread on disk I/O and other processes' locks: never call it from the main actor or a task.
        /// - Parameters:
        ///   - channelURL: The channel's URL.
        ///   - message: The message the page starts after.
        ///   - limit: The most messages to return.
        /// - Returns: The messages.
        /// - Throws: ``FlatCacheError/invalidLimit(_:)``, ``FlatCacheError/emptyChannelURL`` or a file-system error.
        public func load(in channelURL: String, after message: Message, limit: Int) throws(FlatCacheError) -> [Message] {
            try store.load(in: channelURL, after: message, limit: limit)
        }

        /// Makes `messages` the whole cached content of a channel ("cache,
        /// then replace by API"), keeping the most recent ones and leaving out
        /// id 0 and open channels' messages; written before it returns. An
        /// empty list leaves the channel cached as empty.
        ///
        /// - important: Blocks the calling thread on disk I/O and other processes' locks: never call it from the main actor or a task.
        /// - Parameters:
        ///   - messages: The channel's messages.
        ///   - channelURL: The channel's URL.
        /// - Returns: The file written or unchanged, records left out and dropped.
        /// - Throws: ``FlatCacheError/messageInWrongChannel(messageID:channelURL:expectedChannelURL:)``
        ///   (before anything is written), ``FlatCacheError/emptyChannelURL``,
        ///   ``FlatCacheError/readOnlyCache(_:)``, or a serialization or file-system error.
        @discardableResult
        public func replace(_ messages: some Sequence<Message>, in channelURL: String) throws(FlatCacheError) -> SaveResult {
            try store.replace(messages, in: channelURL)
        }

        /// Applies a change log from the server: `updated` messages are
        /// upserted, messages with ids in `deletedMessageIDs` removed; written
        /// before it returns.
        ///
        /// - important: Blocks the calling thread on disk I/O and other processes' locks: never call it from the main actor or a task.
        /// - Parameters:
        ///   - updated: New and edited messages of the channel.
        ///   - deletedMessageIDs: The ids of messages deleted on the server.
        ///   - channelURL: The channel's URL.
        /// - Returns: The file written or unchanged, records left out and dropped.
        /// - Throws: As ``replace(_:in:)``.
        @discardableResult
        public func applyChangeLog(
            updated: some Sequence<Message>, deletedMessageIDs: some Sequence<Message.MessageID>, in channelURL: String
        ) throws(FlatCacheError) -> SaveResult {
            try store.applyChangeLog(updated: updated, deletedMessageIDs: deletedMessageIDs, in: channelURL)
        }

        /// Every cached message of every channel.
        ///
        /// - important: Blocks the calling thread on disk I/O and other processes' locks: never call it from the main actor or a task.
        /// - Returns: The messages, channel by channel.
        /// - Throws: A file-system error.
        public func loadAll() throws(FlatCacheError) -> [Message] {
            try store.loadAll()
        }

        /// Removes a channel's cached messages, with changes to it not yet written.
        ///
        /// - important: Blocks the calling thread on disk I/O and other processes' locks: never call it from the main actor or a task.
        /// - Parameter channelURL: The channel's URL.
        /// - Throws: ``FlatCacheError/emptyChannelURL``, ``FlatCacheError/readOnlyCache(_:)`` or a file-system error.
        public func removeAll(in channelURL: String) throws(FlatCacheError) {
            try store.removeAll(in: channelURL)
        }

        /// What the cache knows complete of a channel, and its change log
        /// token (see ``MessageStore/continuity(in:)``).
        ///
        /// - important: Blocks the calling thread on disk I/O and other processes' locks: never call it from the main actor or a task.
        /// - Parameter channelURL: The channel's URL.
        /// - Returns: The channel's continuity.
        /// - Throws: ``FlatCacheError/emptyChannelURL`` or a file-system error.
        public func continuity(in channelURL: String) throws(FlatCacheError) -> ChannelContinuity {
            try store.continuity(in: channelURL)
        }

        /// Makes `messages` the cached content of a channel within `range` and
        /// records the range complete (see ``MessageStore/replace(_:in:covering:)``).
        ///
        /// - important: Blocks the calling thread on disk I/O and other processes' locks: never call it from the main actor or a task.
        /// - Parameters:
        ///   - messages: The server's messages created in `range`.
        ///   - channelURL: The channel's URL.
        ///   - range: Milliseconds since 1970, both ends included.
        /// - Returns: The message file written or unchanged, records left out and dropped.
        /// - Throws: As ``MessageStore/replace(_:in:covering:)``.
        @discardableResult
        public func replace(
            _ messages: some Sequence<Message>, in channelURL: String, covering range: ClosedRange<Int64>
        ) throws(FlatCacheError) -> SaveResult {
            try store.replace(messages, in: channelURL, covering: range)
        }

        /// Records the change log token of a channel.
        ///
        /// - important: Blocks the calling thread on disk I/O and other processes' locks: never call it from the main actor or a task.
        /// - Parameters:
        ///   - token: The server's token, or `nil` to forget it.
        ///   - channelURL: The channel's URL.
        /// - Throws: ``FlatCacheError/readOnlyCache(_:)``, ``FlatCacheError/emptyChannelURL`` or a file-system error.
        public func setChangeLogToken(_ token: String?, in channelURL: String) throws(FlatCacheError) {
            try store.setChangeLogToken(token, in: channelURL)
        }
    }
}
