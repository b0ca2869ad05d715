/// The blocking channel store, for code that may wait on the disk.
extension ChannelStore {
    /// The same calls, each returning only once its work is on disk (or read
    /// from it), on the caller's thread.
    ///
    /// ```swift
    /// let list = try cache.channels.blocking.load()
    /// ```
    public var blocking: Blocking { Blocking(store: self) }

    /// The channel store's blocking calls: the twins of its `async` calls,
    /// with the same names, arguments and results, that do the disk I/O on
    /// the caller's thread.
    ///
    /// Each call blocks the calling thread on disk I/O and on other
    /// processes' file locks: for a tool's `main`, a script or a thread of
    /// its own, never an app's main actor or a task.
    public struct Blocking: Sendable {
        let store: ChannelStore

        /// Upserts group channels by URL and writes them before it returns;
        /// open channels are left out.
        ///
        /// - important: Blocks the calling thread on disk I/O and other processes' locks: never call it from the main actor or a task.
        /// - Parameter channels: The channels.
        /// - Returns: The file written or unchanged, and records left out.
        /// - Throws: ``FlatCacheError/emptyChannelURL``, ``FlatCacheError/readOnlyCache(_:)`` (before
        ///   anything is written), or a serialization or file-system error.
        @discardableResult
        public func save(_ channels: some Sequence<Channel>) throws(FlatCacheError) -> SaveResult {
            try store.save(channels)
        }

        /// Makes `channels` the whole cached list, written before it returns;
        /// open channels are left out.
        ///
        /// - important: Blocks the calling thread on disk I/O and other processes' locks: never call it from the main actor or a task.
        /// - Parameter channels: The channels.
        /// - Returns: The file written or unchanged, and records left out.
        /// - Throws: As ``save(_:)``.
        @discardableResult
        public func replace(with channels: some Sequence<Channel>) throws(FlatCacheError) -> SaveResult {
            try store.replace(with: channels)
        }

        /// The cached channels; `[]` when none are cached.
        ///
        /// - important: Blocks the calling thread on disk I/O and other processes' locks: never call it from the main actor or a task.
        /// - Parameter order: ``ChannelStore/Order/newestFirst`` (the default) or
        ///   ``ChannelStore/Order/oldestFirst``, by last message time; ties go by channel URL.
        /// - Returns: The channels.
        /// - Throws: A file-system error.
        public func load(order: Order = .newestFirst) throws(FlatCacheError) -> [Channel] {
            try store.load(order: order)
        }

        /// The cached channel with this URL, or `nil`.
        ///
        /// - important: Blocks the calling thread on disk I/O and other processes' locks: never call it from the main actor or a task.
        /// - Parameter channelURL: The channel's URL.
        /// - Returns: The channel, or `nil`.
        /// - Throws: A file-system error.
        public func channel(withURL channelURL: String) throws(FlatCacheError) -> Channel? {
            try store.channel(withURL: channelURL)
        }

        /// Removes a channel and its cached messages (the user left it, or it was deleted).
        ///
        /// - important: Blocks the calling thread on disk I/O and other processes' locks: never call it from the main actor or a task.
        /// - Parameter channelURL: The channel's URL.
        /// - Throws: ``FlatCacheError/emptyChannelURL``, ``FlatCacheError/readOnlyCache(_:)`` or a file-system error.
        public func remove(channelURL: String) throws(FlatCacheError) {
            try store.remove(channelURL: channelURL)
        }

        /// The change log token the cached channel list is in sync with; `nil`
        /// when none was recorded, or the list is not cached.
        ///
        /// - important: Blocks the calling thread on disk I/O and other processes' locks: never call it from the main actor or a task.
        /// - Returns: The token, or `nil`.
        /// - Throws: A file-system error.
        public func changeLogToken() throws(FlatCacheError) -> String? {
            try store.changeLogToken()
        }

        /// Records the change log token the cached channel list is in sync
        /// with; nothing when the list is not cached.
        ///
        /// - important: Blocks the calling thread on disk I/O and other processes' locks: never call it from the main actor or a task.
        /// - Parameter token: The token, or `nil` to forget it.
        /// - Throws: ``FlatCacheError/readOnlyCache(_:)`` or a file-system error.
        public func setChangeLogToken(_ token: String?) throws(FlatCacheError) {
            try store.setChangeLogToken(token)
        }
    }
}
