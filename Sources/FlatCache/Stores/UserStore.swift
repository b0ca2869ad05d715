import Foundation

/// The cached users, all in one file, ordered by user id.
///
/// Get it from ``ChatCache/users``.
///
/// ```swift
/// try await cache.users.save(members)
/// let mina = try await cache.users.user(withID: "mina")
/// ```
public struct UserStore<User: UserRecord>: Sendable {
    let engine: CacheEngine
    let layout: CacheLayout
    /// The tiers loads and saves use (see ``using(_:)``).
    public private(set) var tier = CacheTier.memoryAndDisk

    var storage: RecordStorage { engine.storage }

    /// This store with every load and save using `tier` (see ``CacheTier``);
    /// removals always act on both tiers.
    ///
    /// Example: `try await cache.users.using(.memory).load()`
    /// - Parameter tier: Memory and disk (the default), memory only, or disk only.
    /// - Returns: A store that shares this one's cache.
    public func using(_ tier: CacheTier) -> Self {
        var store = self
        store.tier = tier
        return store
    }

    /// Upserts users by id.
    ///
    /// - important: Requires disk I/O.
    /// - Throws: ``FlatCacheError/emptyUserID`` (before anything is written), or a
    ///   serialization or file-system error.
    @discardableResult
    func save(_ users: some Sequence<User>) throws(FlatCacheError) -> SaveResult {
        let incoming = Array(users)
        guard incoming.allSatisfy({ !$0.userID.isEmpty }) else { throw .emptyUserID }
        var result = SaveResult()
        try storage.requireWritable(for: tier)
        result.count(try engine.write(try upsert(incoming), to: layout.usersFile, tier: tier).outcome)
        return result
    }

    /// All cached users, by user id; `[]` when none are cached.
    ///
    /// - important: Requires disk I/O.
    /// - Throws: A file-system error.
    func load() throws(FlatCacheError) -> [User] {
        let users: [User]? = try engine.records(layout.usersFile, tier: tier)
        return users ?? []
    }

    /// The cached user with this id, or `nil`.
    ///
    /// - important: Requires disk I/O.
    /// - Throws: A file-system error.
    func user(withID userID: String) throws(FlatCacheError) -> User? {
        let key = RecordKey(userID)
        return try load().first { RecordKey($0.userID) == key }
    }

    /// Removes the users with these ids; ids not cached are fine.
    ///
    /// - important: Requires disk I/O.
    /// - Throws: A file-system error.
    func remove(userIDs: some Sequence<String>) throws(FlatCacheError) {
        try storage.requireWritable()
        _ = try engine.write(removal(of: userIDs), to: layout.usersFile)
    }

    /// Throws what `save(_:)` would throw for `users` before writing (an
    /// empty user id, a record that cannot be encoded), and writes nothing.
    func validate(_ users: [User]) throws(FlatCacheError) {
        guard users.allSatisfy({ !$0.userID.isEmpty }) else { throw .emptyUserID }
        _ = try storage.serialize(users)
    }

    // MARK: - Changes

    func upsert(_ incoming: [User]) throws(FlatCacheError) -> Change<User> {
        let lines = try storage.serialize(incoming)  // before anything changes
        var change = Change<User>(apply: { cached, _ in
            CanonicalOrder.users(incoming.upserted(into: cached ?? [], by: { RecordKey($0.userID) }))
        })
        let storage = storage
        change.makeAppendable(
            upserts: zip(incoming, lines).map { (RecordKey($0.0.userID), $0.1) }, deletions: [],
            keys: { records in RecordKeys.of(records) { RecordKey($0.userID) } }, serialize: { try? storage.serialize([$0]).first })
        return change
    }

    /// Takes the users out; users never cached stay never cached.
    func removal(of userIDs: some Sequence<String>) -> Change<User> {
        let ids = Set(userIDs)
        let removed = Set(ids.map(RecordKey.init))
        var change = Change<User>(apply: { cached, _ in cached?.filter { !removed.contains(RecordKey($0.userID)) } })
        // In UTF-8 byte order, so that the same removal gives the same bytes.
        let deletions = ids.map { (key: RecordKey($0), bytes: Data($0.utf8)) }.sorted { $0.key < $1.key }
        change.makeAppendable(upserts: [], deletions: deletions, keys: { records in RecordKeys.of(records) { RecordKey($0.userID) } }, serialize: { _ in nil })
        return change
    }
}
