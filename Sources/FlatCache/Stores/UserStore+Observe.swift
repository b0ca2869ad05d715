/// Observing the cached users.
extension UserStore {
    /// Every cached user now, by user id, then again after each change, for
    /// as long as the loop runs (see `MessageStore.observe(in:)`, which this
    /// mirrors: any number of loops, each change once, in order; changes
    /// through any ``ChatCache`` on the folder in this process).
    ///
    /// ```swift
    /// for try await users in cache.users.observe() {
    ///     print(users.count)   // redraw the names shown
    /// }
    /// ```
    /// - Returns: The values, as `load()` returns them; the stream throws
    ///   the error of a read that failed (then it ends).
    public func observe() -> AsyncThrowingStream<[User], any Error> {
        StoreObservation.values(of: layout.usersFile.path, in: engine.hub) { () async throws(FlatCacheError) in
            try await load()
        }
    }
}
