public import Foundation

extension ChatCache {
    /// Moves the cache's folder to `encryption` (a key, or `nil` for plain)
    /// and opens it with it: encrypts a plain folder, decrypts an encrypted
    /// one, or moves one to another key (``rotateKey(to:)``).
    ///
    /// ```swift
    /// let encrypted = try await cache.migrate(encryption: .aes256gcm(key: key))
    /// ```
    ///
    /// Changes waiting in memory are written first. Then, holding every lock,
    /// every data file is rewritten under the new key (message files under
    /// their new names), so that a crash or `kill -9` at any point leaves each
    /// file readable with the old key or the new one, and the next open with
    /// either key finishes the change toward the key it is given: with the
    /// new one it goes on, with the old one it goes back (the folder's
    /// `rekey` file holds each key sealed under the other until the change is
    /// done). A change between plain and a key needs that key to be finished
    /// either way: opened without a key, the folder throws
    /// ``FlatCacheError/encryptionKeyRequired(directory:keyID:)``. Store the
    /// new key (in the Keychain) before calling, and forget the old one only
    /// once this returns.
    ///
    /// Not carried over: a channel cached with no messages that the channel
    /// list does not name (nothing says its URL, which names its file), the
    /// quarantine folder, and the message files' last-use marks (their times stay).
    /// Afterwards, this instance and any other opened with the old key (in
    /// this process or another) should be replaced by the one returned: their
    /// loads find the files under another key (a miss), and their writes are not checked.
    ///
    /// - important: Requires disk I/O; reads and writes every data file.
    /// - Parameter encryption: The folder's new encryption; `nil` for plain files.
    /// - Returns: The cache, opened with `encryption`.
    /// - Throws: ``FlatCacheError/invalidEncryptionKey(byteCount:)``,
    ///   ``FlatCacheError/readOnlyCache(_:)``, or a file-system error (the
    ///   change then finishes at the next open).
    public func migrate(encryption: Encryption?) async throws(FlatCacheError) -> ChatCache {
        try await engine.writing { [self] () throws(FlatCacheError) in try self.changeEncryption(to: encryption) }
    }

    /// Re-encrypts the cache's folder with `key` and opens it with it: what
    /// ``migrate(encryption:)`` does with `.aes256gcm(key: key)` (read it for
    /// crash safety and what to do with the keys). A plain folder is encrypted.
    ///
    /// ```swift
    /// let newKey = Encryption.randomKey()
    /// try keychain.store(newKey, as: "pending")           // before the rotation
    /// let rotated = try await cache.rotateKey(to: newKey)  // use it from now on
    /// try keychain.store(newKey, as: "current")           // the old key can go now
    /// ```
    /// - important: Requires disk I/O; reads and writes every data file.
    /// - Parameter key: The new key: 32 random bytes.
    /// - Returns: The cache, opened with the new key.
    /// - Throws: As ``migrate(encryption:)``.
    public func rotateKey(to key: Data) async throws(FlatCacheError) -> ChatCache {
        try await migrate(encryption: .aes256gcm(key: key))
    }

    /// The work of ``migrate(encryption:)``, on the caller's thread: call it on the write queue.
    func changeEncryption(to encryption: Encryption?) throws(FlatCacheError) -> ChatCache {
        try storage.requireWritable()
        let sealer = try encryption.map { (encryption) throws(FlatCacheError) in
            try Sealer(encryption, nonces: configuration.nonceSource)
        }
        _ = try engine.flushNow()
        try storage.locks.withAllLocks { () throws(FlatCacheError) in
            engine.forgetAll()
            // Derived data, sealed under the old key: the new cache builds it again rather than carry it over.
            try layout.searchFile.remove()
            try KeyChange.run(
                from: layout, to: layout.sealed(by: sealer), storage: storage, recordTypes: Self.recordTypes,
                Message.self, Channel.self, User.self)
        }
        var changed = configuration
        changed.encryption = encryption
        return try ChatCache(opening: directory, configuration: changed)
    }

    /// Throws unless `layout`'s key (or none) may open its folder, touching
    /// nothing: an encrypted folder needs its own key, and a plain folder
    /// that holds data is not opened with a key. An empty plain folder, or
    /// one of no `records` yet, takes the key. A key change under way is
    /// checked against its two keys (``KeyChange``).
    static func checkEncryption(_ layout: CacheLayout, directory: URL) throws(FlatCacheError) {
        if try KeyChange.isUnderWay(layout) {
            _ = try KeyChange.otherSide(of: layout, directory: directory)
            return
        }
        let recorded = try RecordTypesFile.readContents(layout)?.keyID
        switch (recorded, layout.sealer?.keyID) {
        case let (recorded, given) where recorded == given:
            return
        case (let recorded?, nil):
            throw .encryptionKeyRequired(directory: directory, keyID: recorded)
        case (let recorded?, let given?):
            throw .wrongEncryptionKey(directory: directory, keyID: recorded, given: given)
        case (nil, _):
            if try holdsData(layout) { throw .folderNotEncrypted(directory) }
        }
    }

    /// Whether the folder holds any data file (a message file, the channel
    /// list, users, the outbox): what a plain folder must not hold to take a key.
    private static func holdsData(_ layout: CacheLayout) throws(FlatCacheError) -> Bool {
        for file in [layout.channelsFile, layout.usersFile, layout.outboxFile, layout.usageFile]
        where try FileSystem.entry(at: file.path) != .missing {
            return true
        }
        guard try FileSystem.entry(at: layout.messagesDirectory) == .directory else { return false }
        return try !FileSystem.contentsOfDirectory(at: layout.messagesDirectory).filter { !$0.hasPrefix(".") }.isEmpty
    }
}

extension ChatCache.Blocking {
    /// Moves the cache's folder to `encryption` and opens it with it (see ``ChatCache/migrate(encryption:)``).
    ///
    /// - important: Blocks the calling thread on disk I/O and other processes' locks: never call it from the main actor or a task.
    /// - Parameter encryption: The folder's new encryption; `nil` for plain files.
    /// - Returns: The cache, opened with `encryption`.
    /// - Throws: As ``ChatCache/migrate(encryption:)``.
    public func migrate(encryption: Encryption?) throws(FlatCacheError) -> ChatCache {
        let cache = cache
        return try cache.engine.writeQueue.sync {
            Result { () throws(FlatCacheError) in try cache.changeEncryption(to: encryption) }
        }.get()
    }

    /// Re-encrypts the cache's folder with `key` and opens it with it (see ``ChatCache/rotateKey(to:)``).
    ///
    /// - important: Blocks the calling thread on disk I/O and other processes' locks: never call it from the main actor or a task.
    /// - Parameter key: The new key: 32 random bytes.
    /// - Returns: The cache, opened with the new key.
    /// - Throws: As ``ChatCache/migrate(encryption:)``.
    public func rotateKey(to key: Data) throws(FlatCacheError) -> ChatCache {
        try migrate(encryption: .aes256gcm(key: key))
    }
}
