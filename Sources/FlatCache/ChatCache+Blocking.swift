/// The blocking cache-wide calls, for code that may wait on the disk.
extension ChatCache {
    /// The same calls as the cache's `async` ones, each returning once its
    /// work is done, on the caller's thread.
    ///
    /// ```swift
    /// try cache.messages.blocking.save(fetched)
    /// try cache.blocking.flush()   // a tool about to exit
    /// ```
    public var blocking: Blocking { Blocking(cache: self) }

    /// The cache's blocking calls: the twins of its `async` calls, with the
    /// same names, arguments and results, that do the disk I/O on the
    /// caller's thread (the stores' twins are ``MessageStore/blocking``,
    /// ``ChannelStore/blocking`` and ``UserStore/blocking``).
    ///
    /// Each call blocks the calling thread on disk I/O and on other
    /// processes' file locks: for a tool's `main`, a script or a thread of
    /// its own, never an app's main actor or a task.
    public struct Blocking: Sendable {
        let cache: ChatCache

        /// Writes every change saved before the call (see ``ChatCache/flush()``).
        ///
        /// - important: Blocks the calling thread on disk I/O and other processes' locks: never call it from the main actor or a task.
        /// - Returns: The files this flush wrote or found unchanged.
        /// - Throws: A file-system error for a file whose changes did not land.
        @discardableResult
        public func flush() throws(FlatCacheError) -> SaveResult {
            try onWriteQueue { engine throws(FlatCacheError) in try engine.flushNow() }
        }

        /// Flushes and writes when each channel was last saved and used (see ``ChatCache/close()``).
        ///
        /// - important: Blocks the calling thread on disk I/O and other processes' locks: never call it from the main actor or a task.
        /// - Throws: As ``flush()``.
        public func close() throws(FlatCacheError) {
            _ = try onWriteQueue { engine throws(FlatCacheError) in try engine.closeNow() }
            cache.search.service.waitForSnapshotWrites()
        }

        /// Removes expired channels and, over the size limit, what was used
        /// least recently (see ``ChatCache/sweep()``).
        ///
        /// - important: Blocks the calling thread on disk I/O and other processes' locks: never call it from the main actor or a task.
        /// - Returns: What it removed.
        /// - Throws: ``FlatCacheError/readOnlyCache(_:)`` or a file-system error.
        @discardableResult
        public func sweep() throws(FlatCacheError) -> SweepResult {
            let layout = cache.layout
            return try onWriteQueue { engine throws(FlatCacheError) in try Sweep(engine: engine, layout: layout).run() }
        }

        /// What the cache holds on disk and in memory (see ``ChatCache/statistics()``).
        ///
        /// - important: Blocks the calling thread on disk I/O and other processes' locks: never call it from the main actor or a task.
        /// - Returns: The statistics.
        /// - Throws: A file-system error.
        public func statistics() throws(FlatCacheError) -> CacheStatistics {
            try cache.statisticsNow()
        }

        /// Removes every cached channel, message and user, the outbox and the
        /// quarantine folder (see ``ChatCache/removeAll()``).
        ///
        /// - important: Blocks the calling thread on disk I/O and other processes' locks: never call it from the main actor or a task.
        /// - Throws: ``FlatCacheError/readOnlyCache(_:)`` or a file-system error.
        public func removeAll() throws(FlatCacheError) {
            try cache.removeAll()
        }

        /// Checks every file of the cache folder that the format defines (see
        /// ``ChatCache/verify(repair:progress:)``).
        ///
        /// - important: Blocks the calling thread on disk I/O and other processes' locks: never call it from the main actor or a task.
        /// - Parameters:
        ///   - repair: Whether to move bad files aside and finish what a crash cut short.
        ///   - progress: Called after each file with the number checked and the total.
        /// - Returns: One entry per file.
        /// - Throws: ``FlatCacheError/readOnlyCache(_:)`` when `repair` is asked of a
        ///   read-only cache, or a file-system error.
        public func verify(
            repair: Bool = false, progress: (_ checked: Int, _ total: Int) -> Void = { _, _ in }
        ) throws(FlatCacheError) -> [VerifiedFile] {
            try cache.verify(repair: repair, progress: progress)
        }

        /// Converts the cache's folder to other record types and opens it with
        /// them (see ``ChatCache/migrate(message:channel:user:)``).
        ///
        /// - important: Blocks the calling thread on disk I/O and other processes' locks: never call it from the main actor or a task.
        /// - Parameters:
        ///   - message: The new record for a cached message; `nil` leaves it out.
        ///   - channel: The new record for a cached channel; `nil` leaves it out.
        ///   - user: The new record for a cached user; `nil` leaves it out.
        /// - Returns: The cache, opened with the new types.
        /// - Throws: As ``ChatCache/migrate(message:channel:user:)``.
        public func migrate<NewMessage: MessageRecord, NewChannel: ChannelRecord, NewUser: UserRecord>(
            message: (Message) throws -> NewMessage?,
            channel: (Channel) throws -> NewChannel?,
            user: (User) throws -> NewUser?
        ) throws(FlatCacheError) -> ChatCache<NewMessage, NewChannel, NewUser> {
            try cache.migrate(message: message, channel: channel, user: user)
        }

        /// Runs `work` on the engine's write queue, after write-behind flushes
        /// already started, and waits for it: as the `async` forms do, without
        /// a task.
        private func onWriteQueue<T>(_ work: (CacheEngine) throws(FlatCacheError) -> T) throws(FlatCacheError) -> T {
            let engine = cache.engine
            return try engine.writeQueue.sync { Result { () throws(FlatCacheError) in try work(engine) } }.get()
        }
    }
}
