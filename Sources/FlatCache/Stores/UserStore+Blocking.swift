/// The blocking user store, for code that may wait on the disk.
extension UserStore {
    /// The same calls, each returning only once its work is on disk (or read
    /// from it), on the caller's thread.
    ///
    /// ```swift
    /// let sender = try cache.users.blocking.user(withID: "u1")
    /// ```
    public var blocking: Blocking { Blocking(store: self) }

    /// The user store's blocking calls: the twins of its `async` calls,
    /// with the same names, arguments and results, that do the disk I/O on
    /// the caller's thread.
    ///
    /// Each call blocks the calling thread on disk I/O and on other
    /// processes' file locks: for a tool's `main`, a script or a thread of
    /// its own, never an app's main actor or a task.
    public struct Blocking: Sendable {
        let store: UserStore

        /// Upserts users by id and writes them before it returns.
        ///
        /// - important: Blocks the calling thread on disk I/O and other processes' locks: never call it from the main actor or a task.
        /// - Parameter users: The users.
        /// - Returns: The file written or unchanged.
        /// - Throws: ``FlatCacheError/emptyUserID``, ``FlatCacheError/readOnlyCache(_:)`` (before
        ///   anything is written), or a serialization or file-system error.
        @discardableResult
        public func save(_ users: some Sequence<User>) throws(FlatCacheError) -> SaveResult {
            try store.save(users)
        }

        /// Every cached user, by user id; `[]` when none are cached.
        ///
        /// - important: Blocks the calling thread on disk I/O and other processes' locks: never call it from the main actor or a task.
        /// - Returns: The users.
        /// - Throws: A file-system error.
        public func load() throws(FlatCacheError) -> [User] {
            try store.load()
        }

        /// The cached user with this id, or `nil`.
        ///
        /// - important: Blocks the calling thread on disk I/O and other processes' locks: never call it from the main actor or a task.
        /// - Parameter userID: The user's id.
        /// - Returns: The user, or `nil`.
        /// - Throws: A file-system error.
        public func user(withID userID: String) throws(FlatCacheError) -> User? {
            try store.user(withID: userID)
        }

        /// Removes the users with these ids; ids not cached are fine.
        ///
        /// - important: Blocks the calling thread on disk I/O and other processes' locks: never call it from the main actor or a task.
        /// - Parameter userIDs: The ids.
        /// - Throws: ``FlatCacheError/readOnlyCache(_:)`` or a file-system error.
        public func remove(userIDs: some Sequence<String>) throws(FlatCacheError) {
            try store.remove(userIDs: userIDs)
        }
    }
}
