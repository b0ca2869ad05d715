extension MessageStore {
    /// The newest `limit` cached messages of a channel, oldest first: the
    /// first screen of a chat view.
    ///
    /// ```swift
    /// let screen = try cache.messages.loadLatest(in: channelURL, limit: 30)
    /// ```
    /// - important: Requires disk I/O.
    /// - Parameters:
    ///   - channelURL: The channel's URL.
    ///   - limit: How many at most; 0 or more.
    /// - Returns: Up to `limit` messages, the newest ones, oldest first; `[]` when none are cached.
    /// - Throws: ``FlatCacheError/invalidLimit(_:)``, ``FlatCacheError/emptyChannelURL`` or a file-system error.
    public func loadLatest(in channelURL: String, limit: Int) throws(FlatCacheError) -> [Message] {
        guard limit >= 0 else { throw .invalidLimit(limit) }
        return Self.latest(try load(in: channelURL), limit: limit)
    }

    /// Up to `limit` cached messages created before `timestamp`: the ones
    /// nearest to it, oldest first. Use it to page back through history.
    ///
    /// - Parameters:
    ///   - channelURL: The channel's URL.
    ///   - timestamp: Milliseconds since 1970.
    ///   - limit: The most messages to return; 0 or more.
    ///   - inclusive: Whether a message created exactly at `timestamp` counts.
    /// - important: Requires disk I/O.
    /// - Throws: ``FlatCacheError/invalidLimit(_:)``, ``FlatCacheError/emptyChannelURL`` or a file-system error.
    public func load(
        in channelURL: String, before timestamp: Int64, limit: Int, inclusive: Bool = false
    ) throws(FlatCacheError) -> [Message] {
        guard limit >= 0 else { throw .invalidLimit(limit) }
        return Self.page(try load(in: channelURL), before: timestamp, limit: limit, inclusive: inclusive)
    }

    /// Up to `limit` cached messages created after `timestamp`: the ones
    /// nearest to it, oldest first. Use it to page forward after a gap.
    ///
    /// - Parameters:
    ///   - channelURL: The channel's URL.
    ///   - timestamp: Milliseconds since 1970.
    ///   - limit: The most messages to return; 0 or more.
    ///   - inclusive: Whether a message created exactly at `timestamp` counts.
    /// - important: Requires disk I/O.
    /// - Throws: ``FlatCacheError/invalidLimit(_:)``, ``FlatCacheError/emptyChannelURL`` or a file-system error.
    public func load(
        in channelURL: String, after timestamp: Int64, limit: Int, inclusive: Bool = false
    ) throws(FlatCacheError) -> [Message] {
        guard limit >= 0 else { throw .invalidLimit(limit) }
        return Self.page(try load(in: channelURL), after: timestamp, limit: limit, inclusive: inclusive)
    }

    /// Up to `limit` cached messages that come before `message` in the
    /// channel's order (creation time, then message id): the page above the
    /// oldest one shown, oldest first.
    ///
    /// Unlike paging by `message.createdAt`, this skips no message that
    /// shares the millisecond of `message`, and repeats none.
    ///
    /// ```swift
    /// let page = try cache.messages.loadLatest(in: channelURL, limit: 30)
    /// if let oldest = page.first {
    ///     show(try cache.messages.load(in: channelURL, before: oldest, limit: 30))
    /// }
    /// ```
    /// - important: Requires disk I/O.
    /// - Parameters:
    ///   - channelURL: The channel's URL.
    ///   - message: Where the page ends; it need not be cached any more.
    ///   - limit: How many at most; 0 or more.
    /// - Returns: Up to `limit` messages, the nearest ones, oldest first.
    /// - Throws: ``FlatCacheError/invalidLimit(_:)``, ``FlatCacheError/emptyChannelURL`` or a file-system error.
    public func load(in channelURL: String, before message: Message, limit: Int) throws(FlatCacheError) -> [Message] {
        guard limit >= 0 else { throw .invalidLimit(limit) }
        return Self.page(try load(in: channelURL), before: message, limit: limit)
    }

    /// Up to `limit` cached messages that come after `message` in the
    /// channel's order (creation time, then message id): the page below the
    /// newest one shown, oldest first.
    ///
    /// ```swift
    /// let page = try cache.messages.loadLatest(in: channelURL, limit: 30)
    /// if let newest = page.last {
    ///     show(try cache.messages.load(in: channelURL, after: newest, limit: 30))   // after a refresh
    /// }
    /// ```
    /// - important: Requires disk I/O.
    /// - Parameters:
    ///   - channelURL: The channel's URL.
    ///   - message: Where the page starts; it need not be cached any more.
    ///   - limit: How many at most; 0 or more.
    /// - Returns: Up to `limit` messages, the nearest ones, oldest first.
    /// - Throws: ``FlatCacheError/invalidLimit(_:)``, ``FlatCacheError/emptyChannelURL`` or a file-system error.
    public func load(in channelURL: String, after message: Message, limit: Int) throws(FlatCacheError) -> [Message] {
        guard limit >= 0 else { throw .invalidLimit(limit) }
        return Self.page(try load(in: channelURL), after: message, limit: limit)
    }

    // MARK: - Pages of a channel's messages, in canonical order (binary search, no copy but the page)

    static func latest(_ messages: [Message], limit: Int) -> [Message] {
        Array(messages.suffix(limit))
    }

    static func page(_ messages: [Message], before timestamp: Int64, limit: Int, inclusive: Bool) -> [Message] {
        let end = boundary(in: messages) { inclusive ? $0.createdAt > timestamp : $0.createdAt >= timestamp }
        return Array(messages[max(0, end - limit)..<end])
    }

    static func page(_ messages: [Message], after timestamp: Int64, limit: Int, inclusive: Bool) -> [Message] {
        let start = boundary(in: messages) { inclusive ? $0.createdAt >= timestamp : $0.createdAt > timestamp }
        return Array(messages[start..<min(messages.count, start + limit)])
    }

    static func page(_ messages: [Message], before message: Message, limit: Int) -> [Message] {
        let end = boundary(in: messages) { !CanonicalOrder.precedes($0, message) }
        return Array(messages[max(0, end - limit)..<end])
    }

    static func page(_ messages: [Message], after message: Message, limit: Int) -> [Message] {
        let start = boundary(in: messages) { CanonicalOrder.precedes(message, $0) }
        return Array(messages[start..<min(messages.count, start + limit)])
    }

    /// The first index whose message is `past` the point, for a test that is
    /// false and then true along the channel's canonical order.
    private static func boundary(in messages: [Message], past: (Message) -> Bool) -> Int {
        var low = 0
        var high = messages.count
        while low < high {
            let middle = (low + high) / 2
            if past(messages[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
