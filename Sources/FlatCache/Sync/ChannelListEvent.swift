/// What a ``ChannelListCollection`` tells the channel list view, in order,
/// on its ``ChannelListCollection/events`` stream. Applied in order, they
/// keep the view equal to ``ChannelListCollection/channels``.
public enum ChannelListEvent<Channel: ChannelRecord>: Sendable {
    /// The cached list, delivered at once by ``ChannelListCollection/start()``: most recent last message first.
    case cachedList([Channel])
    /// The server's whole list replaces everything shown.
    case replaced([Channel])
    /// A channel joined or created: it goes in its place by last message.
    case added(Channel)
    /// A channel shown changed (its name, its cover) and stays where it is.
    case updated(Channel)
    /// A channel shown got a new last message, or lost one: it changed and moves to its new place.
    case moved(Channel)
    /// A channel left or deleted: it goes, and its cached messages with it.
    case removed(channelURL: String)
    /// Work the collection did on its own (a live event) failed; call ``ChannelListCollection/sync()``.
    case failed(FlatCacheError)
}
