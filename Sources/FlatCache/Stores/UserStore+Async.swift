/// The `async` user store: loads from memory or the engine's threads,
/// saves to memory with the write scheduled (see ``Configuration/writeDelay``).
extension UserStore {
    /// Upserts users (see `save(_:)`) in memory and schedules the write.
    /// Call it as `try await cache.users.save([sender])`.
    /// - Throws: ``FlatCacheError/emptyUserID``, ``FlatCacheError/readOnlyCache(_:)`` or a
    ///   serialization error, before anything changes; with a ``Configuration/writeDelay``
    ///   of zero, a file-system error too.
    @discardableResult
    public func save(_ users: some Sequence<User>) async throws(FlatCacheError) -> SaveResult {
        let incoming = Array(users)
        guard incoming.allSatisfy({ !$0.userID.isEmpty }) else { throw .emptyUserID }
        try storage.requireWritable(for: tier)
        return try await engine.add([(layout.usersFile, try upsert(incoming))], tier: tier)
    }

    /// Every cached user, by user id.
    ///
    /// - Throws: A file-system error.
    public func load() async throws(FlatCacheError) -> [User] {
        let users: [User]? = try await engine.records(layout.usersFile, tier: tier)
        return users ?? []
    }

    /// The cached user with this id, or `nil`.
    ///
    /// - Throws: A file-system error.
    public func user(withID userID: String) async throws(FlatCacheError) -> User? {
        let key = RecordKey(userID)
        return try await load().first { RecordKey($0.userID) == key }
    }

    /// Removes the users with these ids, in memory, and schedules the write.
    ///
    /// - Throws: ``FlatCacheError/readOnlyCache(_:)``; with a ``Configuration/writeDelay`` of zero, a file-system error too.
    public func remove(userIDs: some Sequence<String>) async throws(FlatCacheError) {
        try storage.requireWritable()
        try await engine.add([(layout.usersFile, removal(of: userIDs))])
    }
}
