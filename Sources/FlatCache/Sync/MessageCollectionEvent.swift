/// What a ``MessageCollection`` tells the chat view, in order, on its
/// ``MessageCollection/events`` stream. Each event changes the list the view
/// shows (``MessageCollection/messages``) the same way: apply them in order
/// and the view matches it.
public enum MessageCollectionEvent<Message: MessageRecord>: Sendable {
    /// The cached page at the starting point, delivered at once by
    /// ``MessageCollection/start()``: the view shows exactly these, oldest first.
    case cachedPage([Message])
    /// The server's page at the starting point replaces everything shown: the
    /// view shows exactly these, oldest first.
    case replaced([Message])
    /// Messages new to the view (a gap filled, a live message), oldest first;
    /// each goes in its place by creation time, then id.
    case added([Message])
    /// Messages shown that changed (an edit); each replaces the one with its id.
    case updated([Message])
    /// Messages shown that were deleted.
    case deleted([Message.MessageID])
    /// The channel's own data changed: reload it from the channel list.
    case channelUpdated
    /// The channel was deleted or left: its cached messages are gone; dispose the collection.
    case channelDeleted
    /// The server has more missing messages after the newest shown than the
    /// collection's ``MessageCollection/hugeGapThreshold``: the collection
    /// stopped paging forward. Dispose it and create a new one from ``MessageCollection/now``,
    /// which shows the server's newest page.
    case hugeGap
    /// Work the collection did on its own (a live event) failed; what it
    /// shows and caches stays true, and ``MessageCollection/sync()`` catches up.
    case failed(FlatCacheError)
}
