extension MessageStore {
    /// The newest `limit` cached messages of a channel, oldest first: the
    /// first screen of a chat view.
    ///
    /// ```swift
    /// let screen = try await cache.messages.loadLatest(in: channelURL, limit: 30)
    /// ```
    /// - important: Requires disk I/O.
    /// - Parameters:
    ///   - channelURL: The channel's URL.
    ///   - limit: How many at most; 0 or more.
    /// - Returns: Up to `limit` messages, the newest ones, oldest first; `[]` when none are cached.
    /// - Throws: ``FlatCacheError/invalidLimit(_:)``, ``FlatCacheError/emptyChannelURL`` or a file-system error.
    func loadLatest(in channelURL: String, limit: Int) throws(FlatCacheError) -> [Message] {
        guard limit >= 0 else { throw .invalidLimit(limit) }
        return try page(in: channelURL, Self.latest(limit: limit))
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
    func load(
        in channelURL: String, before timestamp: Int64, limit: Int, inclusive: Bool = false
    ) throws(FlatCacheError) -> [Message] {
        guard limit >= 0 else { throw .invalidLimit(limit) }
        return try page(in: channelURL, Self.page(before: timestamp, limit: limit, inclusive: inclusive))
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
    func load(
        in channelURL: String, after timestamp: Int64, limit: Int, inclusive: Bool = false
    ) throws(FlatCacheError) -> [Message] {
        guard limit >= 0 else { throw .invalidLimit(limit) }
        return try page(in: channelURL, Self.page(after: timestamp, limit: limit, inclusive: inclusive))
    }

    /// Up to `limit` cached messages that come before `message` in the
    /// channel's order (creation time, then message id): the page above the
    /// oldest one shown, oldest first.
    ///
    /// Unlike paging by `message.createdAt`, this skips no message that
    /// shares the millisecond of `message`, and repeats none.
    ///
    /// ```swift
    /// let page = try await cache.messages.loadLatest(in: channelURL, limit: 30)
    /// if let oldest = page.first {
    ///     show(try await cache.messages.load(in: channelURL, before: oldest, limit: 30))
    /// }
    /// ```
    /// - important: Requires disk I/O.
    /// - Parameters:
    ///   - channelURL: The channel's URL.
    ///   - message: Where the page ends; it need not be cached any more.
    ///   - limit: How many at most; 0 or more.
    /// - Returns: Up to `limit` messages, the nearest ones, oldest first.
    /// - Throws: ``FlatCacheError/invalidLimit(_:)``, ``FlatCacheError/emptyChannelURL`` or a file-system error.
    func load(in channelURL: String, before message: Message, limit: Int) throws(FlatCacheError) -> [Message] {
        guard limit >= 0 else { throw .invalidLimit(limit) }
        return try page(in: channelURL, Self.page(before: message, limit: limit))
    }

    /// Up to `limit` cached messages that come after `message` in the
    /// channel's order (creation time, then message id): the page below the
    /// newest one shown, oldest first.
    ///
    /// ```swift
    /// let page = try await cache.messages.loadLatest(in: channelURL, limit: 30)
    /// if let newest = page.last {
    ///     show(try await cache.messages.load(in: channelURL, after: newest, limit: 30))   // after a refresh
    /// }
    /// ```
    /// - important: Requires disk I/O.
    /// - Parameters:
    ///   - channelURL: The channel's URL.
    ///   - message: Where the page starts; it need not be cached any more.
    ///   - limit: How many at most; 0 or more.
    /// - Returns: Up to `limit` messages, the nearest ones, oldest first.
    /// - Throws: ``FlatCacheError/invalidLimit(_:)``, ``FlatCacheError/emptyChannelURL`` or a file-system error.
    func load(in channelURL: String, after message: Message, limit: Int) throws(FlatCacheError) -> [Message] {
        guard limit >= 0 else { throw .invalidLimit(limit) }
        return try page(in: channelURL, Self.page(after: message, limit: limit))
    }

    // MARK: - Pages of a channel's messages, in canonical order (binary search, no copy but the page)

    /// The page a call picks out of a channel's messages, from memory or from
    /// its file (decoding only the messages the search looks at, the first
    /// time the channel is wanted).
    func page(in channelURL: String, _ select: CacheEngine.Selection<Message>) throws(FlatCacheError) -> [Message] {
        let file = try layout.messagesFile(forChannel: channelURL)
        guard used(file) else { return [] }
        return try engine.window(file, rule: appendRule, keeping: maxPerChannel, tier: tier, select: select)
    }

    /// The newest `limit`.
    static func latest(limit: Int) -> CacheEngine.Selection<Message> {
        { count, _ in max(0, count - limit)..<count }
    }

    /// The nearest `limit` created before `timestamp` (or at it, `inclusive`).
    static func page(before timestamp: Int64, limit: Int, inclusive: Bool) -> CacheEngine.Selection<Message> {
        { count, record throws(Corruption) in
            let end = try boundary(count) { index throws(Corruption) in
                let createdAt = try record(index).createdAt
                return inclusive ? createdAt > timestamp : createdAt >= timestamp
            }
            return max(0, end - limit)..<end
        }
    }

    /// The nearest `limit` created after `timestamp` (or at it, `inclusive`).
    static func page(after timestamp: Int64, limit: Int, inclusive: Bool) -> CacheEngine.Selection<Message> {
        { count, record throws(Corruption) in
            let start = try boundary(count) { index throws(Corruption) in
                let createdAt = try record(index).createdAt
                return inclusive ? createdAt >= timestamp : createdAt > timestamp
            }
            return start..<min(count, start + limit)
        }
    }

    /// The nearest `limit` before `message` in canonical order.
    static func page(before message: Message, limit: Int) -> CacheEngine.Selection<Message> {
        { count, record throws(Corruption) in
            let end = try boundary(count) { index throws(Corruption) in !CanonicalOrder.precedes(try record(index), message) }
            return max(0, end - limit)..<end
        }
    }

    /// The nearest `limit` after `message` in canonical order.
    static func page(after message: Message, limit: Int) -> CacheEngine.Selection<Message> {
        { count, record throws(Corruption) in
            let start = try boundary(count) { index throws(Corruption) in CanonicalOrder.precedes(message, try record(index)) }
            return start..<min(count, start + limit)
        }
    }

    /// The first index in `0..<count` that is `past` the point, for a test
    /// that is false and then true along the channel's canonical order.
    private static func boundary(_ count: Int, past: (Int) throws(Corruption) -> Bool) throws(Corruption) -> Int {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if try past(middle) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
