import Foundation

extension ChatCache {
    /// Converts this cache's folder to other record types and opens it with
    /// them: for an app that switched chat SDKs, or changed its record bytes.
    ///
    /// Open the folder with the types it holds (the `cached` names of
    /// ``FlatCacheError/recordTypeMismatch(directory:cached:requested:)``),
    /// then migrate:
    ///
    /// ```swift
    /// func openCache(_ folder: URL) throws(FlatCacheError) -> ChatCache<SDKMessage, SDKChannel, SDKUser> {
    ///     do {
    ///         return try ChatCache<SDKMessage, SDKChannel, SDKUser>(directory: folder)
    ///     } catch {
    ///         guard case .recordTypeMismatch(_, let cached, _) = error,
    ///             cached == ChatCache<ChatMessage, ChatChannel, ChatUser>.recordTypes
    ///         else { throw error }
    ///         return try ChatCache(directory: folder).blocking.migrate(
    ///             message: { SDKMessage($0) }, channel: { SDKChannel($0) }, user: { SDKUser($0) })
    ///     }
    /// }
    /// ```
    ///
    /// Every record is read, converted, checked against the caching rules and
    /// encoded before anything is written, so a conversion that throws, or a
    /// converted record a save would refuse (an empty channel URL or user id,
    /// a value that cannot be encoded), leaves the folder as it was. Then,
    /// holding every lock, the old data files are removed, the new types
    /// recorded and the converted records saved with this cache's
    /// configuration (retention and the caching rules apply). A crash or a
    /// disk failure in that last step leaves a cache of the new types holding
    /// part of the data, never a mix of types.
    /// The ``outbox``'s waiting entries are carried over with their messages
    /// converted by `message` (an entry whose message converts to `nil` goes),
    /// keeping their request ids, order and states.
    /// Channels cached with no messages, and damaged files (reported and
    /// moved aside as by a load), are not carried over. Afterwards, this
    /// instance and any other of the old types (in this process or another)
    /// should be replaced: a load of theirs that meets a record of the new
    /// types throws ``FlatCacheError/recordTypeMismatch(directory:cached:requested:)``
    /// instead of taking the file for damaged, but their writes are not checked.
    ///
    /// - important: Requires disk I/O; reads the whole cache into memory.
    /// - Parameters:
    ///   - message: The new record for a cached message; `nil` leaves it out.
    ///   - channel: The new record for a cached channel; `nil` leaves it out.
    ///   - user: The new record for a cached user; `nil` leaves it out.
    /// - Returns: The cache, opened with the new types.
    /// - Throws: ``FlatCacheError/conversionFailed(recordType:underlying:)`` when a
    ///   closure throws, ``FlatCacheError/emptyChannelURL``, ``FlatCacheError/emptyUserID``
    ///   or ``FlatCacheError/serializationFailed(recordType:underlying:)`` for a
    ///   converted record, ``FlatCacheError/misplacedMessage(messageID:channelURL:expectedChannelURL:)``
    ///   for an outbox entry's message converted into another channel (all before anything is written),
    ///   ``FlatCacheError/readOnlyCache(_:)``, or a file-system error.
    func migrate<NewMessage: MessageRecord, NewChannel: ChannelRecord, NewUser: UserRecord>(
        message: (Message) throws -> NewMessage?,
        channel: (Channel) throws -> NewChannel?,
        user: (User) throws -> NewUser?
    ) throws(FlatCacheError) -> ChatCache<NewMessage, NewChannel, NewUser> {
        try storage.requireWritable()
        let newMessages = try Self.convert(try messages.loadAll(), with: message)
        let newChannels = try Self.convert(try channels.load(), with: channel)
        let newUsers = try Self.convert(try users.load(), with: user)
        var newOutbox = [OutboxEntry<NewMessage>]()
        for entry in try outbox.waitingEntriesBlocking() {
            if let converted = try Self.convert([entry.message], with: message).first {
                guard converted.channelURL == entry.channelURL else {
                    throw .misplacedMessage(
                        messageID: entry.requestID, channelURL: converted.channelURL, expectedChannelURL: entry.channelURL)
                }
                newOutbox.append(entry.converted(to: converted))
            }
        }
        _ = try Outbox<NewMessage>.lines(of: newOutbox, in: storage)
        // What the saves below would refuse (an empty URL, a record that cannot be
        // encoded) is refused now, while the old data is still there.
        try MessageStore<NewMessage>(engine: engine, layout: layout, maxPerChannel: configuration.maxMessagesPerChannel)
            .validate(newMessages)
        try ChannelStore<NewChannel>(engine: engine, layout: layout).validate(newChannels)
        try UserStore<NewUser>(engine: engine, layout: layout).validate(newUsers)
        let types = ChatCache<NewMessage, NewChannel, NewUser>.recordTypes
        try storage.locks.withAllLocks { () throws(FlatCacheError) in
            try removeData()
            engine.forgetAll()
            try RecordTypesFile.write(types, layout, synchronized: storage.synchronized)
        }
        let migrated = try ChatCache<NewMessage, NewChannel, NewUser>(opening: directory, configuration: configuration)
        if !newChannels.isEmpty { try migrated.channels.replace(with: newChannels) }
        if !newMessages.isEmpty { try migrated.messages.save(newMessages) }
        if !newUsers.isEmpty { try migrated.users.save(newUsers) }
        try migrated.outbox.restoreBlocking(newOutbox)
        return migrated
    }

    /// Converts this cache's folder to other record types and opens it with
    /// them, as ``Blocking/migrate(message:channel:user:)`` does (read it for
    /// the whole story), on FlatCache's own threads: the `async` form an app calls.
    ///
    /// ```swift
    /// let migrated = try await cache.migrate(
    ///     message: { SDKMessage($0) }, channel: { SDKChannel($0) }, user: { SDKUser($0) })
    /// ```
    /// - Parameters:
    ///   - message: The new record for a cached message; `nil` leaves it out.
    ///   - channel: The new record for a cached channel; `nil` leaves it out.
    ///   - user: The new record for a cached user; `nil` leaves it out.
    /// - Returns: The cache, opened with the new types.
    /// - Throws: As ``Blocking/migrate(message:channel:user:)``.
    public func migrate<NewMessage: MessageRecord, NewChannel: ChannelRecord, NewUser: UserRecord>(
        message: @escaping @Sendable (Message) throws -> NewMessage?,
        channel: @escaping @Sendable (Channel) throws -> NewChannel?,
        user: @escaping @Sendable (User) throws -> NewUser?
    ) async throws(FlatCacheError) -> ChatCache<NewMessage, NewChannel, NewUser> {
        try await engine.writing { [self] () throws(FlatCacheError) in
            try self.migrate(message: message, channel: channel, user: user)
        }
    }

    /// Each record converted, those converted to `nil` left out.
    private static func convert<Old, New>(
        _ records: [Old], with conversion: (Old) throws -> New?
    ) throws(FlatCacheError) -> [New] {
        var converted = [New]()
        converted.reserveCapacity(records.count)
        for record in records {
            do {
                if let new = try conversion(record) { converted.append(new) }
            } catch {
                throw .conversionFailed(recordType: String(describing: Old.self), underlying: error)
            }
        }
        return converted
    }
}
